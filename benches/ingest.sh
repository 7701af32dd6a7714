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
#   4. the load generator's cost, for each of LOAD_CASES at LOAD_CLIENTS clients, T s  vs
#      pgbench -n -M prepared -c N -j min(N,2) -f running the same statements:
#        insert:SYNC    one single-row INSERT per transaction (pglab --method insert)
#        values:SYNC    one INSERT of LOAD_BATCH rows per transaction (--method values)
#        tx:SYNC        LOAD_BATCH single-row INSERTs in one transaction, each waiting for its
#                       reply (--method insert-tx; pgbench BEGIN; INSERT ×LOAD_BATCH; COMMIT)
#        pipeline:SYNC  LOAD_BATCH single-row INSERTs in one transaction, pipelined
#                       (--method insert-tx --pipeline on; pgbench \startpipeline/\endpipeline)
#      with synchronous_commit SYNC (on|off): rows/s ratio (goal >= 0.9) and client CPU per
#      row, pglab's recorded client_cpu_s / rows and its whole process (user + sys, setup
#      included) against pgbench's process (goal <= 1.25x). pgbench binds the payload as a
#      parameter too (-D pay=…, :pay), as pglab does: the same statement, the same bytes per row
#      (so LOAD_BATCH <= 127 for values: pgbench binds at most 255 parameters). The same pglab
#      build runs a third side with PGLAB_LOADER=tokio (its tokio-postgres loader, the one
#      before libpq) unless LOAD_TOKIO=0; with PGLAB_BEFORE=/path/to/an/older/pglab the older
#      build runs as a fourth side in the same rotation.
#
# Each comparison alternates the two sides (ABBA) over several rounds and takes the median:
# on shared machines the disk's fsync rate can swing several-fold from one run to the next.
#
# Usage: benches/ingest.sh
#   env: COPY_ROWS (500000) COPY_ROUNDS (4) INSERT_SECONDS (5) INSERT_ROUNDS (6) SWEEP_ROWS (20000)
#        SWEEP_DURATION (2s) SWEEP_REPEAT (4)
#        LOAD_CLIENTS ("1 4 16") LOAD_SECONDS (5) LOAD_ROUNDS (5) PGLAB_BEFORE (unset)
#        LOAD_CASES ("insert:off insert:on values:off tx:off pipeline:off") LOAD_BATCH (100) LOAD_TOKIO (1)
#        BENCHES ("1 2 3 4": which to run)
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
LOAD_CLIENTS=${LOAD_CLIENTS:-1 4 16}
LOAD_SECONDS=${LOAD_SECONDS:-5}
LOAD_ROUNDS=${LOAD_ROUNDS:-5}
PGLAB_BEFORE=${PGLAB_BEFORE:-}
LOAD_CASES=${LOAD_CASES:-insert:off insert:on values:off tx:off pipeline:off}
LOAD_BATCH=${LOAD_BATCH:-100}
LOAD_TOKIO=${LOAD_TOKIO:-1}
BENCHES=${BENCHES:-1 2 3 4}
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

def timed(out):
    # Run the rest of argv; its stdout to out, "user+sys seconds" of it (and its children)
    # on stdout.
    import resource, subprocess
    with open(out, "w") as f:
        rc = subprocess.call(sys.argv[3:], stdout=f, stderr=subprocess.DEVNULL)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(rc)
    print(ru.ru_utime + ru.ru_stime)

def ratio(a, b, expect):
    a, b, expect = float(a), float(b), float(expect)
    q = a / b if b > 0 else float("nan")
    print(f"{q:.2f}  {'ok' if q >= expect else 'BELOW ' + str(expect)}")

{"gen": lambda: gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])),
 "rps": lambda: rps(sys.argv[2]),
 "sweep": lambda: sweep(sys.argv[2]),
 "timed": lambda: timed(sys.argv[2]),
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
    python3 - "$tmp/copy-$1.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
