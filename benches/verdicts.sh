#!/usr/bin/env bash
# How often pglab's verdicts are wrong, on real trials from the sandbox (issue 12):
#   - RUNS A/A sweeps: maintenance_work_mem 64MB vs 65MB on ROWS random int4 rows (the sort
#     fits in both, so they cannot differ), REPEAT interleaved builds each;
#   - benches/verdicts.rs then counts false winners among the A/A pairs (goal ≤ 5%), how
#     often a known 20% difference (one side's trials × 1.2) is found (goal ≥ 80%), and how
#     many trials --repeat auto spends against the fixed count for the same decisions.
# Usage: bash benches/verdicts.sh      (RUNS=20 ROWS=200k REPEAT=10 PER_SIDE=5)
# Then the false-winner and detection rates again for 4, 5, 6, 8 and REPEAT trials a side.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-20}
ROWS=${ROWS:-200k}
REPEAT=${REPEAT:-10}
export PER_SIDE=${PER_SIDE:-5}
cargo build -q
BIN=$PWD/target/debug/pglab
unset PGHOST PGPORT PGDATABASE
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-verdicts.XXXXXX)}
chmod 755 "$PGLAB_DATA_DIR"
out=$(mktemp -d /tmp/pglab-verdicts-runs.XXXXXX)
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
echo "== $RUNS A/A sweeps: $ROWS random int4 rows, mwm 64MB vs 65MB, $REPEAT builds each (reports in $out)"
for i in $(seq -w 1 "$RUNS"); do
  "$BIN" run index-build --rows "$ROWS" --order random --mwm 64MB,65MB --repeat "$REPEAT" \
    --no-history --yes --format json > "$out/aa-$i.json" 2>/dev/null
done
cargo bench -q --profile dev --bench verdicts -- "$out"/aa-*.json
echo
echo "== the same runs, by trials a side"
for n in 4 5 6 8 "$REPEAT"; do
  [ "$n" -le "$REPEAT" ] || continue
  PER_SIDE=$n cargo bench -q --profile dev --bench verdicts -- "$out"/aa-*.json | grep -E '^A/(A|B)'
done
