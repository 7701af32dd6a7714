#!/usr/bin/env bash
# sandbox import benchmarks, side by side in one run on this machine:
#   1. import rate: `pglab sandbox import --table bench.t` against
#      `pg_dump -t bench.t SOURCE | psql FRESH_DB` for the same 1M-row table (an int key, an int
#      column, a text column of ~66 bytes; a primary key and one more index), alternating
#      rounds; the table is dropped before each import so both build it from nothing.
#      Goal: median pg_dump time / median pglab time ≥ 1.0.
#      A third side runs pg_dump | psql with the maintenance_work_mem pglab gives its own index
#      builds (256MB), so the share of the gain that memory buys is visible.
#   2. projection: index-build on the whole imported table against the same build projected
#      from a 10% sample (three copies, 2.5/5/10%); goal: the measured median lies inside the
#      projection's interval. One check per column in COLUMNS.
# The source is a second PostgreSQL cluster (pglab's sandbox code in another data dir, used
# through --from like any server); the target is pglab's sandbox.
# Usage: bash benches/import.sh   (ROUNDS=5 ROWS=1000000 COLUMNS="k txt" REPEAT=5)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bin pglab
BIN=$PWD/target/release/pglab
ROUNDS=${ROUNDS:-5}
ROWS=${ROWS:-1000000}
COLUMNS=${COLUMNS:-k txt}
REPEAT=${REPEAT:-5}
unset PGHOST PGPORT PGDATABASE PGUSER
OUT=${OUT:-$(mktemp -d /tmp/pglab-import-bench.XXXXXX)}
chmod 755 "$OUT"
export PGLAB_CONFIG_DIR=$OUT/config
SRC=(env PGLAB_DATA_DIR="$OUT/src" "$BIN")
DST=(env PGLAB_DATA_DIR="$OUT/dst" "$BIN")
"${SRC[@]}" sandbox start >/dev/null
"${DST[@]}" sandbox start >/dev/null
trap '"${SRC[@]}" sandbox destroy >/dev/null; "${DST[@]}" sandbox destroy >/dev/null' EXIT
where() { # data dir → "socket-dir port"
  local dir; dir=$(env PGLAB_DATA_DIR="$1" "$BIN" sandbox status | awk '/^directory:/ {print $2}')
  echo "$dir $(sed -n 4p "$dir/data/postmaster.pid")"
}
read -r sdir sport <<<"$(where "$OUT/src")"
read -r ddir dport <<<"$(where "$OUT/dst")"
FROM="host=$sdir port=$sport user=pglab dbname=pglab"
SPSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$sdir" -p "$sport" -U pglab pglab)
DPSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$ddir" -p "$dport" -U pglab)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.3f", b - a}'; }

echo "== preparing bench.t: $ROWS rows on the source"
"${SPSQL[@]}" <<SQL
CREATE SCHEMA bench;
CREATE TABLE bench.t (id int PRIMARY KEY, k int NOT NULL, txt text);
INSERT INTO bench.t SELECT g, (g::int8 * 7919) % 1000003, md5(g::text) || ' ' || md5((g * 3)::text)
  FROM generate_series(1, $ROWS) g;
CREATE INDEX t_k ON bench.t (k);
SQL
"${SPSQL[@]}" -c "VACUUM ANALYZE bench.t"
"${SPSQL[@]}" -At -c "SELECT 'heap ' || pg_size_pretty(pg_relation_size('bench.t')) || ', with indexes ' || pg_size_pretty(pg_total_relation_size('bench.t'))"

pglab_import() {
  "${DPSQL[@]}" pglab -c "DROP TABLE IF EXISTS bench.t" >/dev/null
  local t0; t0=$(now)
  "${DST[@]}" sandbox import --from "$FROM" --table bench.t >/dev/null 2>"$OUT/import.log"
  since "$t0"
}
dump_restore() { # extra PGOPTIONS for psql's session
  "${DPSQL[@]}" pglab -c "DROP DATABASE IF EXISTS dumpdb" -c "CREATE DATABASE dumpdb" >/dev/null
  "${DPSQL[@]}" dumpdb -c "CREATE SCHEMA bench" >/dev/null
  local t0; t0=$(now)
  pg_dump -h "$sdir" -p "$sport" -U pglab -t bench.t pglab | PGOPTIONS="$1" "${DPSQL[@]}" dumpdb >/dev/null
  since "$t0"
}

echo "== 1. import rate ($ROUNDS rounds, rotating order)"
a=(); b=(); c=()
for i in $(seq 1 "$ROUNDS"); do
  case $((i % 3)) in
    1) a+=("$(pglab_import)"); b+=("$(dump_restore "")"); c+=("$(dump_restore "-c maintenance_work_mem=256MB")");;
    2) b+=("$(dump_restore "")"); c+=("$(dump_restore "-c maintenance_work_mem=256MB")"); a+=("$(pglab_import)");;
    0) c+=("$(dump_restore "-c maintenance_work_mem=256MB")"); a+=("$(pglab_import)"); b+=("$(dump_restore "")");;
  esac
done
ma=$(printf '%s\n' "${a[@]}" | median); mb=$(printf '%s\n' "${b[@]}" | median); mc=$(printf '%s\n' "${c[@]}" | median)
echo "pglab sandbox import  median ${ma}s   (${a[*]})"
echo "pg_dump | psql        median ${mb}s   (${b[*]})"
echo "  … with 256MB mwm    median ${mc}s   (${c[*]})"
echo "rate ratio (pg_dump|psql time / pglab time): $(ratio "$mb" "$ma")   against pg_dump|psql at 256MB: $(ratio "$mc" "$ma")"
echo "(pglab's time includes its ANALYZE of the table, which pg_dump|psql does not do; its log: $OUT/import.log)"

echo "== 2. projection from a 10% sample against the whole table (mwm 64MB, $REPEAT builds each)"
for col in $COLUMNS; do
  full=$("${DST[@]}" run index-build --table bench.t --column "$col" --mwm 64MB --repeat "$REPEAT" --no-history --format json 2>/dev/null)
  echo "$full" > "$OUT/full-$col.json"
  m=$(python3 -c 'import json,sys; t=[x["seconds"] for x in json.load(sys.stdin)["trials"] if not x["warmup"]]; t.sort(); print(t[len(t)//2])' <<<"$full")
  proj=$("${DST[@]}" run index-build --table bench.t --column "$col" --mwm 64MB --repeat "$REPEAT" --sample 10% --no-history --format json 2>/dev/null)
  echo "$proj" > "$OUT/sample-$col.json"
  python3 - "$m" "$col" "$OUT/sample-$col.json" <<'PY'
import json, sys
m, col = float(sys.argv[1]), sys.argv[2]
r = json.load(open(sys.argv[3]))
lines = r.get("own", {}).get("projections", [])
if not lines:
    print(f"{col}: no projection: " + "; ".join(f for f in r["summary"]["findings"] if "whole table" in f))
    sys.exit(0)
p = lines[0]["projection"]
inside = p["low"] <= m <= p["high"]
sizes = ", ".join(f'{d["order"]} {d["rows"]} rows' for d in r["datasets"])
print(f'{col}: measured on the whole table {m:.3f}s; projected {p["value"]:.3f}s [{p["low"]:.3f}, {p["high"]:.3f}] '
      f'({p["confidence"]*100:.0f}% prediction interval, {p["model"]}, r² {p["r2"]:.2f}, ×{p["reach"]:.1f} beyond the largest sample; {sizes}) '
      f'→ {"inside" if inside else "OUTSIDE"} the interval')
PY
done
echo "(JSON reports in $OUT)"
