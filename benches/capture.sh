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
# Usage: bash benches/capture.sh   (SCALE=10 ROUNDS=5 TPS_SECONDS=5 CLIENTS="1 4" CAPTURE_S=5)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-10}
ROUNDS=${ROUNDS:-5}
TPS_SECONDS=${TPS_SECONDS:-5}
CLIENTS=${CLIENTS:-1 4}
CAPTURE_S=${CAPTURE_S:-5}
for tool in cargo psql pgbench python3; do
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

echo "== 1. capture's cost on the source (pgbench mix at 2 clients, $CAPTURE_S s windows, $ROUNDS rounds)"
PSQL -c "SELECT pg_stat_statements_reset()" >/dev/null
bench_tps 10 2 >/dev/null # the mix in pg_stat_statements, the caches warm
with=(); without=(); aa=()
for r in $(seq "$ROUNDS"); do
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
python3 - "$OUT/w.sql" "$OUT" >"$OUT/pgbench-args" <<'PY'
import sys
text = open(sys.argv[1]).read()
out, blocks, cur = sys.argv[2], [], None
for line in text.splitlines():
    if line.startswith("-- name: "):
        cur = {"name": line[9:].strip(), "weight": 1, "sql": []}
        blocks.append(cur)
    elif cur is not None and line.startswith("-- weight: "):
        cur["weight"] = int(line[11:])
    elif cur is not None and line and not line.startswith("--"):
        cur["sql"].append(line)
args = []
for b in blocks:
    path = f"{out}/replay-{b['name']}.sql"
    open(path, "w").write("\n".join(b["sql"]) + "\n")
    args += ["-f", f"{path}@{b['weight']}"]
print(" ".join(args))
PY
read -r -a REPLAY <"$OUT/pgbench-args"
echo "   $(grep -c '^-- name: ' "$OUT/w.sql") statements, weights: $(grep '^-- weight: ' "$OUT/w.sql" | awk '{print $3}' | paste -sd' ')"
pglab_tps() {
  "$BIN" --db "$FROM" run query --script "$OUT/w.sql" --clients "$1" --duration "${TPS_SECONDS}s" \
      --repeat 1 --no-history --format json 2>/dev/null \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['trials'][0]['tps'])"
}
pgbench_tps() {
  local j=$(( $1 < cores ? $1 : cores ))
  pgbench -n "${REPLAY[@]}" -c "$1" -j "$j" -T "$TPS_SECONDS" -h "$sdir" -p "$(port)" -U pglab pglab 2>&1 \
    | awk '/^tps = / {print $3; exit}'
}
for c in $CLIENTS; do
  r_tps=(); a_tps=(); p_all=(); b_all=()
  for r in $(seq "$ROUNDS"); do
    if (( r % 2 )); then P=$(pglab_tps "$c"); B=$(pgbench_tps "$c"); B2=$(pgbench_tps "$c")
    else B2=$(pgbench_tps "$c"); B=$(pgbench_tps "$c"); P=$(pglab_tps "$c"); fi
    r_tps+=("$(ratio "$P" "$B")"); a_tps+=("$(ratio "$B2" "$B")"); p_all+=("$P"); b_all+=("$B")
    echo "   $c clients, round $r: pglab $P tps · pgbench $B and $B2 tps" >&2
  done
  printf '   %s clients: pglab %.0f tx/s, pgbench %.0f tx/s (medians)\n' "$c" \
    "$(printf '%s\n' "${p_all[@]}" | median)" "$(printf '%s\n' "${b_all[@]}" | median)"
  printf '     tx/s ratio pglab/pgbench (≥ 0.95) %s\n     A/A pgbench again/pgbench         %s\n' \
    "$(ci "${r_tps[@]}")" "$(ci "${a_tps[@]}")"
done