print(t["rows_per_s"], (t.get("client_cpu_s") or float("nan")) / max(t["rows"], 1) * 1e6)
PY
}
psql_copy_once() { # -> rows/s
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_psql_copy" \
        -c "CREATE TABLE pglab.bench_psql_copy (id bigint NOT NULL, payload text)" 2>/dev/null
    local ms cpu
    cpu=$(helper timed "$tmp/psql-copy.out" psql -X -q -v ON_ERROR_STOP=1 "${CONN[@]}" -c '\timing on' \
        -c "\\copy pglab.bench_psql_copy (id, payload) from '$tmp/rows.tsv'")
    ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$tmp/psql-copy.out")
    [ -n "$ms" ] || { echo "ingest.sh: psql printed no timing for \\copy" >&2; exit 1; }
    psql_ -c "DROP TABLE pglab.bench_psql_copy"
    # rows/s, and psql's CPU per row (its whole process: it reads the file and sends it)
    python3 -c "print($COPY_ROWS / ($ms / 1000), $cpu / $COPY_ROWS * 1e6)"
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
    pglab_copy=$(median $(printf '%s\n' "${a[@]}" | cut -d' ' -f1))
    psql_copy=$(median $(printf '%s\n' "${b[@]}" | cut -d' ' -f1))
    pglab_copy_cpu=$(median $(printf '%s\n' "${a[@]}" | cut -d' ' -f2))
    psql_copy_cpu=$(median $(printf '%s\n' "${b[@]}" | cut -d' ' -f2))
fi

# --- 2. insert vs pgbench ----------------------------------------------------------------
printf '%s\n' \
    '\set id random(1, 1000000000000)' \
    "INSERT INTO pglab.bench_pgbench (id, payload) VALUES (:id, :pay);" >"$tmp/insert.sql"
# The payload is bound as a parameter, as pglab binds it (not a literal in the statement).
PAY=$(head -c 100 /dev/zero | tr '\0' x)
declare -A pglab_ins pgbench_ins
pgbench_once() { # sync -> tps
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_pgbench" \
        -c "CREATE TABLE pglab.bench_pgbench (id bigint NOT NULL, payload text)" 2>/dev/null
    local tps
    tps=$(PGOPTIONS="-c synchronous_commit=$1" pgbench -n -M prepared -c 1 -D "pay=$PAY" \
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

# --- 4. the load generator's cost: insert vs pgbench at 1, 4, 16 clients -------------------
declare -A ld
# A case's pgbench script (written once) and its rows per transaction.
case_script() { # method -> rows per transaction; writes $tmp/case-METHOD.sql
    local m=$1 f="$tmp/case-$1.sql" row="(:id, :pay)" i
    case $m in
        insert) printf '%s\n' '\set id random(1, 1000000000000)' \
            "INSERT INTO pglab.bench_pgbench (id, payload) VALUES $row;" >"$f"; echo 1 ;;
        values)
            [ "$LOAD_BATCH" -le 127 ] || { echo "ingest.sh: LOAD_BATCH $LOAD_BATCH > 127: pgbench binds at most 255 parameters" >&2; exit 2; }
            { echo '\set id random(1, 1000000000000)'
              printf 'INSERT INTO pglab.bench_pgbench (id, payload) VALUES %s' "$row"
              for ((i = 1; i < LOAD_BATCH; i++)); do printf ', %s' "$row"; done
              echo ';'; } >"$f"; echo "$LOAD_BATCH" ;;
        tx)
            { echo '\set id random(1, 1000000000000)'; echo 'BEGIN;'
              for ((i = 0; i < LOAD_BATCH; i++)); do
                  echo "INSERT INTO pglab.bench_pgbench (id, payload) VALUES $row;"; done
              echo 'COMMIT;'; } >"$f"; echo "$LOAD_BATCH" ;;
        pipeline)
            { echo '\set id random(1, 1000000000000)'; echo '\startpipeline'; echo 'BEGIN;'
              for ((i = 0; i < LOAD_BATCH; i++)); do
                  echo "INSERT INTO pglab.bench_pgbench (id, payload) VALUES $row;"; done
              echo 'COMMIT;'; echo '\endpipeline'; } >"$f"; echo "$LOAD_BATCH" ;;
        *) echo "ingest.sh: unknown load case method '$m' (insert, values, tx, pipeline)" >&2; exit 2 ;;
    esac
}
pglab_case_args() { # method -> pglab run ingest flags
    case $1 in
        insert) echo "--method insert --batch 1" ;;
        values) echo "--method values --batch $LOAD_BATCH" ;;
        tx) echo "--method insert-tx --batch $LOAD_BATCH" ;;
        pipeline) echo "--method insert-tx --batch $LOAD_BATCH --pipeline on" ;;
    esac
}
pgbench_load_once() { # method sync clients -> "rows/s cpu_us_per_row"
    local m=$1 sync=$2 c=$3 j=$(($3 < 2 ? $3 : 2)) cpu per
    per=$(case_script "$m")
    psql_ -c "DROP TABLE IF EXISTS pglab.bench_pgbench" \
        -c "CREATE TABLE pglab.bench_pgbench (id bigint NOT NULL, payload text)" 2>/dev/null
    cpu=$(PGOPTIONS="-c synchronous_commit=$sync" helper timed "$tmp/pgbench.out" pgbench -n \
        -M prepared -D "pay=$PAY" -c "$c" -j "$j" -T "$LOAD_SECONDS" -f "$tmp/case-$m.sql" "${CONN[@]}")
    psql_ -c "DROP TABLE pglab.bench_pgbench"
    python3 - "$tmp/pgbench.out" "$cpu" "$per" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
per = int(sys.argv[3])
tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
tx = int(re.search(r"actually processed: (\d+)", out).group(1))
print(tps * per, float(sys.argv[2]) / max(tx * per, 1) * 1e6)
PY
}
pglab_load_once() { # binary method sync clients tag [loader] -> "rows/s recorded_cpu_us_per_row process_cpu_us_per_row"
    local bin=$1 m=$2 sync=$3 c=$4 out="$tmp/load-$5.json" cpu
    # shellcheck disable=SC2046
    cpu=$(PGLAB_LOADER=${6:-libpq} helper timed "$out" "$bin" run ingest $(pglab_case_args "$m") --clients "$c" \
        --rows 100M --duration "${LOAD_SECONDS}s" --payload 100B --sync-commit "$sync" \
        --repeat 1 --format json --no-history --yes) ||
        { echo "ingest.sh: pglab run ingest failed" >&2; exit 1; }
    python3 - "$out" "$cpu" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trials"][0]
rows = max(t["rows"], 1)
rec = t.get("client_cpu_s")
print(t["rows_per_s"], "nan" if rec is None else rec / rows * 1e6, float(sys.argv[2]) / rows * 1e6)
PY
}
if want 4; then
    sides=(pglab pgbench)
    [ "$LOAD_TOKIO" = 0 ] || sides+=(tokio)
    [ -n "$PGLAB_BEFORE" ] && sides+=(before)
    for case_ in $LOAD_CASES; do
        m=${case_%%:*} sync=${case_#*:}
        for c in $LOAD_CLIENTS; do
            echo "4/4 load generator: $m sync=$sync ×$c vs pgbench -c $c ($LOAD_ROUNDS rounds of ${LOAD_SECONDS} s, rotating order)…" >&2
            for ((r = 0; r < LOAD_ROUNDS; r++)); do
                for ((k = 0; k < ${#sides[@]}; k++)); do
                    side=${sides[$(((r + k) % ${#sides[@]}))]}
                    case $side in
                        pglab) v=$(pglab_load_once "$BIN" "$m" "$sync" "$c" "a-$m-$sync-$c-$r") ;;
                        tokio) v=$(pglab_load_once "$BIN" "$m" "$sync" "$c" "t-$m-$sync-$c-$r" tokio) ;;
                        before) v=$(pglab_load_once "$PGLAB_BEFORE" "$m" "$sync" "$c" "b-$m-$sync-$c-$r") ;;
                        pgbench) v=$(pgbench_load_once "$m" "$sync" "$c") ;;
                    esac
                    echo "   $side $m:$sync ×$c: $v" >&2
                    ld[$side,$m:$sync,$c]+="$v;"
                done
            done
        done
    done
fi

# --- results ------------------------------------------------------------------------------
if want 1; then
    echo
    echo "== 1. copy (1 client, one COPY of $COPY_ROWS rows of 100 B) vs psql \\copy of the same rows (median of $COPY_ROUNDS rounds each, ABBA)"
    printf '   %-22s %12.0f rows/s %8.2f µs CPU per row\n' "pglab copy" "$pglab_copy" "$pglab_copy_cpu" \
        "psql \\copy" "$psql_copy" "$psql_copy_cpu"
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
if want 4; then
    echo
    echo "== 4. the load generator, ${LOAD_SECONDS} s trials, vs pgbench -n -M prepared -c N -j min(N,2) running the same statements (medians of $LOAD_ROUNDS rounds each, rotating order; batch $LOAD_BATCH for values and pipeline)"
    echo "   CPU per row in µs: pglab's recorded client_cpu_s / rows (rec) and its whole process (proc, setup included); pgbench's whole process"
    python3 - <<PY
from statistics import median
raw = {}
for kv in """$(for k in "${!ld[@]}"; do echo "$k=${ld[$k]}"; done)""".splitlines():
    k, v = kv.split("=", 1)
    side, case, c = k.split(",")
    raw[(side, case, int(c))] = [list(map(float, x.split())) for x in v.split(";") if x]
def med(side, c, i):
    return median(r[i] for r in raw[(side, case, c)])
head = f"   {'case':<13} {'clients':>7} {'pglab rows/s':>12} {'pgbench r/s':>11} {'ratio':>6} {'rec µs':>7} {'proc µs':>7} {'pgb µs':>7} {'cpu×rec':>7} {'cpu×proc':>8}"
extra = [s for s in ("tokio", "before") if any(k[0] == s for k in raw)]
for s in extra:
    head += f"   {s + ' rows/s':>13} {'ratio':>6} {'rec µs':>7} {'cpu×rec':>7}"
print(head)
cases = []
for _, case, _ in raw:
    if case not in cases:
        cases.append(case)
for case, c in sorted({(case, c) for _, case, c in raw}, key=lambda k: (cases.index(k[0]), k[1])):
    a, p = med("pglab", c, 0), med("pgbench", c, 0)
    rec, proc, pg = med("pglab", c, 1), med("pglab", c, 2), med("pgbench", c, 1)
    line = f"   {case:<13} {c:>7} {a:>12.0f} {p:>11.0f} {a / p:>6.2f} {rec:>7.1f} {proc:>7.1f} {pg:>7.1f} {rec / pg:>7.2f} {proc / pg:>8.2f}"
    for s in extra:
        b, br = med(s, c, 0), med(s, c, 1)
        if br != br:  # an older build records no client CPU: its whole process instead
            br = med(s, c, 2)
        line += f"   {b:>13.0f} {b / p:>6.2f} {br:>7.1f} {br / pg:>7.2f}"
    print(line)
print("   goals: ratio >= 0.90, cpu× <= 1.25")
PY
fi
if want 3; then
    echo
    echo "== 3. CouchDB bulk sweep, reduced"
    helper sweep "$tmp/sweep.json"
fi
