#!/usr/bin/env bash
# Foundation figures, measured side by side in one run (medians of 5):
#   cold sandbox creation (initdb + first start + lab database), warm start, `pglab probe` wall
#   time (sandbox stopped: includes start and stop; and with the sandbox kept running), and the
#   sequential-write probe next to `dd bs=64k count=3200 conv=fdatasync` on the same filesystem.
# Usage: bash benches/foundation.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=$PWD/target/release/pglab
tmp=$(mktemp -d /tmp/pglab-bench.XXXXXX)
chmod 755 "$tmp"
trap 'for d in "$tmp"/*/; do PGLAB_DATA_DIR="$d" "$BIN" sandbox destroy >/dev/null 2>&1 || true; done; rm -rf "$tmp"' EXIT
unset PGHOST PGPORT PGDATABASE
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'; }

cold=(); warm=(); probe_cold=(); probe_hot=()
for i in 1 2 3 4 5; do
  export PGLAB_DATA_DIR="$tmp/c$i"
  cold+=("$(secs "$BIN" sandbox start)")
  "$BIN" sandbox stop >/dev/null
  warm+=("$(secs "$BIN" sandbox start)")
  "$BIN" sandbox stop >/dev/null
  probe_cold+=("$(secs "$BIN" probe)")
  "$BIN" sandbox start >/dev/null
  probe_hot+=("$(secs "$BIN" probe)")
  "$BIN" sandbox stop >/dev/null
done
printf 'cold sandbox creation   median %.2f s   (%s)\n' "$(printf '%s\n' "${cold[@]}" | median)" "${cold[*]}"
printf 'warm sandbox start      median %.2f s   (%s)\n' "$(printf '%s\n' "${warm[@]}" | median)" "${warm[*]}"
printf 'pglab probe, stopped    median %.2f s   (start + snapshot + stop)\n' "$(printf '%s\n' "${probe_cold[@]}" | median)"
printf 'pglab probe, running    median %.2f s\n' "$(printf '%s\n' "${probe_hot[@]}" | median)"

export PGLAB_DATA_DIR="$tmp/c1"
dir=$("$BIN" sandbox status | awk '/^directory:/ {print $2}')
pg=(); dd_=()
for i in 1 2 3; do
  pg+=("$("$BIN" probe --format json --disk --disk-size 200MB --fsync-time 1s | python3 -c 'import json,sys; print(json.load(sys.stdin)["disk"]["seq_write"]["mb_per_s"])')")
  dd_+=("$(dd if=/dev/zero of="$dir/dd-probe" bs=64k count=3200 conv=fdatasync 2>&1 | awk '/copied/ {for (i=1;i<=NF;i++) if ($i ~ /^[MG]B\/s$/) {v=$(i-1); if ($i=="GB/s") v*=1000; print v}}')")
  rm -f "$dir/dd-probe"
done
p=$(printf '%s\n' "${pg[@]}" | median); d=$(printf '%s\n' "${dd_[@]}" | median)
printf 'seq write: pglab %.0f MB/s  dd %.0f MB/s  ratio %.2f   (pglab %s | dd %s)\n' "$p" "$d" "$(awk -v a="$p" -v b="$d" 'BEGIN {print a / b}')" "${pg[*]}" "${dd_[*]}"
