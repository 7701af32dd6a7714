#!/usr/bin/env bash
# pglab tune's figures (issue 28), on pglab's sandbox, in one run, for two workloads: ingest
# (binary COPY in batches of 10000 rows, ROWS rows a pass; its WAL and buffer settings) and the
# work-mem-spill query preset (a GROUP BY + ORDER BY over 1M rows; the query auto settings):
#   1. a tune of the workload within BUDGET: its script, what the search spent against a full
#      grid over the same candidate values (from its report), and its wall time against the
#      budget;
#   2. the tuned configuration against the server's defaults and against the pgtune-formula
#      values of the same settings for this host, ROUNDS interleaved rounds (ABC, BCA, …),
#      with the verdict core's words, the three pairs held together (benches/tune_compare.rs);
#   3. wall time against the budget over BUDGET_RUNS more tunes of the ingest workload (with
#      the two tunes of part 1: five runs).
#   4. (PLANS=1, issue 54) plans before passes, instead of 1–3: on query workloads whose passes
#      take 10–30 s with a gain planted where only the plans show it (benches/tune_plans/: spill
#      — a hash aggregate that spills in batches at the default work_mem; flat — nothing to
#      gain), a tune within PLANS_BUDGET each: its design, passes,
#      configurations, warm-ups and restarts (from its report), then the tuned set against the
#      defaults and pgtune's values in ROUNDS interleaved rounds as in part 2. The load average
#      is printed before and after every step (the host is shared).
# Usage: bash benches/tune.sh   (BUDGET=15min ROUNDS=5 ROWS=2M BUDGET_RUNS="45s 60s 90s"
#                                WORKLOADS="ingest work-mem-spill")
#        PLANS=1 bash benches/tune.sh   (PLANS_BUDGET=8min PLAN_WORKLOADS="spill flat")
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-15min}
ROUNDS=${ROUNDS:-5}
ROWS=${ROWS:-2M}
BUDGET_RUNS=${BUDGET_RUNS:-"45s 60s 90s"}
WORKLOADS=${WORKLOADS:-"ingest work-mem-spill"}
INGEST_SETTINGS=max_wal_size,shared_buffers,wal_compression,wal_buffers,checkpoint_timeout
cargo build -q
BIN=$PWD/target/debug/pglab
unset PGHOST PGPORT PGDATABASE
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$(mktemp -d /tmp/pglab-tune.XXXXXX)}
mkdir -p "$PGLAB_DATA_DIR"
chmod 755 "$PGLAB_DATA_DIR"
out=$(mktemp -d /tmp/pglab-tune-out.XXXXXX)
"$BIN" sandbox start >/dev/null
trap '"$BIN" sandbox stop >/dev/null' EXIT
# The workload's flags, settings and parameters: W_NAME, W_SETTINGS (auto: the kind's list),
# W_PARAMS (KEY=VALUE…).
workload() {
  case "$1" in
    ingest) W_SETTINGS=$INGEST_SETTINGS; W_PARAMS=(rows="$ROWS" method=copy batch=10000) ;;
    *) W_SETTINGS=auto; W_PARAMS=() ;;
  esac
  W_NAME=$1
  flags=()
  for p in "${W_PARAMS[@]}"; do flags+=(--param "$p"); done
}

# One tune: its wall time against the budget, from the command's start to its exit.
tune() { # budget, out.sql
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN" tune --workload "$W_NAME" "${flags[@]}" --settings "$W_SETTINGS" --budget "$1" --out "$2" >/dev/null 2>"$2.log" || true
  t1=$(date +%s.%N)
  python3 - "$1" "$t0" "$t1" "${2%.sql}.md" <<'PY'
import re, sys
budget, t0, t1, md = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
m = re.match(r"([\d.]+)(s|min|h)?$", budget)
b = float(m.group(1)) * {"s": 1, None: 1, "min": 60, "h": 3600}[m.group(2)]
text = open(md).read()
pace = re.search(r"Pace: ([^ ]+ [^ ]+)(?: of timed work)? per pass", text)
print(f"budget {budget}: wall {t1 - t0:.1f} s, over by {t1 - t0 - b:+.1f} s; one pass (slowest recent) {pace.group(1) if pace else '?'}")
PY
}

load() { echo "load: $(cut -d' ' -f1-3 /proc/loadavg) ($1)"; }

if [ "${PLANS:-0}" = 1 ]; then
  QUERY_AUTO=work_mem,hash_mem_multiplier,random_page_cost,effective_cache_size,jit,max_parallel_workers_per_gather,effective_io_concurrency,shared_buffers
  for w in ${PLAN_WORKLOADS:-spill flat}; do
    W_NAME=benches/tune_plans/$w.sql
    W_SETTINGS=auto
    W_PARAMS=(setup=@benches/tune_plans/setup.sql)
    flags=(--param "setup=@benches/tune_plans/setup.sql")
    echo "== 4. plans before passes: $w, budget ${PLANS_BUDGET:-8min} (files in $out)"
    load "before the tune"
    tune "${PLANS_BUDGET:-8min}" "$out/plans-$w.sql"
    load "after the tune"
    grep -E '^(Search|Warm-ups|Design|- )' "$out/plans-$w.md" || true
    sed -n '/^## Plans/,/^Design/p' "$out/plans-$w.md" | grep -E '^\|' || true
    grep -E '^(ALTER|-- no change|--   verdict)' "$out/plans-$w.sql" || true
    echo
    echo "== 4. $w: tuned vs defaults vs pgtune, $ROUNDS interleaved rounds"
    load "before the rounds"
    cargo bench -q --profile dev --bench tune_compare -- "$out/plans-$w.sql" "$ROUNDS" "$QUERY_AUTO" "$W_NAME" "${W_PARAMS[@]}"
    load "after the rounds"
    echo
  done
  exit 0
fi

for w in $WORKLOADS; do
  workload "$w"
  echo "== 1. tune, $w (${W_PARAMS[*]:-its preset}), budget $BUDGET (files in $out)"
  tune "$BUDGET" "$out/tune-$w.sql"
  grep -E '^(Search|Objective)' "$out/tune-$w.md" || true
  grep -E '^- ' "$out/tune-$w.md" || true
  grep -E '^(ALTER|-- no change|--   verdict)' "$out/tune-$w.sql" || true

  echo
  echo "== 2. $w: tuned vs defaults vs pgtune, $ROUNDS interleaved rounds"
  searched=$(python3 - "$out/tune-$w.md" "$W_SETTINGS" <<'PY'
import re, sys
md, given = sys.argv[1], sys.argv[2]
if given != "auto":
    print(given)
else:
    # The settings of the report's Decisions section (every setting the tune took up).
    text = open(md).read()
    sec = text.split("## Decisions", 1)[1].split("\n## ", 1)[0] if "## Decisions" in text else ""
    print(",".join(re.findall(r"^- ([a-z_]+):", sec, re.M)))
PY
)
  cargo bench -q --profile dev --bench tune_compare -- "$out/tune-$w.sql" "$ROUNDS" "$searched" "$w" "${W_PARAMS[@]}"
  echo
done

echo "== 3. wall time against the budget (ingest)"
workload ingest
for b in $BUDGET_RUNS; do
  tune "$b" "$out/budget-$b.sql"
done
