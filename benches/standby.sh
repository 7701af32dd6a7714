#!/usr/bin/env bash
# What a synchronous standby costs: synchronous_commit levels × clients 1/4/16 × emulated RTT
# 0 / 2 ms, single-row autocommit INSERTs (a commit per row) on the sandbox with one standby.
# Prints commit latency p50 / p99 / p99.9, rows/s and stall seconds per cell, beside the
# published figures of issue 36 (at one client `on` ≈ 6.6× slower than `local`;
# `remote_apply` +0.9 ms at 1 client). ROWS and REPEAT keep it short by default.
# Usage: bash benches/standby.sh            (ROWS=2000 REPEAT=3 CLIENTS="1 4 16")
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=$PWD/target/release/pglab
ROWS=${ROWS:-2000}
REPEAT=${REPEAT:-3}
CLIENTS=${CLIENTS:-"1 4 16"}
tmp=$(mktemp -d /tmp/pglab-bench.XXXXXX)
chmod 755 "$tmp"
export PGLAB_DATA_DIR="$tmp/data"
trap '"$BIN" sandbox destroy >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
unset PGHOST PGPORT PGDATABASE

printf '%-6s %-7s %-13s %9s %9s %9s %9s %7s\n' rtt clients sync p50_ms p99_ms p99.9_ms rows/s stall_s
for rtt in 0 2ms; do
  "$BIN" sandbox start --standbys 1 --standby-rtt "$rtt" >/dev/null
  for c in $CLIENTS; do
    "$BIN" run ingest --method insert --rows "$ROWS" --clients "$c" --repeat "$REPEAT" \
      --duration off --sync-commit off,local,remote_write,on,remote_apply \
      --format json --no-history >"$tmp/run.json"
    python3 - "$tmp/run.json" "$rtt" "$c" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
by = {}
for t in r.get("body", r)["trials"]:
    by.setdefault(t["synchronous_commit"], []).append(t)
for level in ["off", "local", "remote_write", "on", "remote_apply"]:
    ts = by.get(level, [])
    if not ts:
        continue
    med = lambda f: statistics.median(f(t) for t in ts)
    print(f'{sys.argv[2]:<6} {sys.argv[3]:<7} {level:<13} {med(lambda t: t["latency_ms"]["p50"]):9.2f} '
          f'{med(lambda t: t["latency_ms"]["p99"]):9.2f} {med(lambda t: t["latency_ms"].get("p999", 0)):9.2f} '
          f'{med(lambda t: t["rows_per_s"]):9.0f} {sum(t.get("stall_seconds", 0) for t in ts):7d}')
PY
  done
done
echo "published (issue 36): on ≈ 6.6× local at 1 client; remote_apply +0.9 ms at 1 client, +19 ms at 128"
