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
#   2. throughput: `run query --script --protocol M` against `pgbench -n -M M -f` running the
#      same script, for each of pgbench's three modes M (simple, extended, prepared; MODES)
#      and 1, 4 and 16 clients, TPS_SECONDS each, in interleaved rounds (the round the outer
#      loop, the tools' order alternating inside it), both tools' clients pinned to
#      CLIENT_CPUS (taskset, as benches/capture.sh): transactions/s ratio (goal ≥ 0.95) and
#      client CPU per transaction — pglab's whole process (setup, EXPLAIN and all) against
#      pgbench's whole process, both from /usr/bin/time (goal ≤ 1.25×); pglab's recorded
#      `client_cpu_s` (the trial's window) is shown beside it. The load average is printed
#      before, after and on every round's line; the cells end as a Markdown table.
#   Each round also runs the reference tool a second time (psql, pgbench): the A/A ratio of
#   the two is the noise floor — how far apart two runs of the same tool land in a round on
#   this machine; a pglab ratio within that spread is as close as the machine can tell.
#   3. the three presets' findings as pglab prints them (PRESETS=0 skips).
# Usage: bash benches/query.sh
#   (FID_ROUNDS=21 FID_REPEAT=5 FID_REPEAT_FAST=100 TPS_ROUNDS=7 TPS_SECONDS=5 CLIENTS="1 4 16"
#    MODES="simple extended prepared" CLIENT_CPUS=<last cpu>|all SERVER_CPUS= PRESETS=1 PGLAB_BIN=;
#    PARTS="1 2 3" picks parts)
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
MODES=${MODES:-"simple extended prepared"}
PRESETS=${PRESETS:-1}
PARTS=${PARTS:-"1 2 3"}
part() { [[ " $PARTS " == *" $1 "* ]]; }
for tool in cargo psql pgbench python3 /usr/bin/time taskset; do
  command -v "$tool" >/dev/null || { echo "query.sh needs $tool" >&2; exit 1; }
done
# PGLAB_BIN=/path/to/pglab runs that binary instead of building a release one (a figure from
# anything but a release build says nothing of pglab's speed: label it so).
if [ -n "${PGLAB_BIN:-}" ]; then
  BIN=$PGLAB_BIN
else
  cargo build --release -q
  BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/pglab
fi
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
  echo "== 2. throughput: run query --script --protocol M vs pgbench -M M -f, M = $MODES (${TPS_SECONDS} s each, $TPS_ROUNDS interleaved rounds)"
  echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
  cat >"$tmp/select.sql" <<'EOF'
