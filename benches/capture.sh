#!/usr/bin/env bash
# capture benchmarks, side by side in one run on this machine (issue 35):
#   1. capture's own cost on the source: `pglab capture --top 3 --sample 5s` while pgbench runs
#      a known mix there — the queries it sent and its time (as it prints them), and the
#      source's transactions/s in the CAPTURE_S seconds around it against the same window
#      without a capture, ROUNDS rounds alternating (ratio; goal: within the A/A noise).
#   2. replay: the captured file run by `pglab --db SOURCE run query --script w.sql` (each
#      transaction one statement drawn by weight) against `pgbench -n -f s1.sql@w1 -f s2.sql@w2
#      …` of the same statements and weights (the file split by its `-- name:`/`-- weight:`
#      lines), the same clients (CLIENTS), TPS_SECONDS each, order rotating round by round;
#      transactions/s ratio pglab/pgbench as the median of the rounds with its distribution-free
#      95% interval (goal ≥ 0.95), and pgbench run again each round for the A/A noise floor.
# The source is a second PostgreSQL cluster (pglab's sandbox code in its own data dir) with
# pg_stat_statements preloaded and pgbench's tables at scale SCALE; everything is read-only
# there (the mix reads; pglab's replay runs in read-only transactions on a server it did not
# start).
# With BASE_BIN=/path/to/an/older/pglab each round also replays with that binary, beside the
# others, and the ratio this build / that one is given (what a change to the client did).
# The replay's clients (pglab's and pgbench's alike) run on CLIENT_CPUS (`taskset -c`; by
# default the last CPU when there are two or more; CLIENT_CPUS=all leaves them to the
# scheduler). Left to it, a 2-vCPU VM flips every ten seconds or so between two speeds of the
# same run, 1.5x apart: in the slow one the wake-ups of the clients and the server's backends
# cross CPUs and each costs a rescheduling interrupt (thousands a second, against a few in the
# fast one), so which tool lands where decides a paired round more than the tool does. Each
# run prints those interrupts per second (RES in /proc/interrupts) beside its figures.
# Usage: bash benches/capture.sh   (SCALE=10 ROUNDS=5 TPS_SECONDS=5 CLIENTS="1 4" CAPTURE_S=5
#                                    BASE_BIN= COST_ROUNDS=$ROUNDS: part 1's rounds
#                                    CLIENT_CPUS=<last cpu>|all)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-5}
COST_ROUNDS=${COST_ROUNDS:-$ROUNDS}
TPS_SECONDS=${TPS_SECONDS:-5}
CLIENTS=${CLIENTS:-1 4}
CAPTURE_S=${CAPTURE_S:-5}
for tool in cargo psql pgbench python3 /usr/bin/time taskset; do
  command -v "$tool" >/dev/null || { echo "capture.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q --bin pglab
BIN=$PWD/target/release/pglab
unset PGHOST PGPORT PGDATABASE PGUSER
OUT=${OUT:-$(mktemp -d /tmp/pglab-capture-bench.XXXXXX)}
chmod 755 "$OUT"
export PGLAB_CONFIG_DIR=$OUT/config
SRC=(env PGLAB_DATA_DIR="$OUT/src" "$BIN")
"${SRC[@]}" sandbox start >/dev/null
trap '"${SRC[@]}" sandbox destroy >/dev/null' EXIT
sdir=$("${SRC[@]}" sandbox status | awk '/^directory:/ {print $2}')
port() { sed -n 4p "$sdir/data/postmaster.pid"; }
PSQL() { psql -X -q -v ON_ERROR_STOP=1 -h "$sdir" -p "$(port)" -U pglab pglab "$@"; }
echo "== the source: pg_stat_statements preloaded, pgbench tables at scale $SCALE"
PSQL -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" >/dev/null
"${SRC[@]}" sandbox stop >/dev/null
"${SRC[@]}" sandbox start >/dev/null
PSQL -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
pgbench -i -q -s "$SCALE" -h "$sdir" -p "$(port)" -U pglab pglab >/dev/null 2>&1
PSQL -c "VACUUM ANALYZE" >/dev/null
FROM="host=$sdir port=$(port) user=pglab dbname=pglab"
accounts=$((SCALE * 100000))
cat >"$OUT/a.sql" <<EOF
\set aid random(1, $accounts)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
EOF
cat >"$OUT/b.sql" <<EOF
\set lo random(1, $((accounts - 100)))
SELECT sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN :lo AND :lo + 100;
EOF
cat >"$OUT/c.sql" <<EOF
\set tid random(1, $((SCALE * 10)))
SELECT tbalance, bid FROM pgbench_tellers WHERE tid = :tid;
EOF
MIX=(-f "$OUT/a.sql@6" -f "$OUT/b.sql@3" -f "$OUT/c.sql@1")
cores=$(nproc)
CLIENT_CPUS=${CLIENT_CPUS-$(( cores > 1 ? cores - 1 : 0 ))}
PIN=()
[[ "$CLIENT_CPUS" != all && "$cores" -gt 1 ]] && PIN=(taskset -c "$CLIENT_CPUS")
bench_tps() { # seconds clients → tps of the mix on the source
  local j=$(( $2 < cores ? $2 : cores ))
  pgbench -n "${MIX[@]}" -c "$2" -j "$j" -T "$1" -h "$sdir" -p "$(port)" -U pglab pglab 2>&1 \
    | awk '/^tps = / {print $3; exit}'
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
ci() { # "median [lo, hi]": the widest order statistics covering the median with ≥ 95%
  python3 - "$@" <<'PY'
import math, sys
xs = sorted(float(x) for x in sys.argv[1:])
n = len(xs)
med = (xs[(n - 1) // 2] + xs[n // 2]) / 2
cdf = lambda k: sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
j = 0
while j + 1 <= n // 2 and 1 - 2 * cdf(j) >= 0.95:
    j += 1
if j == 0:
    print(f"{med:.3f} (no 95% interval from {n} rounds)")
else:
    print(f"{med:.3f} [{xs[j - 1]:.3f}, {xs[n - j]:.3f}] ({100 * (1 - 2 * cdf(j - 1)):.1f}%, {n} rounds)")
PY
}

echo "== 1. capture's cost on the source (pgbench mix at 2 clients, $CAPTURE_S s windows, $COST_ROUNDS rounds)"
PSQL -c "SELECT pg_stat_statements_reset()" >/dev/null
bench_tps 10 2 >/dev/null # the mix in pg_stat_statements, the caches warm
with=(); without=(); aa=()
for r in $(seq "$COST_ROUNDS"); do
  # With: the capture samples while pgbench runs (started together, the capture's sample the
  # window's length); without: the same window twice (the A/A).
  (sleep 0.2; "$BIN" capture --db "$FROM" --top 3 --sample "${CAPTURE_S}s" --out "$OUT/w.sql" \
      >"$OUT/capture.txt" 2>"$OUT/capture.err") &
  w=$(bench_tps "$CAPTURE_S" 2); wait
  a=$(bench_tps "$CAPTURE_S" 2); b=$(bench_tps "$CAPTURE_S" 2)
  with+=("$(ratio "$w" "$a")"); aa+=("$(ratio "$b" "$a")")
  echo "   round $r: with capture $w tps, without $a and $b tps" >&2
done
grep -h "capture's cost" "$OUT/w.sql" | sed 's/^-- /   /'
head -n 4 "$OUT/capture.txt" | sed 's/^/   /'
printf "   source tps with a capture / without: %s\n   A/A without / without:            %s\n" \
  "$(ci "${with[@]}")" "$(ci "${aa[@]}")"

echo "== 2. replay: run query --script w.sql vs pgbench -f of the same statements and weights"
# pgbench runs a script per value set (pglab runs the statement's -- set: lines in turn): each
# set's script weighs the statement's weight over its sets, so both draw the same statements
# with the same values as often. pgbench takes at most 128 scripts; past that the sets are
# left out of both (the file replayed without its -- set: lines).
python3 - "$OUT/w.sql" "$OUT" >"$OUT/pgbench-args" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
out, blocks, cur = sys.argv[2], [], None
for line in text.splitlines():
    if line.startswith("-- name: "):
        cur = {"name": line[9:].strip(), "weight": 1, "sql": [], "norm": None, "sets": []}
        blocks.append(cur)
    elif cur is None:
        continue
    elif line.startswith("-- weight: "):
        cur["weight"] = int(line[11:])
    elif line.startswith("-- normalized: "):
        cur["norm"] = line[15:]
    elif line.startswith("-- set: "):
        cur["sets"].append(dict(re.findall(r"\$(\d+) = ('(?:[^']|'')*'|[^,]+)", line[8:])))
    elif line and not line.startswith("--"):
        cur["sql"].append(line)
fill = lambda norm, vals: re.sub(r"\$(\d+)", lambda m: vals[m.group(1)].strip(), norm)
if sum(max(1, len(b["sets"])) for b in blocks) > 128:
    for b in blocks:
        b["sets"] = []
    kept = [l for l in text.splitlines() if not l.startswith("-- set: ")]
    open(f"{out}/w.sql", "w").write("\n".join(kept) + "\n")
    print("   over 128 scripts: value sets left out of both tools", file=sys.stderr)
args = []
for b in blocks:
    texts = [fill(b["norm"], v) for v in b["sets"]] or ["\n".join(b["sql"])]
    for k, sql in enumerate(texts):
        path = f"{out}/replay-{b['name']}-{k}.sql"
        open(path, "w").write(sql.rstrip(";") + ";\n")
        args += ["-f", f"{path}@{max(1, round(b['weight'] * 1000 / len(texts)))}"]
print(" ".join(args))
PY
read -r -a REPLAY <"$OUT/pgbench-args"
echo "   $(grep -c '^-- name: ' "$OUT/w.sql") statements, weights: $(grep '^-- weight: ' "$OUT/w.sql" | awk '{print $3}' | paste -sd' '); $(grep -c '^-- set: ' "$OUT/w.sql") value sets; pgbench: $(( ${#REPLAY[@]} / 2 )) scripts"
# Each run prints "tx/s transactions cpu-seconds ipis/s": the client's own CPU (user + system,
# from /usr/bin/time) beside its throughput, and the host's rescheduling interrupts per second
# of the run. On a 2-core host the clients share the cores with the server, so a client that
# costs more CPU per transaction leaves the server less. pglab's CPU includes its setup
# (connecting, checking the statements): counted against it.
ipis() { awk '$1 == "RES:" {for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i} END {print s + 0}' /proc/interrupts 2>/dev/null || echo 0; }
timed() { # command… → its output, then " ipis/s" of its run
  local i0 t0 out
  i0=$(ipis); t0=$(date +%s.%N)
  out=$("$@")
  awk -v o="$out" -v i="$(( $(ipis) - i0 ))" -v t="$(date +%s.%N)" -v t0="$t0" \
    'BEGIN {printf "%s %.0f\n", o, i / (t - t0)}'
}
pglab_run() { # clients [binary]
  "${PIN[@]}" /usr/bin/time -f "%U %S" -o "$OUT/time" "${2:-$BIN}" --db "$FROM" run query \
      --script "$OUT/w.sql" --clients "$1" --duration "${TPS_SECONDS}s" --repeat 1 --no-history \
      --format json >"$OUT/run.json" 2>/dev/null
  python3 - "$OUT/run.json" "$OUT/time" <<'PY2'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
u, s = (float(x) for x in open(sys.argv[2]).read().split()[-2:])
print(t["tps"], t["transactions"], u + s)
PY2
}
pgbench_run() {
  local j=$(( $1 < cores ? $1 : cores ))
  "${PIN[@]}" /usr/bin/time -f "%U %S" -o "$OUT/time" pgbench -n "${REPLAY[@]}" -c "$1" -j "$j" \
      -T "$TPS_SECONDS" -h "$sdir" -p "$(port)" -U pglab pglab >"$OUT/pgbench.txt" 2>&1
  awk -v cpu="$(awk '{print $1 + $2}' "$OUT/time" | tail -1)" '
    /^number of transactions actually processed:/ {n = $NF}
    /^tps = / {tps = $3} END {print tps, n, cpu}' "$OUT/pgbench.txt"
}
pglab_tps() { timed pglab_run "$@"; }
pgbench_tps() { timed pgbench_run "$@"; }
us_per_tx() { awk '{printf "%.2f", $3 / $2 * 1e6}' <<<"$1"; }
ipi_of() { awk '{print $4}' <<<"$1"; }
over() { awk -v n="$1" '$1 > n {k++} END {print k + 0}'; } # how many of stdin's numbers pass n
if (( ${#PIN[@]} )); then echo "   the clients of both tools on CPU $CLIENT_CPUS (taskset -c)"
else echo "   the clients of both tools left to the scheduler (CLIENT_CPUS=all or 1 CPU)"; fi
for c in $CLIENTS; do
  o_tps=(); o_cpu=(); r_tps=(); a_tps=(); p_all=(); b_all=(); r_cpu=(); a_cpu=(); pc_all=(); bc_all=()
  p_ipi=(); b_ipi=()
  for r in $(seq "$ROUNDS"); do
    base() { [[ -n "${BASE_BIN:-}" ]] && pglab_tps "$c" "$BASE_BIN" || echo "0 1 0 0"; }
    if (( r % 2 )); then P=$(pglab_tps "$c"); B=$(pgbench_tps "$c"); O=$(base); B2=$(pgbench_tps "$c")
    else B2=$(pgbench_tps "$c"); O=$(base); B=$(pgbench_tps "$c"); P=$(pglab_tps "$c"); fi
    if [[ -n "${BASE_BIN:-}" ]]; then
      o_tps+=("$(ratio "${P%% *}" "${O%% *}")"); o_cpu+=("$(ratio "$(us_per_tx "$P")" "$(us_per_tx "$O")")")
      echo "   $c clients, round $r: base pglab ${O%% *} tps ($(us_per_tx "$O") µs CPU/tx)" >&2
    fi
    r_tps+=("$(ratio "${P%% *}" "${B%% *}")"); a_tps+=("$(ratio "${B2%% *}" "${B%% *}")")
    p_all+=("${P%% *}"); b_all+=("${B%% *}")
    pc=$(us_per_tx "$P"); bc=$(us_per_tx "$B"); bc2=$(us_per_tx "$B2")
    r_cpu+=("$(ratio "$pc" "$bc")"); a_cpu+=("$(ratio "$bc2" "$bc")"); pc_all+=("$pc"); bc_all+=("$bc")
    p_ipi+=("$(ipi_of "$P")"); b_ipi+=("$(ipi_of "$B")" "$(ipi_of "$B2")")
    echo "   $c clients, round $r: pglab ${P%% *} tps ($pc µs CPU/tx, $(ipi_of "$P") IPIs/s) · pgbench ${B%% *} and ${B2%% *} tps ($bc, $bc2 µs CPU/tx; $(ipi_of "$B"), $(ipi_of "$B2") IPIs/s)" >&2
  done
  printf '   %s clients: pglab %.0f tx/s, pgbench %.0f tx/s; client CPU per transaction %s vs %s µs (medians)\n' "$c" \
    "$(printf '%s\n' "${p_all[@]}" | median)" "$(printf '%s\n' "${b_all[@]}" | median)" \
    "$(printf '%s\n' "${pc_all[@]}" | median)" "$(printf '%s\n' "${bc_all[@]}" | median)"
  printf '     tx/s ratio pglab/pgbench (≥ 0.95) %s\n     A/A pgbench again/pgbench         %s\n' \
    "$(ci "${r_tps[@]}")" "$(ci "${a_tps[@]}")"
  printf '     CPU/tx ratio pglab/pgbench        %s\n     A/A pgbench again/pgbench         %s\n' \
    "$(ci "${r_cpu[@]}")" "$(ci "${a_cpu[@]}")"
  printf '     rescheduling IPIs/s (medians) pglab %s, pgbench %s; runs past 1000/s: pglab %s of %s, pgbench %s of %s\n' \
    "$(printf '%s\n' "${p_ipi[@]}" | median)" "$(printf '%s\n' "${b_ipi[@]}" | median)" \
    "$(printf '%s\n' "${p_ipi[@]}" | over 1000)" "${#p_ipi[@]}" \
    "$(printf '%s\n' "${b_ipi[@]}" | over 1000)" "${#b_ipi[@]}"
  if [[ -n "${BASE_BIN:-}" ]]; then
    printf '     tx/s ratio this pglab/BASE_BIN    %s\n     CPU/tx ratio this pglab/BASE_BIN  %s\n' \
      "$(ci "${o_tps[@]}")" "$(ci "${o_cpu[@]}")"
  fi
done
