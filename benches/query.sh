#!/usr/bin/env bash
# query benchmarks, ratios measured side by side in one run on the sandbox. Each ratio is
# taken once per round (the two tools alternate inside a round) and reported as the median of
# the rounds with its distribution-free 95% interval (order statistics of the rounds; 6 rounds
# at least): this machine's noise moves a single round by ±20–30%, so one round proves nothing.
#   1. fidelity: pglab's median time of a statement (run query, N timed executions) against
#      psql's \timing of the same statement N times in one session, under the same settings on
#      the same server (goal: ratio 0.95–1.05), for a ~200 ms aggregate (N = FID_REPEAT) and a
#      one-row primary-key lookup (~0.1 ms, N = FID_REPEAT_FAST). For the lookup the server's
#      backends are pinned to core 0 and both clients to core 1 (taskset, FID_PIN_CPU=S:C;
#      one number pins all to that core; empty: not pinned): at 0.1 ms a round trip is mostly
#      the wake-up of the other side, which on this VM costs ~3× more across cores than on one
#      — unpinned, where the scheduler put the two decided a round's ratio (0.6–1.5), not the
#      clocks. Across cores both tools cross every time, as a client on its own host does, and
#      pglab's other threads share the client's core, not the backend's.
#   2. throughput: `run query --script` against `pgbench -n -f` running the same script
#      (simple protocol, pgbench's default and pglab's) with the same clients, 1, 4 and 16,
#      for TPS_SECONDS each, order rotating round by round: transactions/s ratio (goal
#      ≥ 0.95) and client CPU per transaction — pglab's whole process (setup, EXPLAIN and all)
#      against pgbench's whole process, both from /usr/bin/time (goal ≤ 1.25×); pglab's
#      recorded `client_cpu_s` (the trial's window) is shown beside it.
#   Each round also runs the reference tool a second time (psql, pgbench): the A/A ratio of
#   the two is the noise floor — how far apart two runs of the same tool land in a round on
#   this machine; a pglab ratio within that spread is as close as the machine can tell.
#   3. the three presets' findings as pglab prints them (PRESETS=0 skips).
# Usage: bash benches/query.sh
#   (FID_ROUNDS=21 FID_REPEAT=5 FID_REPEAT_FAST=100 TPS_ROUNDS=7 TPS_SECONDS=5 CLIENTS="1 4 16"
#    PRESETS=1; PARTS="1 2 3" picks parts)
# Each preset's whole output is kept in $PGLAB_DATA_DIR/preset-NAME.txt.
# Needs: cargo, psql, pgbench, python3, /usr/bin/time. Uses its own data dir and sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."
FID_ROUNDS=${FID_ROUNDS:-21}
FID_REPEAT=${FID_REPEAT:-5}
FID_REPEAT_FAST=${FID_REPEAT_FAST:-100}
FID_PIN_CPU=${FID_PIN_CPU-$( (( $(nproc) > 1 )) && echo 0:1 || echo 0)}
TPS_ROUNDS=${TPS_ROUNDS:-7}
TPS_SECONDS=${TPS_SECONDS:-5}
CLIENTS=${CLIENTS:-"1 4 16"}
PRESETS=${PRESETS:-1}
PARTS=${PARTS:-"1 2 3"}
part() { [[ " $PARTS " == *" $1 "* ]]; }
for tool in cargo psql pgbench python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "query.sh needs $tool" >&2; exit 1; }
done
cargo build --release -q
BIN=$PWD/target/release/pglab
unset PGHOST PGPORT PGDATABASE PGUSER
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-qbench.XXXXXX)}
mkdir -p "$PGLAB_DATA_DIR"
chmod 755 "$PGLAB_DATA_DIR"
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
dir=$("$BIN" sandbox status | awk '/^directory:/ {print $2}')
port=$(sed -n 4p "$dir/data/postmaster.pid")
postmaster=$(sed -n 1p "$dir/data/postmaster.pid")
CONN=(-h "$dir" -p "$port" -U pglab)
PSQL=(psql -X -q "${CONN[@]}" pglab)
tmp=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
json() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
# "median [lo, hi]" of the numbers given: the interval is the widest pair of order statistics
# whose coverage of the median is at least 95% (binomial), with that coverage.
ci() {
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

"${PSQL[@]}" <<'SQL'
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.facts, bench.accounts;
CREATE TABLE bench.facts AS SELECT g AS id, g % 1000 AS k, (g * 31 % 997)::float8 AS x FROM generate_series(1, 2000000) g;
CREATE TABLE bench.accounts AS SELECT g AS aid, 0 AS abalance, repeat('x', 84) AS filler FROM generate_series(1, 100000) g;
ALTER TABLE bench.accounts ADD PRIMARY KEY (aid);
VACUUM ANALYZE bench.facts;
VACUUM ANALYZE bench.accounts;
SQL

# psql's session gets the settings of pglab's measuring session: its safety timers
# (statement_timeout, client_connection_check_interval) arm a server timer per statement,
# ~4 µs of a 45 µs lookup on this machine, and "under the same settings" includes them.
SAME_SETTINGS="SET statement_timeout = '5min'; SET lock_timeout = '5s'; SET client_connection_check_interval = '1s';"
fidelity() { # name sql executions [cpu: pin the server's new backends and both clients to it;
             #  S:C pins the backends to core S and the clients to core C]
  local name=$1 sql=$2 n=$3 cpu=${4:-} pg=() ps=() rs=() aa=() pin=()
  if [ -n "$cpu" ]; then
    command -v taskset >/dev/null || { echo "query.sh: taskset is missing, the $name runs unpinned" >&2; cpu=; }
  fi
  local allowed
  allowed=$(taskset -p -c "$postmaster" 2>/dev/null | sed 's/.*: //') || allowed=
  if [ -n "$cpu" ]; then
    taskset -p -c "${cpu%%:*}" "$postmaster" >/dev/null
    pin=(taskset -c "${cpu##*:}")
  fi
  for r in $(seq "$FID_ROUNDS"); do
    { echo "$SAME_SETTINGS"; echo '\timing on'; echo "$sql;"; for i in $(seq "$n"); do echo "$sql;"; done; } >"$tmp/fid.sql"
    for side in $(if (( r % 2 )); then echo pglab psql psql2; else echo psql2 psql pglab; fi); do
      case $side in
        pglab) a=$(${pin[@]+"${pin[@]}"} "$BIN" run query --sql "$sql" --repeat "$n" --no-history --format json 2>/dev/null \
            | json 'sorted(t["seconds"] for t in r["trials"])[len(r["trials"])//2]') ;;
        psql) b=$(${pin[@]+"${pin[@]}"} "${PSQL[@]}" -f "$tmp/fid.sql" | awk '/^Time:/ {print $2 / 1000}' | tail -n "$n" | median) ;;
        psql2) b2=$(${pin[@]+"${pin[@]}"} "${PSQL[@]}" -f "$tmp/fid.sql" | awk '/^Time:/ {print $2 / 1000}' | tail -n "$n" | median) ;;
      esac
    done
    pg+=("$a"); ps+=("$b"); rs+=("$(ratio "$a" "$b")"); aa+=("$(ratio "$b2" "$b")")
  done
  [ -z "$cpu" ] || [ -z "$allowed" ] || taskset -p -c "$allowed" "$postmaster" >/dev/null
  printf '%-10s pglab %s s  psql %s s  ratio %s%s\n           A/A (psql again / psql): %s\n           per round: %s\n' "$name" \
    "$(printf '%s\n' "${pg[@]}" | median)" "$(printf '%s\n' "${ps[@]}" | median)" \
    "$(ci "${rs[@]}")" "${cpu:+, pinned (server:clients) $cpu}" "$(ci "${aa[@]}")" "${rs[*]}"
}
if part 1; then
  echo "== 1. fidelity: pglab's median vs psql \\timing ($FID_ROUNDS rounds, order alternating)"
  fidelity aggregate "SELECT k, sum(x), avg(x) FROM bench.facts GROUP BY k" "$FID_REPEAT"
  fidelity lookup "SELECT abalance FROM bench.accounts WHERE aid = 5000" "$FID_REPEAT_FAST" "$FID_PIN_CPU"
