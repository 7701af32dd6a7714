#!/usr/bin/env bash
# growth benchmarks on pglab's own sandbox server.
#
#   benches/growth.sh            both benchmarks
#   benches/growth.sh pulp       1. the founding experiment (pulp-1b parameters) beside the original
#   benches/growth.sh fill       2. fill rate against a plain COPY, indexes rebuilt vs kept
#
# Environment:
#   PGLAB            pglab binary (default: cargo build --release, then target/release/pglab)
#   FILL_LIMIT       largest step actually filled in 1., in versions (default 1000: 10M rows;
#                    later steps are projected). Use "none" to fill as far as the disk allows.
#   FILL_VERSIONS    versions grown in 2. (default 200: 2M rows at 10k units)
#   OUT              where the JSON reports go (default: a temp dir)
#   PGLAB_DATA_DIR   pglab's data dir (default: a temp dir, so the sandbox is a fresh one)
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
FILL_LIMIT=${FILL_LIMIT:-1000}
FILL_VERSIONS=${FILL_VERSIONS:-200}
OUT=${OUT:-$(mktemp -d /tmp/pglab-growth-bench.XXXXXX)}
mkdir -p "$OUT"
chmod 755 "$OUT"
export PGLAB_DATA_DIR=${PGLAB_DATA_DIR:-$OUT/data}
export PGLAB_CONFIG_DIR=${PGLAB_CONFIG_DIR:-$OUT/config}
command -v jq >/dev/null || { echo "growth.sh needs jq" >&2; exit 2; }

if [[ -z "${PGLAB:-}" ]]; then
    cargo build --release --quiet --bin pglab
    PGLAB=${CARGO_TARGET_DIR:-target}/release/pglab
fi

run() { # name, then flags
    local name=$1; shift
    local t0=$SECONDS
    "$PGLAB" run growth "$@" --format json --yes --no-history >"$OUT/$name.json" 2>"$OUT/$name.log"
    echo "($name: $((SECONDS - t0)) s wall; report $OUT/$name.json)"
}

pulp() {
    echo "== 1. pulp-1b: 10,000 content units, steps to 100,000 versions; measured up to fill-limit=$FILL_LIMIT versions, projected beyond"
    run pulp --units 10k --steps 0,100,1000,10000,50000,100000 --design snapshot,ranges \
        --churn 1% --write-method insert --repeat 4 --grow-mode rebuild --fill-limit "$FILL_LIMIT" \
        --target-rows 1G
    echo
    echo "snapshot design (the original's table) beside the original's figures:"
    printf '%-9s | %-22s | %-18s | %-24s | %-24s\n' versions "write s (orig / here)" "read ms (orig/here)" "table MB (orig / here)" "index MB (orig / here)"
    jq -r '
      {"0":[2.3,6,2.3,6.5],"100":[2.2,6,74,183],"1000":[2.7,6,735,1720],"10000":[55.4,6,7309,14691],
       "50000":[null,null,null,null],"100000":[null,null,null,null]} as $orig
      | .steps[] | select(.design=="snapshot") | . as $s | ($orig[($s.versions|tostring)] // [null,null,null,null]) as $o
      | [ ($s.versions|tostring) + (if $s.projected then "*" else "" end),
          "\($o[0] // "-") / \(if $s.write_seconds then ($s.write_seconds*100|round/100) else "-" end)",
          "\($o[1] // "-") / \(if $s.read_seconds then ($s.read_seconds*10000|round/10) else "-" end)",
          "\($o[2] // "-") / \($s.table_bytes/1048576*10|round/10)",
          "\($o[3] // "-") / \(([$s.index_bytes[]]|add)/1048576*10|round/10)" ]
      | @tsv' "$OUT/pulp.json" | awk -F'\t' '{printf "%-9s | %-22s | %-18s | %-24s | %-24s\n",$1,$2,$3,$4,$5}'
    echo "(* projected, not measured)"
    echo
    echo "both designs:"
    jq -r '.steps[] | [.design, .versions, .rows, (if .write_seconds then (.write_seconds*1000|round/1000) else "-" end),
        (if .read_seconds then (.read_seconds*10000|round/10) else "-" end),
        (if .read_cold_seconds then (.read_cold_seconds*10000|round/10) else "-" end),
        (.table_bytes/1048576*10|round/10), (([.index_bytes[]]|add)/1048576*10|round/10),
        (if .projected then "projected" else "measured" end)] | @tsv' "$OUT/pulp.json" |
        awk -F'\t' 'BEGIN{printf "%-9s %8s %12s %9s %8s %8s %10s %10s  %s\n","design","versions","rows","write s","read ms","cold ms","table MB","index MB",""}
                   {printf "%-9s %8s %12s %9s %8s %8s %10s %10s  %s\n",$1,$2,$3,$4,$5,$6,$7,$8,$9}'
    echo
    jq -r '.summary.findings[], (.summary.confounders[] | "confounder: " + .), (.notes[] | "note: " + .)' "$OUT/pulp.json"
    echo "growth time: $(jq '[.steps[].grow.seconds // 0] | add | .*10|round/10' "$OUT/pulp.json") s; whole run: $(jq -r '(.finished_at|sub("\\.[0-9]+";"")|fromdate) - (.started_at|sub("\\.[0-9]+";"")|fromdate)' "$OUT/pulp.json") s"
    echo
}

fill() {
    echo "== 2. fill rate against a plain COPY of the same rows into an unindexed table ($FILL_VERSIONS versions × 10k units)"
    for mode in rebuild keep; do
        run "fill-$mode" --units 10k --steps "0,$FILL_VERSIONS" --design snapshot --repeat 1 \
            --grow-mode "$mode" --baseline on
        jq -r --arg m "$mode" '.baseline as $b | .steps[] | select(.grow) | .grow |
            "\($m): grew \(.rows) rows in \(.seconds*10|round/10) s: COPY \(.copy_rows_per_second|round) rows/s, overall \(.rows_per_second|round) rows/s (index \(.index_seconds*10|round/10) s, VACUUM \(.vacuum_seconds*10|round/10) s); plain COPY \($b.rows_per_second|round) rows/s → ratio COPY \($b.copy_ratio*100|round/100), overall \($b.total_ratio*100|round/100)"' \
            "$OUT/fill-$mode.json"
    done
}

case $what in
    pulp) pulp ;;
    fill) fill ;;
    all) pulp; fill ;;
    *) echo "usage: benches/growth.sh [pulp|fill|all]" >&2; exit 2 ;;
esac