\set aid random(1, 100000)
SELECT abalance FROM bench.accounts WHERE aid = :aid;
EOF
  cores=$(nproc)
  # Both tools' clients on CLIENT_CPUS (taskset -c; by default the last CPU when there are two
  # or more; CLIENT_CPUS=all leaves them to the scheduler), as benches/capture.sh pins them:
  # left to it, where the clients and the backends land decides a round more than the tool.
  CLIENT_CPUS=${CLIENT_CPUS-$(( cores > 1 ? cores - 1 : 0 ))}
  PIN=()
  [[ "$CLIENT_CPUS" != all && "$cores" -gt 1 ]] && PIN=(taskset -c "$CLIENT_CPUS")
  if (( ${#PIN[@]} )); then echo "   the clients of both tools on CPU $CLIENT_CPUS (taskset -c)"
  else echo "   the clients of both tools left to the scheduler"; fi
  # SERVER_CPUS=S pins the server's new backends to S (the postmaster's affinity, which each
  # backend inherits when it forks), as part 1 does for the lookup: where the scheduler puts a
  # backend, beside its client or across, moves a 1-client round more than either tool does.
  # Empty (the default): the backends are left to the scheduler.
  SERVER_CPUS=${SERVER_CPUS-}
  server_allowed=
  if [ -n "$SERVER_CPUS" ]; then
    server_allowed=$(taskset -p -c "$postmaster" 2>/dev/null | sed 's/.*: //')
    taskset -p -c "$SERVER_CPUS" "$postmaster" >/dev/null
    echo "   the server's backends on CPU $SERVER_CPUS (the postmaster's affinity)"
  fi
  pglab_tps() { # clients mode -> "tps recorded_cpu_s transactions process_cpu_s"
    ${PIN[@]+"${PIN[@]}"} /usr/bin/time -f '%U %S' -o "$tmp/time" "$BIN" run query --script "$tmp/select.sql" \
        --clients "$1" --protocol "$2" --duration "${TPS_SECONDS}s" --repeat 1 --no-history --format json \
        2>/dev/null >"$tmp/out.json"
    local t=$(json 'r["trials"][0]["tps"], r["trials"][0]["client_cpu_s"], r["trials"][0]["transactions"]' <"$tmp/out.json" | tr -d '(),')
    echo "$t $(awk '{print $1 + $2}' "$tmp/time")"
  }
  pgbench_tps() { # clients mode -> "tps transactions process_cpu_s"
    local j=$(( $1 < cores ? $1 : cores ))
    ${PIN[@]+"${PIN[@]}"} /usr/bin/time -f '%U %S' -o "$tmp/time" pgbench -n -M "$2" -f "$tmp/select.sql" -c "$1" -j "$j" \
        -T "$TPS_SECONDS" "${CONN[@]}" pglab >"$tmp/pgb.txt" 2>&1
    local tps=$(awk '/^tps = / {print $3; exit}' "$tmp/pgb.txt")
    local tx=$(awk '/number of transactions actually processed/ {print $NF; exit}' "$tmp/pgb.txt")
    echo "$tps ${tx%%/*} $(awk '{print $1 + $2}' "$tmp/time")"
  }
  per_tx() { awk -v a="$1" -v n="$2" 'BEGIN {printf "%.2f", a / n * 1e6}'; }
  # Per cell (clients/mode), space-separated over the rounds. Rounds are the outer loop, so a
  # drift of the machine spreads over every cell alike; inside a round the order of the two
  # tools alternates, and pgbench runs twice (the A/A noise floor).
  declare -A R_TPS R_CPU P_TPS B_TPS U_PROC U_REC U_PGB A_TPS A_CPU
  for r in $(seq "$TPS_ROUNDS"); do
    for c in $CLIENTS; do
      for m in $MODES; do
        k="$c/$m"
        if (( r % 2 )); then P=$(pglab_tps "$c" "$m"); B=$(pgbench_tps "$c" "$m"); B2=$(pgbench_tps "$c" "$m")
        else B2=$(pgbench_tps "$c" "$m"); B=$(pgbench_tps "$c" "$m"); P=$(pglab_tps "$c" "$m"); fi
        read -r ptps prec ptx pproc <<<"$P"
        read -r btps btx bproc <<<"$B"
        read -r b2tps b2tx b2proc <<<"$B2"
        proc_us=$(per_tx "$pproc" "$ptx"); pgb_us=$(per_tx "$bproc" "$btx")
        R_TPS[$k]+=" $(ratio "$ptps" "$btps")"; R_CPU[$k]+=" $(ratio "$proc_us" "$pgb_us")"
        P_TPS[$k]+=" $ptps"; B_TPS[$k]+=" $btps"
        U_PROC[$k]+=" $proc_us"; U_REC[$k]+=" $(per_tx "$prec" "$ptx")"; U_PGB[$k]+=" $pgb_us"
        A_TPS[$k]+=" $(ratio "$b2tps" "$btps")"
        A_CPU[$k]+=" $(ratio "$(per_tx "$b2proc" "$b2tx")" "$pgb_us")"
        echo "   round $r, $c clients, -M $m: pglab $ptps tps ($ptx tx, CPU ${pproc}s) · pgbench $btps and $b2tps tps ($btx tx, CPU ${bproc}s) · load $(cut -d' ' -f1 /proc/loadavg)" >&2
      done
    done
  done
  echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  [ -z "$server_allowed" ] || taskset -p -c "$server_allowed" "$postmaster" >/dev/null
  med() { printf '%s\n' $1 | median; }
  echo
  echo "| clients | -M | pglab tx/s | pgbench tx/s | tx/s pglab/pgbench (≥ 0.95) | A/A pgbench/pgbench | client CPU µs/tx pglab (trial window) · pgbench | CPU/tx pglab/pgbench (≤ 1.25) | A/A CPU/tx |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for c in $CLIENTS; do
    for m in $MODES; do
      k="$c/$m"
      # shellcheck disable=SC2086
      printf '| %s | %s | %.0f | %.0f | %s | %s | %s (%s) · %s | %s | %s |\n' "$c" "$m" \
        "$(med "${P_TPS[$k]}")" "$(med "${B_TPS[$k]}")" "$(ci ${R_TPS[$k]})" "$(ci ${A_TPS[$k]})" \
        "$(med "${U_PROC[$k]}")" "$(med "${U_REC[$k]}")" "$(med "${U_PGB[$k]}")" "$(ci ${R_CPU[$k]})" \
        "$(ci ${A_CPU[$k]})"
    done
  done
  echo
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