fi

if part 2; then
  echo "== 2. throughput: run query --script vs pgbench -f (${TPS_SECONDS} s each, $TPS_ROUNDS rotating rounds)"
  cat >"$tmp/select.sql" <<'EOF'
\set aid random(1, 100000)
SELECT abalance FROM bench.accounts WHERE aid = :aid;
EOF
  cores=$(nproc)
  pglab_tps() { # clients -> "tps recorded_cpu_s transactions process_cpu_s"
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$BIN" run query --script "$tmp/select.sql" --clients "$1" \
        --duration "${TPS_SECONDS}s" --repeat 1 --no-history --format json 2>/dev/null >"$tmp/out.json"
    local t=$(json 'r["trials"][0]["tps"], r["trials"][0]["client_cpu_s"], r["trials"][0]["transactions"]' <"$tmp/out.json" | tr -d '(),')
    echo "$t $(awk '{print $1 + $2}' "$tmp/time")"
  }
  pgbench_tps() { # clients -> "tps transactions process_cpu_s"
    local j=$(( $1 < cores ? $1 : cores ))
    /usr/bin/time -f '%U %S' -o "$tmp/time" pgbench -n -f "$tmp/select.sql" -c "$1" -j "$j" -T "$TPS_SECONDS" \
        "${CONN[@]}" pglab >"$tmp/pgb.txt" 2>&1
    local tps=$(awk '/^tps = / {print $3; exit}' "$tmp/pgb.txt")
    local tx=$(awk '/number of transactions actually processed/ {print $NF; exit}' "$tmp/pgb.txt")
    echo "$tps ${tx%%/*} $(awk '{print $1 + $2}' "$tmp/time")"
  }
  for c in $CLIENTS; do
    r_tps=(); r_proc=(); p_tps=(); b_tps=(); u_rec=(); u_proc=(); u_pgb=(); a_tps=(); a_proc=()
    for r in $(seq "$TPS_ROUNDS"); do
      if (( r % 2 )); then P=$(pglab_tps "$c"); B=$(pgbench_tps "$c"); B2=$(pgbench_tps "$c")
      else B2=$(pgbench_tps "$c"); B=$(pgbench_tps "$c"); P=$(pglab_tps "$c"); fi
      read -r ptps prec ptx pproc <<<"$P"
      read -r btps btx bproc <<<"$B"
      read -r b2tps b2tx b2proc <<<"$B2"
      a_tps+=("$(ratio "$b2tps" "$btps")")
      a_proc+=("$(awk -v a="$b2proc" -v n="$b2tx" -v b="$bproc" -v m="$btx" 'BEGIN {printf "%.3f", (a / n) / (b / m)}')")
      p_tps+=("$ptps"); b_tps+=("$btps")
      r_tps+=("$(ratio "$ptps" "$btps")")
      rec_us=$(awk -v a="$prec" -v n="$ptx" 'BEGIN {printf "%.2f", a / n * 1e6}')
      proc_us=$(awk -v a="$pproc" -v n="$ptx" 'BEGIN {printf "%.2f", a / n * 1e6}')
      pgb_us=$(awk -v a="$bproc" -v n="$btx" 'BEGIN {printf "%.2f", a / n * 1e6}')
      u_rec+=("$rec_us"); u_proc+=("$proc_us"); u_pgb+=("$pgb_us")
      r_proc+=("$(ratio "$proc_us" "$pgb_us")")
      echo "   $c clients, round $r: pglab $ptps tps ($ptx tx, CPU rec ${prec}s proc ${pproc}s) · pgbench $btps tps ($btx tx, CPU ${bproc}s)" >&2
    done
    med() { printf '%s\n' "$@" | median; }
    printf '%s clients: pglab %.0f tx/s, pgbench %.0f tx/s; CPU per tx pglab %s µs (trial window %s), pgbench %s µs\n' \
      "$c" "$(med "${p_tps[@]}")" "$(med "${b_tps[@]}")" "$(med "${u_proc[@]}")" "$(med "${u_rec[@]}")" "$(med "${u_pgb[@]}")"
    printf '   tx/s ratio (≥ 0.95)       %s\n   CPU/tx ratio (≤ 1.25)     %s\n   A/A pgbench again/pgbench: tx/s %s · CPU/tx %s\n   per round: tx/s %s · CPU %s\n' \
      "$(ci "${r_tps[@]}")" "$(ci "${r_proc[@]}")" "$(ci "${a_tps[@]}")" "$(ci "${a_proc[@]}")" "${r_tps[*]}" "${r_proc[*]}"
  done
fi

if [ "$PRESETS" = 1 ] && part 3; then
  echo "== 3. the presets' findings"
  for p in work-mem-spill random-page-cost jit-aggregate; do
    echo "-- $p"
    "$BIN" run --preset "$p" --no-history 2>/dev/null | tee "$PGLAB_DATA_DIR/preset-$p.txt" \
      | sed -n '/^Findings/,/^Confounders/p' | sed '$d'
  done
  "$BIN" clean --datasets >/dev/null
fi
"${PSQL[@]}" -c "DROP SCHEMA bench CASCADE" >/dev/null
rm -rf "$tmp"
