#!/usr/bin/env bash
# index-build's projection from a sample against the whole table, side by side in one run:
# a table of ROWS rows (an int key, a 66-byte text column) created in a fresh sandbox, then
#   1. the whole table built at each of MWMS (one run, interleaved, REPEAT builds each): the
#      medians and ranges a projection must hold, and how each sort went (trace_sort);
#   2. for each of SAMPLES: `run index-build --table … --sample PCT --mwm MWMS`, which builds on
#      samples of PCT/4, PCT/2 and PCT at maintenance_work_mem × their fraction and projects
#      each setting to the whole table.
# It prints, per sample and memory: the projected value, its interval (the fit's noise alone,
# and widened by the model's error), the leave-largest-out miss, the full build's median and
# range, and whether the median is inside. Goal: inside, or the run says why not (no projection,
# a regime confounder).
# Usage: bash benches/projection.sh   (ROWS=3000000 MWMS="64MB 512MB" SAMPLES="1% 10%" REPEAT=3;
#        PGLAB_BIN=target/debug/pglab to skip the release build: the times are PostgreSQL's)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PGLAB_BIN:-}" ]; then
  cargo build --release -q --bin pglab
  PGLAB_BIN=$PWD/target/release/pglab
fi
BIN=$(realpath "$PGLAB_BIN")
ROWS=${ROWS:-3000000}
MWMS=${MWMS:-64MB 512MB}
SAMPLES=${SAMPLES:-1% 10%}
REPEAT=${REPEAT:-3}
unset PGHOST PGPORT PGDATABASE PGUSER
OUT=${OUT:-$(mktemp -d /tmp/pglab-projection-bench.XXXXXX)}
mkdir -p "$OUT"
chmod 755 "$OUT"
export PGLAB_CONFIG_DIR=$OUT/config
SB=(env PGLAB_DATA_DIR="$OUT/sb" "$BIN")
"${SB[@]}" sandbox start >/dev/null
trap '"${SB[@]}" sandbox destroy >/dev/null' EXIT
dir=$("${SB[@]}" sandbox status | awk '/^directory:/ {print $2}')
port=$(sed -n 4p "$dir/data/postmaster.pid")
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U pglab pglab)
list=$(tr ' ' ',' <<<"$MWMS")

echo "== preparing bench.ev: $ROWS rows in the sandbox"
"${PSQL[@]}" <<SQL
CREATE SCHEMA bench;
CREATE TABLE bench.ev (id int, k int NOT NULL, txt text);
INSERT INTO bench.ev SELECT g, (g::int8 * 7919) % 1000003, md5(g::text) || ' ' || md5((g * 3)::text)
  FROM generate_series(1, $ROWS) g;
SQL
"${PSQL[@]}" -c "VACUUM ANALYZE bench.ev"
"${PSQL[@]}" -At -c "SELECT 'heap ' || pg_size_pretty(pg_relation_size('bench.ev'))"

echo "== 1. the whole table at $list ($REPEAT builds each)"
"${SB[@]}" run index-build --table bench.ev --column k --mwm "$list" --repeat "$REPEAT" \
  --no-history --format json >"$OUT/full.json" 2>"$OUT/full.log"
for s in $SAMPLES; do
  echo "== 2. projection from a $s sample at $list ($REPEAT builds per size)"
  "${SB[@]}" run index-build --table bench.ev --column k --mwm "$list" --repeat "$REPEAT" \
    --sample "$s" --no-history --format json >"$OUT/sample-${s%\%}.json" 2>"$OUT/sample-${s%\%}.log"
done

python3 - "$OUT" $SAMPLES <<'PY'
import json, statistics, sys
out, samples = sys.argv[1], sys.argv[2:]
full = json.load(open(f"{out}/full.json"))
builds = {}
for t in full["trials"]:
    if not t["warmup"]:
        builds.setdefault(t["maintenance_work_mem"], []).append((t["seconds"], t.get("sort") or "?"))
print(f'\n{full.get("headline", "")}')
print("| sample | mwm | projected | interval (noise only) | interval (with model error) | leave-out miss | whole table: median [min, max] | sort of the whole table | inside |")
print("|---|---|---|---|---|---|---|---|---|")
for s in samples:
    r = json.load(open(f'{out}/sample-{s.rstrip("%")}.json'))
    lines = {l["maintenance_work_mem"]: l["projection"] for l in r.get("own", {}).get("projections", [])}
    for mwm, b in builds.items():
        secs = sorted(x[0] for x in b)
        med = statistics.median(secs)
        sort = b[0][1]
        whole = f"{med:.3f} s [{secs[0]:.3f}, {secs[-1]:.3f}]"
        p = lines.get(mwm)
        if p is None:
            why = next((f for f in r["summary"]["findings"] if f.startswith(f"{mwm}: no projection")), "no projection")
            print(f"| {s} | {mwm} | — | — | — | — | {whole} | {sort} | {why} |")
            continue
        miss = p.get("model_miss")
        miss = f"{miss*100:+.1f}%" if miss is not None else "—"
        inside = "inside" if p["low"] <= med <= p["high"] else "OUTSIDE"
        noise = "inside" if p.get("noise_low", p["low"]) <= med <= p.get("noise_high", p["high"]) else "outside"
        print(f'| {s} | {mwm} | {p["value"]:.3f} s | [{p.get("noise_low", 0):.3f}, {p.get("noise_high", 0):.3f}] ({noise}) '
              f'| [{p["low"]:.3f}, {p["high"]:.3f}] | {miss} | {whole} | {sort} | {inside} |')
    flags = [c for c in r["summary"]["confounders"] if any(w in c for w in ("regime", "sort on disk", "model fitted", "two sample sizes"))]
    for c in flags:
        print(f"  {s}: {c}")
PY
echo "(JSON reports and logs in $OUT)"
