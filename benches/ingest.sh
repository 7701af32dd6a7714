#!/usr/bin/env bash
# pglab ingest against the tools a DBA would check it with, at modest sizes, in one run:
#
#   1. copy, 1 client, one binary COPY of N rows   vs  psql \copy of the same rows from a file
#                                                       (expected ratio >= 1.0)
#   2. insert, 1 client, one row per commit, T s   vs  pgbench -n -M prepared -f with the same
#                                                       single-row INSERT, same T, synchronous_commit
#                                                       on and off (expected ratio >= 0.95)
#   3. the CouchDB bulk-insert sweep, reduced: the √2 batch ladder 1..1024 × 1–3 clients,
#      insert-tx and copy, synchronous_commit on, SWEEP_REPEAT rounds: median rows/s table,
#      the knee per curve (verdict-based) and the findings.
#
# Each comparison alternates the two sides (ABBA) over several rounds and takes the median:
# on shared machines the disk's fsync rate can swing several-fold from one run to the next.
#
# Usage: benches/ingest.sh
#   env: COPY_ROWS (500000) COPY_ROUNDS (4) INSERT_SECONDS (5) INSERT_ROUNDS (6) SWEEP_ROWS (20000)
#        SWEEP_DURATION (2s) SWEEP_REPEAT (4)
#        BENCHES ("1 2 3": which of the three to run)
#        CARGO_TARGET_DIR, PGLAB_DATA_DIR as usual
# Needs: cargo, psql, pgbench, python3 on PATH. Uses pglab's sandbox: starts it when it is
# not running (and stops it again at the end), never another server.
set -euo pipefail

COPY_ROWS=${COPY_ROWS:-500000}
INSERT_SECONDS=${INSERT_SECONDS:-5}
INSERT_ROUNDS=${INSERT_ROUNDS:-6}
COPY_ROUNDS=${COPY_ROUNDS:-4}
SWEEP_ROWS=${SWEEP_ROWS:-20000}
SWEEP_DURATION=${SWEEP_DURATION:-2s}
SWEEP_REPEAT=${SWEEP_REPEAT:-4}
BENCHES=${BENCHES:-1 2 3}
want() { case " $BENCHES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

for tool in cargo psql pgbench python3; do
    command -v "$tool" >/dev/null || { echo "ingest.sh: $tool is not on PATH" >&2; exit 2; }
done

cd "$(dirname "$0")/.."
echo "building pglab (release)…" >&2
cargo build --release --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/pglab"
# The sandbox only: no PG* variable may point pglab (or psql) elsewhere.
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGSERVICE PGOPTIONS

tmp=$(mktemp -d)
chmod 755 "$tmp"
was_running=no
if "$BIN" sandbox status | grep -q '^sandbox: running'; then was_running=yes; fi
start_out=$("$BIN" sandbox start)
# "connect: psql -h DIR -p PORT -U USER DB" -> the connection arguments psql and pgbench share.
read -r -a CONN <<<"$(printf '%s\n' "$start_out" | sed -n 's/^connect: psql //p')"
[ "${#CONN[@]}" -ge 6 ] || { echo "ingest.sh: cannot read the sandbox address from: $start_out" >&2; exit 1; }
psql_() { psql -X -q -v ON_ERROR_STOP=1 "${CONN[@]}" "$@"; }

cleanup() {
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_psql_copy, pglab.bench_pgbench" >/dev/null 2>&1 || true
    rm -rf "$tmp"
    if [ "$was_running" = no ]; then "$BIN" sandbox stop >/dev/null || true; fi
}
trap cleanup EXIT

cat >"$tmp/helper.py" <<'PY'
import json, random, string, sys

def gen(path, rows, size):
    rnd = random.Random(42)
    noise = "".join(rnd.choice(string.ascii_lowercase) for _ in range(size + 4096))
    with open(path, "w") as f:
        for i in range(1, rows + 1):
            at = (i * 2654435761) % 4096
            f.write(f"{i}\t{noise[at:at + size]}\n")

def rps(path):
    print(json.load(open(path))["trials"][0]["rows_per_s"])

def fmt(v):
    return f"{v / 1e3:.1f}k" if v >= 1e4 else f"{v:.0f}"

def sweep(path):
    r = json.load(open(path))
    configs = r["summary"]["configs"]
    series = []
    for t in configs:
        key = (t["method"], t["clients"])
        if key not in series:
            series.append(key)
    batches = sorted({t["batch"] for t in configs})
    at = {(t["method"], t["clients"], t["batch"]): t for t in configs}
    head = ["batch"] + [f"{m} ×{c}" for m, c in series]
    print("median rows/s by batch size (synchronous_commit on; %s trials each ≤ %s rows or %s s)" % (
        r["params"]["repeat"], r["params"]["rows"], r["params"].get("duration_s", "–")))
    print("  ".join(f"{h:>12}" for h in head))
    for b in batches:
        cells = [str(b)] + [fmt(at[(m, c, b)]["median"]) if (m, c, b) in at else "–" for m, c in series]
        print("  ".join(f"{x:>12}" for x in cells))
    print()
    print("knee (smallest batch not significantly below the curve's best):")
    for k in r["summary"]["knees"]:
        knee = (f"knee at batch {k['knee_batch']:>5} ({fmt(k['knee_rows_per_s'])} rows/s)"
                if k["knee_batch"] is not None else k["knee_note"])
        print(f"  {k['series']:<22} {knee}; highest median {fmt(k['best_rows_per_s'])} at batch {k['best_batch']}")
    print()
    for f in r["summary"]["findings"]:
        print("  -", f)

def ratio(a, b, expect):
    a, b, expect = float(a), float(b), float(expect)
    q = a / b if b > 0 else float("nan")
    print(f"{q:.2f}  {'ok' if q >= expect else 'BELOW ' + str(expect)}")

{"gen": lambda: gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])),
 "rps": lambda: rps(sys.argv[2]),
 "sweep": lambda: sweep(sys.argv[2]),
 "ratio": lambda: ratio(sys.argv[2], sys.argv[3], sys.argv[4])}[sys.argv[1]]()
