#!/usr/bin/env bash
# How often pglab's verdicts are wrong (issues 12 and 23), simulated and on real trials:
#   1. the seeded simulation grid (benches/verdicts.rs --simulate: lognormal noise 3/5/10%,
#      2..10 settings, 3..10 trials, SIM_RUNS runs per case; A/A false calls beside two naive
#      rules, power at a 20% difference, repeat auto against a fixed 10);
#   2. RUNS real 8-setting A/A sweeps on the sandbox: maintenance_work_mem 128MB..135MB on ROWS
#      random int4 rows (the sort fits in memory at every setting, so they cannot differ:
#      checked from each build's trace_sort), REPEAT interleaved builds each. What is real:
#      every build's time, and the verdicts on the first PER_SIDE builds of each run (8-way and
#      the first 2 settings) and repeat auto replayed on the recorded order. What is
#      resampled: RESAMPLE sweeps per run drawn without replacement from that run's pool of
#      builds (all its settings together, being identical), as they are (A/A) and with every
#      setting's builds but the last × 1.2 (the last truly 20% faster, for power): the
#      machine's real noise, outliers and drift stay in the values, their order does not.
# Machine time: part 1 a few minutes (SIM_RUNS=2000); part 2 about 40 s a run at the defaults
# (12 runs: 8 minutes) plus building the release binary and the bench.
# Usage: bash benches/verdicts.sh    (SIM_RUNS=2000 RUNS=12 ROWS=500k REPEAT=8 PER_SIDE=8 RESAMPLE=50)
#        PARTS=1 or PARTS=2 for one part only.
set -euo pipefail
cd "$(dirname "$0")/.."
PARTS=${PARTS:-12}
RUNS=${RUNS:-12}
ROWS=${ROWS:-500k}
REPEAT=${REPEAT:-8}
export SIM_RUNS=${SIM_RUNS:-2000} PER_SIDE=${PER_SIDE:-8} RESAMPLE=${RESAMPLE:-50}
if [[ $PARTS == *1* ]]; then
  cargo bench -q --bench verdicts -- --simulate
  echo
fi
[[ $PARTS == *2* ]] || exit 0
cargo build -q --release
BIN=$PWD/target/release/pglab
unset PGHOST PGPORT PGDATABASE
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-verdicts.XXXXXX)}
mkdir -p "$PGLAB_DATA_DIR"
chmod 755 "$PGLAB_DATA_DIR"
out=$(mktemp -d /tmp/pglab-verdicts-runs.XXXXXX)
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
MWM=128MB,129MB,130MB,131MB,132MB,133MB,134MB,135MB
echo "== $RUNS A/A sweeps: $ROWS random int4 rows, mwm $MWM, $REPEAT builds each (reports in $out)"
for i in $(seq -w 1 "$RUNS"); do
  "$BIN" run index-build --rows "$ROWS" --order random --mwm "$MWM" --repeat "$REPEAT" \
    --no-history --yes --format json > "$out/aa-$i.json" 2>/dev/null
  # The settings cannot differ only if every build sorted in memory.
  if grep -q '"sort": "external' "$out/aa-$i.json"; then
    echo "aa-$i: a build spilled to disk; the settings are not identical: raise the mwm values" >&2
    exit 1
  fi
done
cargo bench -q --bench verdicts -- "$out"/aa-*.json
