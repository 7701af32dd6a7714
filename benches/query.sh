#!/usr/bin/env bash
# query benchmarks, ratios measured side by side in one run on the sandbox:
#   1. fidelity: pglab's median time of a statement (run query, FID_REPEAT timed executions)
#      against psql's \timing of the same statement FID_REPEAT times in one session, under the
#      same settings on the same server, alternating over FID_ROUNDS rounds (goal: median
#      ratio 0.95–1.05), for a ~200 ms aggregate and a one-row primary-key lookup (tens of µs).
#   2. throughput: `run query --script` against `pgbench -n -f` running the same script
#      (simple protocol, pgbench's default and pglab's) with the same clients, 1, 4 and 16,
#      for TPS_SECONDS each, rotating order over TPS_ROUNDS rounds: transactions/s ratio (goal
#      ≥ 0.95) and client CPU per transaction — pglab's recorded `client_cpu_s` (the trial's
#      window) and its whole process (setup, EXPLAIN and all) against pgbench's whole process,
#      both from /usr/bin/time (goal ≤ 1.25×).
#   3. the three presets' findings as pglab prints them (PRESETS=0 skips).
# Usage: bash benches/query.sh   (FID_ROUNDS=5 TPS_ROUNDS=3 TPS_SECONDS=5 PRESETS=1)
# Each preset's whole output is kept in $PGLAB_DATA_DIR/preset-NAME.txt.
# Needs: cargo, psql, pgbench, python3, /usr/bin/time. Uses its own data dir and sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."
FID_ROUNDS=${FID_ROUNDS:-5}
FID_REPEAT=${FID_REPEAT:-5}
TPS_ROUNDS=${TPS_ROUNDS:-3}
TPS_SECONDS=${TPS_SECONDS:-5}
CLIENTS=${CLIENTS:-"1 4 16"}
PRESETS=${PRESETS:-1}
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
CONN=(-h "$dir" -p "$port" -U pglab)
PSQL=(psql -X -q "${CONN[@]}" pglab)
tmp=$(mktemp -d)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
json() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }

"${PSQL[@]}" <<'SQL'
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.facts, bench.accounts;
CREATE TABLE bench.facts AS SELECT g AS id, g % 1000 AS k, (g * 31 % 997)::float8 AS x FROM generate_series(1, 2000000) g;
CREATE TABLE bench.accounts AS SELECT g AS aid, 0 AS abalance, repeat('x', 84) AS filler FROM generate_series(1, 100000) g;
ALTER TABLE bench.accounts ADD PRIMARY KEY (aid);
VACUUM ANALYZE bench.facts;
VACUUM ANALYZE bench.accounts;
SQL

echo "== 1. fidelity: pglab's median vs psql \\timing (median of $FID_REPEAT each, $FID_ROUNDS alternating rounds)"
fidelity() { # name sql
  local name=$1 sql=$2 pg=() ps=() rs=()
  for r in $(seq "$FID_ROUNDS"); do
    a=$("$BIN" run query --sql "$sql" --repeat "$FID_REPEAT" --no-history --format json 2>/dev/null \
        | json 'sorted(t["seconds"] for t in r["trials"])[len(r["trials"])//2]')
    { echo '\timing on'; echo "$sql;"; for i in $(seq "$FID_REPEAT"); do echo "$sql;"; done; } >"$tmp/fid.sql"
    b=$("${PSQL[@]}" -f "$tmp/fid.sql" | awk '/^Time:/ {print $2 / 1000}' | tail -n "$FID_REPEAT" | median)
    pg+=("$a"); ps+=("$b"); rs+=("$(ratio "$a" "$b")")
  done
  printf '%-10s pglab %s s  psql %s s  ratio %s   (per round: %s)\n' "$name" \
    "$(printf '%s\n' "${pg[@]}" | median)" "$(printf '%s\n' "${ps[@]}" | median)" \
    "$(printf '%s\n' "${rs[@]}" | median)" "${rs[*]}"
}
fidelity aggregate "SELECT k, sum(x), avg(x) FROM bench.facts GROUP BY k"
fidelity lookup "SELECT abalance FROM bench.accounts WHERE aid = 5000"

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
printf '%-8s %10s %12s %6s   %-30s %6s %6s\n' clients "pglab tps" "pgbench tps" ratio "CPU/tx µs: rec · proc · pgbench" "rec ×" "proc ×"
for c in $CLIENTS; do
  r_tps=(); r_rec=(); r_proc=(); p_tps=(); b_tps=(); u_rec=(); u_proc=(); u_pgb=()
  for r in $(seq "$TPS_ROUNDS"); do
    if (( r % 2 )); then P=$(pglab_tps "$c"); B=$(pgbench_tps "$c"); else B=$(pgbench_tps "$c"); P=$(pglab_tps "$c"); fi
    read -r ptps prec ptx pproc <<<"$P"
    read -r btps btx bproc <<<"$B"
    p_tps+=("$ptps"); b_tps+=("$btps")
    r_tps+=("$(ratio "$ptps" "$btps")")
    rec_us=$(awk -v a="$prec" -v n="$ptx" 'BEGIN {printf "%.2f", a / n * 1e6}')
    proc_us=$(awk -v a="$pproc" -v n="$ptx" 'BEGIN {printf "%.2f", a / n * 1e6}')
    pgb_us=$(awk -v a="$bproc" -v n="$btx" 'BEGIN {printf "%.2f", a / n * 1e6}')
    u_rec+=("$rec_us"); u_proc+=("$proc_us"); u_pgb+=("$pgb_us")
    r_rec+=("$(ratio "$rec_us" "$pgb_us")"); r_proc+=("$(ratio "$proc_us" "$pgb_us")")
    echo "   $c clients, round $r: pglab $ptps tps ($ptx tx, CPU rec ${prec}s proc ${pproc}s) · pgbench $btps tps ($btx tx, CPU ${bproc}s)" >&2
  done
  med() { printf '%s\n' "$@" | median; }
  printf '%-8s %10.0f %12.0f %6s   %-30s %6s %6s   (tps ratios %s)\n' "$c" "$(med "${p_tps[@]}")" "$(med "${b_tps[@]}")" \
    "$(med "${r_tps[@]}")" "$(med "${u_rec[@]}") · $(med "${u_proc[@]}") · $(med "${u_pgb[@]}")" \
    "$(med "${r_rec[@]}")" "$(med "${r_proc[@]}")" "${r_tps[*]}"
done

if [ "$PRESETS" = 1 ]; then
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