PY
helper() { python3 "$tmp/helper.py" "$@"; }
median() { python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }

# Run one pglab ingest headless; JSON to $1, progress kept in $1.log.
pglab_ingest() {
    local out=$1
    shift
    if ! "$BIN" run ingest "$@" --format json --no-history --yes >"$out" 2>"$out.log"; then
        echo "ingest.sh: pglab run ingest $* failed:" >&2
        cat "$out.log" >&2
        exit 1
    fi
}

# --- 1. copy vs psql \copy -------------------------------------------------------------
helper gen "$tmp/rows.tsv" "$COPY_ROWS" 100
copy_batch=$((COPY_ROWS < 1000000 ? COPY_ROWS : 1000000))
pglab_copy_once() { # round -> rows/s
    pglab_ingest "$tmp/copy-$1.json" --method copy --clients 1 --batch "$copy_batch" \
        --rows "$COPY_ROWS" --payload 100B --sync-commit on --repeat 1
    helper rps "$tmp/copy-$1.json"
}
psql_copy_once() { # -> rows/s
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_psql_copy" \
        -c "CREATE TABLE pglab.bench_psql_copy (id bigint NOT NULL, payload text)" 2>/dev/null
    local ms
    ms=$(psql_ -c '\timing on' -c "\\copy pglab.bench_psql_copy (id, payload) from '$tmp/rows.tsv'" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    [ -n "$ms" ] || { echo "ingest.sh: psql printed no timing for \\copy" >&2; exit 1; }
    psql_ -c "DROP TABLE pglab.bench_psql_copy"
    python3 -c "print($COPY_ROWS / ($ms / 1000))"
}
if want 1; then
    echo "1/3 copy vs psql \\copy ($COPY_ROWS rows, $COPY_ROUNDS rounds, ABBA)…" >&2
    a=() b=()
    for ((r = 1; r <= COPY_ROUNDS; r++)); do
        if ((r % 2)); then
            a+=("$(pglab_copy_once "$r")")
            b+=("$(psql_copy_once)")
        else
            b+=("$(psql_copy_once)")
            a+=("$(pglab_copy_once "$r")")
        fi
    done
    pglab_copy=$(median "${a[@]}")
    psql_copy=$(median "${b[@]}")
fi

# --- 2. insert vs pgbench ----------------------------------------------------------------
printf '%s\n' \
    '\set id random(1, 1000000000000)' \
    "INSERT INTO pglab.bench_pgbench (id, payload) VALUES (:id, '$(sed -n 1p "$tmp/rows.tsv" | cut -f2)');" \
    >"$tmp/insert.sql"
declare -A pglab_ins pgbench_ins
pgbench_once() { # sync -> tps
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_pgbench" \
        -c "CREATE TABLE pglab.bench_pgbench (id bigint NOT NULL, payload text)" 2>/dev/null
    local tps
    tps=$(PGOPTIONS="-c synchronous_commit=$1" pgbench -n -M prepared -c 1 \
        -T "$INSERT_SECONDS" -f "$tmp/insert.sql" "${CONN[@]}" 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    [ -n "$tps" ] || { echo "ingest.sh: pgbench printed no tps" >&2; exit 1; }
    psql_ -c "DROP TABLE pglab.bench_pgbench"
    echo "$tps"
}
pglab_once() { # sync round -> rows/s
    pglab_ingest "$tmp/insert-$1-$2.json" --method insert --clients 1 --rows 10M \
        --duration "${INSERT_SECONDS}s" --payload 100B --sync-commit "$1" --repeat 1
    helper rps "$tmp/insert-$1-$2.json"
}
if want 2; then
    for sync in on off; do
        echo "2/3 insert vs pgbench, synchronous_commit=$sync ($INSERT_ROUNDS rounds of ${INSERT_SECONDS} s each, ABBA)…" >&2
        a=() b=()
        # Alternate which side goes first, so that a drift of the shared disk or CPU weighs
        # on both alike.
        for ((r = 1; r <= INSERT_ROUNDS; r++)); do
            if ((r % 2)); then
                a+=("$(pglab_once "$sync" "$r")")
                b+=("$(pgbench_once "$sync")")
            else
                b+=("$(pgbench_once "$sync")")
                a+=("$(pglab_once "$sync" "$r")")
            fi
        done
        pglab_ins[$sync]=$(median "${a[@]}")
        pgbench_ins[$sync]=$(median "${b[@]}")
    done
fi

# --- 3. the CouchDB sweep, reduced --------------------------------------------------------
if want 3; then
    echo "3/3 sweep: sqrt2 batches × clients 1,2,3 × insert-tx,copy (≤ $SWEEP_DURATION per trial)…" >&2
    pglab_ingest "$tmp/sweep.json" --method insert-tx,copy --batch sqrt2 --clients 1,2,3 \
        --rows "$SWEEP_ROWS" --duration "$SWEEP_DURATION" --payload 100B --sync-commit on \
        --repeat "$SWEEP_REPEAT"
fi

# --- results ------------------------------------------------------------------------------
if want 1; then
    echo
    echo "== 1. copy (1 client, one COPY of $COPY_ROWS rows of 100 B) vs psql \\copy of the same rows (median of $COPY_ROUNDS rounds each, ABBA)"
    printf '   %-22s %12.0f rows/s\n' "pglab copy" "$pglab_copy" "psql \\copy" "$psql_copy"
    printf '   %-22s ' "ratio pglab / psql"
    helper ratio "$pglab_copy" "$psql_copy" 1.0
fi
if want 2; then
    echo
    echo "== 2. insert (1 client, one row per commit, ${INSERT_SECONDS} s) vs pgbench -n -M prepared -f (median of $INSERT_ROUNDS rounds each, ABBA)"
    printf '   %-6s %12s %12s   %s\n' sync "pglab rows/s" "pgbench tps" "ratio"
    for sync in on off; do
        printf '   %-6s %12.0f %12.0f   ' "$sync" "${pglab_ins[$sync]}" "${pgbench_ins[$sync]}"
        helper ratio "${pglab_ins[$sync]}" "${pgbench_ins[$sync]}" 0.95
    done
fi
if want 3; then
    echo
    echo "== 3. CouchDB bulk sweep, reduced"
    helper sweep "$tmp/sweep.json"
fi
