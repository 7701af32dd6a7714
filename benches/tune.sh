#!/usr/bin/env bash
# pglab tune's figures (issue 28), on pglab's sandbox, in one run:
#   1. a tune of an ingest workload (binary COPY in batches of 10000 rows, ROWS rows a trial)
#      within BUDGET: its script, what the search spent against a full grid over the same
#      candidate values (from its report), and its wall time against the budget;
#   2. the tuned configuration against the server's defaults and against the pgtune-formula
#      values of the same settings for this host, ROUNDS interleaved rounds (ABC, BCA, …),
#      with the verdict core's words (benches/tune_compare.rs);
#   3. wall time against the budget over BUDGET_RUNS more tunes of the same workload.
# Usage: bash benches/tune.sh   (BUDGET=5min ROUNDS=5 ROWS=200k BUDGET_RUNS="45s 60s 90s")
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-5min}
ROUNDS=${ROUNDS:-5}
ROWS=${ROWS:-200k}
BUDGET_RUNS=${BUDGET_RUNS:-"45s 60s 90s"}
SETTINGS=max_wal_size,shared_buffers,wal_compression,wal_buffers,checkpoint_timeout
PARAMS=(rows="$ROWS" method=copy batch=10000)
cargo build -q
BIN=$PWD/target/debug/pglab
unset PGHOST PGPORT PGDATABASE
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-tune.XXXXXX)}
chmod 755 "$PGLAB_DATA_DIR"
out=$(mktemp -d /tmp/pglab-tune-out.XXXXXX)
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
flags=()
for p in "${PARAMS[@]}"; do flags+=(--param "$p"); done

# One tune: its wall time against the budget, from the command's start to its exit.
tune() { # budget, out.sql
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN" tune --workload ingest "${flags[@]}" --settings "$SETTINGS" --budget "$1" --out "$2" >/dev/null 2>"$2.log" || true
  t1=$(date +%s.%N)
  python3 - "$1" "$t0" "$t1" "${2%.sql}.md" <<'PY'
import re, sys
budget, t0, t1, md = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
m = re.match(r"([\d.]+)(s|min|h)?$", budget)
b = float(m.group(1)) * {"s": 1, None: 1, "min": 60, "h": 3600}[m.group(2)]
text = open(md).read()
pace = re.search(r"Pace: ([^ ]+ [^ ]+) per pass", text)
print(f"budget {budget}: wall {t1 - t0:.1f} s, over by {t1 - t0 - b:+.1f} s; one pass (slowest recent) {pace.group(1) if pace else '?'}")
PY
}

echo "== 1. tune, ingest (${PARAMS[*]}), budget $BUDGET (files in $out)"
tune "$BUDGET" "$out/tune.sql"
grep -E '^(Search|Objective)' "$out/tune.md"
grep -E '^- ' "$out/tune.md"
grep -E '^(ALTER|-- no change|--   verdict)' "$out/tune.sql" || true

echo
echo "== 2. tuned vs defaults vs pgtune, $ROUNDS interleaved rounds"
cargo bench -q --profile dev --bench tune_compare -- "$out/tune.sql" "$ROUNDS" "$SETTINGS" "${PARAMS[@]}"

echo
echo "== 3. wall time against the budget"
for b in $BUDGET_RUNS; do
  tune "$b" "$out/budget-$b.sql"
done
