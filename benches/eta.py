#!/usr/bin/env python3
"""How right pglab's time estimates are (issue 40: "ETAs from measured rates, corrected as the
run goes, within ±30 % for runs past a few seconds").

Runs a sequence of small experiments on pglab's sandbox, one after the other, with a history of
their own (a fresh data directory), so each later run is estimated from the earlier ones: by
the last runs of the same parameters, or by the pace of runs of other parameters. For each run
it records, from the headless progress on stderr (a pseudo-terminal, so the live line is drawn):

  * the estimate said before it starts (`estimate: … time A–B (by …)`) against the measured
    wall time: inside the range or not, and the range's middle against the time;
  * the `run eta` the live line shows at 25 %, 50 % and 75 % of the run: the end it predicts
    (time shown + eta) against the real end, as a relative error.

Usage: python3 benches/eta.py BIN   (PGLAB_DATA_DIR is made fresh unless given)
"""
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/pglab"
QUERY = (
    "SELECT count(*) FROM (SELECT g % 1000 AS k, md5(g::text) AS v "
    "FROM generate_series(1, {n}) g ORDER BY 2) s"
)
RUNS = [
    ("index-build 100k", ["index-build", "--rows", "100k", "--order", "random", "--mwm", "4MB,64MB", "--repeat", "3"]),
    ("index-build 400k", ["index-build", "--rows", "400k", "--order", "random", "--mwm", "4MB,64MB", "--repeat", "3"]),
    ("index-build 400k again", ["index-build", "--rows", "400k", "--order", "random", "--mwm", "4MB,64MB", "--repeat", "3"]),
    ("index-build 400k sorted", ["index-build", "--rows", "400k", "--order", "sorted,random", "--mwm", "4MB,64MB", "--repeat", "3"]),
    ("ingest 50k", ["ingest", "--rows", "50k", "--method", "copy,insert-tx", "--batch", "100", "--duration", "off", "--repeat", "2"]),
    ("ingest 150k", ["ingest", "--rows", "150k", "--method", "copy,insert-tx", "--batch", "100", "--duration", "off", "--repeat", "2"]),
    ("ingest 150k again", ["ingest", "--rows", "150k", "--method", "copy,insert-tx", "--batch", "100", "--duration", "off", "--repeat", "2"]),
    ("query 5 trials", ["query", "--sql", QUERY.format(n=200000), "--set", "work_mem=1MB,64MB", "--repeat", "5"]),
    ("query 12 trials", ["query", "--sql", QUERY.format(n=200000), "--set", "work_mem=1MB,64MB", "--repeat", "12"]),
    ("query 12 trials again", ["query", "--sql", QUERY.format(n=200000), "--set", "work_mem=1MB,64MB", "--repeat", "12"]),
]

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def seconds(text):
    """format_seconds back to seconds: '850 ms', '4.2 s', '1m 05s', '1h 02m'."""
    text = text.strip()
    m = re.fullmatch(r"([\d.]+) ms", text)
    if m:
        return float(m.group(1)) / 1000
    m = re.fullmatch(r"([\d.]+) s", text)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r"(\d+)m (\d+)s", text)
    if m:
        return int(m.group(1)) * 60 + int(m.group(2))
    m = re.fullmatch(r"(\d+)h (\d+)m", text)
    if m:
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60
    return None


def estimate(line):
    """(low, high, basis) from the estimate line, or None."""
    m = re.search(r"time (?:≈ (.+?)|(.+?)–(.+?)) \(by (.+?)\)", line)
    if not m:
        return None
    if m.group(1):
        v = seconds(m.group(1))
        return (v, v, m.group(4))
    return (seconds(m.group(2)), seconds(m.group(3)), m.group(4))


def run(args):
    """Run pglab with stderr on a pty: (wall seconds, estimate, [(t, eta seconds)])."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([BIN, "run", *args, "--format", "json"], stdout=subprocess.DEVNULL,
                         stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    buf, etas, est = "", [], None
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536).decode("utf-8", "replace")
            except OSError:
                break
            if not chunk:
                break
            now = time.monotonic() - t0
            buf += chunk
            for part in re.split(r"[\r\n]", ANSI.sub("", chunk)):
                m = re.search(r"run eta (.+?)(?: ·|$)", part.strip())
                if m and seconds(m.group(1)) is not None:
                    etas.append((now, seconds(m.group(1))))
        elif p.poll() is not None:
            break
    p.wait()
    wall = time.monotonic() - t0
    for line in ANSI.sub("", buf).splitlines():
        if line.startswith("estimate:"):
            est = estimate(line)
    return wall, est, etas, p.returncode


def at(etas, t):
    """The predicted end shown last before t (None if none yet)."""
    seen = [(s, e) for s, e in etas if s <= t]
    return seen[-1][0] + seen[-1][1] if seen else None


def main():
    os.environ.setdefault("PGLAB_DATA_DIR", tempfile.mkdtemp(prefix="pglab-eta."))
    os.chmod(os.environ["PGLAB_DATA_DIR"], 0o755)
    subprocess.run([BIN, "sandbox", "start"], check=True, stdout=subprocess.DEVNULL)
    rows, errors_live, errors_before = [], [], []
    try:
        for name, args in RUNS:
            wall, est, etas, rc = run(args)
            live = []
            for f in (0.25, 0.5, 0.75):
                end = at(etas, wall * f)
                live.append(None if end is None else (end - wall) / wall)
            errors_live += [e for e in live if e is not None]
            before = ""
            if est and None not in est[:2]:
                lo, hi, basis = est
                mid = (lo + hi) / 2
                errors_before.append((mid - wall) / wall)
                inside = "inside" if lo <= wall <= hi else "OUTSIDE"
                before = f"{lo:6.1f}–{hi:6.1f} s {inside:7} mid {100 * (mid - wall) / wall:+5.0f}% ({basis})"
            else:
                before = "no estimate (first run of its kind)"
            fmt = " ".join("   –  " if e is None else f"{100 * e:+5.0f}%" for e in live)
            rows.append(f"{name:24} rc {rc} {wall:6.1f} s | live at 25/50/75%: {fmt} | before: {before}")
            print(rows[-1], flush=True)
    finally:
        subprocess.run([BIN, "sandbox", "stop"], stdout=subprocess.DEVNULL)
    within = lambda es: sum(abs(e) <= 0.30 for e in es)
    print(f"live ETAs within ±30 % of the real end: {within(errors_live)} of {len(errors_live)}")
    print(f"estimates before the run, middle within ±30 %: {within(errors_before)} of {len(errors_before)}")


if __name__ == "__main__":
    main()
