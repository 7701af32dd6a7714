#!/usr/bin/env bash
# index-build benchmarks, ratios side by side in one run on the sandbox:
#   1. fidelity: pglab's `seconds` vs psql's \timing for the same CREATE INDEX on the same
#      table (alternating, 5 each; goal: median ratio 0.98–1.02)
#   2. observer effect: build time with progress polling on vs off (goal: < 1% slower)
#   3. preparation: pglab's random dataset vs the original post's method with psql (doubling
#      INSERT … SELECT, then CREATE TABLE … AS … ORDER BY random()) for 2^23 rows (goal: ≥ 2×)
#   4. the Cybertec sweep at 10M rows (sorted and random, 1MB..4GB*4, 3 repeats) — SWEEP=0 skips
# Usage: bash benches/index_build.sh   (ROWS=5M for the fidelity table; SWEEP=1 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=$PWD/target/release/pglab
ROWS=${ROWS:-5M}
SWEEP=${SWEEP:-1}
unset PGHOST PGPORT PGDATABASE
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-ibbench.XXXXXX)}
chmod 755 "$PGLAB_DATA_DIR"
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
dir=$("$BIN" sandbox status | awk '/^directory:/ {print $2}')
port=$(sed -n 4p "$dir/data/postmaster.pid")
PSQL=(psql -X -q -h "$dir" -p "$port" -U pglab pglab)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
pglab_secs() { "$BIN" run index-build --rows "$ROWS" --order random --mwm 64MB --repeat 1 --no-history --format json "$@" 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["trials"][0]["seconds"])'; }

echo "== preparing $ROWS random rows"
pglab_secs >/dev/null
table=$("${PSQL[@]}" -At -c "SELECT relname FROM pg_class WHERE relname LIKE 'ib_int4_random_%_s42' ORDER BY relpages DESC LIMIT 1")

echo "== 1. fidelity (pglab seconds vs psql \\timing, alternating)"
pg=(); ps=()
for i in 1 2 3 4 5; do
  pg+=("$(pglab_secs)")
  ms=$("${PSQL[@]}" -c "CHECKPOINT" -c "SET maintenance_work_mem = '64MB'" -c "SET max_parallel_maintenance_workers = 0" \
        -c '\timing on' -c "CREATE INDEX bench_idx ON pglab.$table (id)" -c '\timing off' -c "DROP INDEX pglab.bench_idx" | awk '/^Time:/ {print $2; exit}')
  ps+=("$(awk -v m="$ms" 'BEGIN {print m / 1000}')")
done
a=$(printf '%s\n' "${pg[@]}" | median); b=$(printf '%s\n' "${ps[@]}" | median)
echo "pglab median ${a}s  psql median ${b}s  ratio $(ratio "$a" "$b")   (pglab: ${pg[*]} | psql: ${ps[*]})"

echo "== 2. observer effect (polling on vs off, alternating)"
on=(); off=()
for i in 1 2 3 4 5; do
  on+=("$(pglab_secs)")
  off+=("$(pglab_secs --no-progress-poll)")
done
a=$(printf '%s\n' "${on[@]}" | median); b=$(printf '%s\n' "${off[@]}" | median)
echo "polling on ${a}s  off ${b}s  ratio $(ratio "$a" "$b")   (on: ${on[*]} | off: ${off[*]})"

echo "== 3. preparation of 8388608 random rows"
t0=$(date +%s.%N)
"$BIN" run index-build --rows 8388608 --order random --mwm 64MB --repeat 1 --seed 99 --no-history --format json 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["datasets"][0]["generate_seconds"])' > /tmp/pglab-prep.txt
pgprep=$(cat /tmp/pglab-prep.txt)
t0=$(date +%s.%N)
"${PSQL[@]}" <<'SQL'
DROP TABLE IF EXISTS public.t_test, public.t_random; DROP SEQUENCE IF EXISTS public.seq_a;
BEGIN;
CREATE SEQUENCE public.seq_a CACHE 10000000;
CREATE TABLE public.t_test (id int4 DEFAULT nextval('public.seq_a'), name text);
INSERT INTO public.t_test (name) VALUES ('hans');
DO $$ DECLARE i int4; BEGIN i := 0; WHILE i < 23 LOOP i := i + 1; INSERT INTO public.t_test (name) SELECT name FROM public.t_test; END LOOP; END; $$ LANGUAGE plpgsql;
COMMIT;
VACUUM public.t_test;
CREATE TABLE public.t_random AS SELECT * FROM public.t_test ORDER BY random();
VACUUM (ANALYZE) public.t_random;
SQL
t1=$(date +%s.%N)
orig=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
"${PSQL[@]}" -c "DROP TABLE public.t_test, public.t_random; DROP SEQUENCE public.seq_a"
"$BIN" clean --datasets >/dev/null
echo "pglab ${pgprep}s  original method ${orig}s  speed-up $(ratio "$orig" "$pgprep")x"

if [ "$SWEEP" = 1 ]; then
  echo "== 4. the Cybertec sweep at 10M rows"
  start=$(date +%s)
  "$BIN" run index-build --rows 10M --order sorted,random --mwm '1MB..4GB*4' --repeat 3 --no-history --format md 2>/dev/null
  echo "took $(( $(date +%s) - start )) s"
fi
