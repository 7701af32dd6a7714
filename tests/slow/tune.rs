//! `pglab tune` on real servers: a small budget on the sandbox writes a script whose every
//! line is a real setting with a value the server accepts, with its evidence; the sandbox has
//! its own settings back after the tune, after Ctrl-C and after kill -9 (at the next start);
//! `--resume` goes on from the saved state; on a server pglab did not start no ALTER SYSTEM
//! is ever issued (its statement log and postgresql.auto.conf say so); bad flags get one
//! sentence and exit 2.
//!
//! The workload that makes the search decide quickly and every time: one INSERT per
//! transaction, whose commits wait for the disk's flush unless `fsync` is off (allowed with
//! --allow-durability-tradeoff): an effect many times the noise.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

// Each test changes its server's settings: it has a sandbox of its own, so the tests run side
// by side rather than one at a time on one sandbox.
use crate::common::{TestLab, own_lab, temp_dir};
use pglab::tune::output::parse_script;

const FSYNC_WORKLOAD: &[&str] = &[
    "tune",
    "--workload",
    "ingest",
    "--param",
    "method=insert",
    "--param",
    "rows=400",
    "--settings",
    "fsync",
    "--allow-durability-tradeoff",
];

fn tune(extra: &[&str], dir: &Path) -> Command {
    let mut c = own_lab().command();
    c.current_dir(dir)
        .arg("--keep-sandbox")
        .args(FSYNC_WORKLOAD)
        .args(extra);
    c
}

fn state_file() -> PathBuf {
    own_lab().paths.data_dir.join("tune-state.json")
}

/// The sandbox runs on its own settings: nothing in postgresql.auto.conf, no journal.
fn assert_own_settings() {
    let sb = &own_lab().sandbox;
    assert_eq!(
        sb.changed_settings(),
        vec![],
        "postgresql.auto.conf is clean"
    );
    assert!(!sb.whatif_pending(), "no what-if journal left");
    assert_eq!(own_lab().show(&["fsync"]), ["on"]);
}

/// Every (name, value) is a setting of the server and a value its pg_settings accepts.
fn assert_accepted(pairs: &[(String, String)]) {
    let lab = own_lab();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = lab.target().connect().await.expect("connect");
        let all = pglab::experiment::lab::whatif::catalog::read_all(&c)
            .await
            .unwrap();
        for (n, v) in pairs {
            let info = all
                .iter()
                .find(|s| &s.name == n)
                .unwrap_or_else(|| panic!("{n} is not a setting"));
            info.check(v)
                .unwrap_or_else(|e| panic!("{n} = {v} is not accepted: {e}"));
        }
    });
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The whole number just before the first `marker` in `text`.
fn count_before(text: &str, marker: &str) -> usize {
    text.split(marker)
        .next()
        .filter(|head| head.len() < text.len())
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before {marker:?} in:\n{text}"))
}

/// Seconds as the report writes them: `59.3 s`, `2m 29s`, `1h 02m`.
fn seconds_of(text: &str) -> f64 {
    let unit = |part: &str, suffix: &str, scale: f64| {
        part.strip_suffix(suffix)
            .and_then(|n| n.trim().parse::<f64>().ok())
            .map(|n| n * scale)
    };
    match text.split_once(' ') {
        Some((n, "s")) => n.parse().ok().map(|n| (n, 0.0)),
        Some((a, b)) if a.ends_with('h') => unit(a, "h", 3600.0).zip(unit(b, "m", 60.0)),
        Some((a, b)) => unit(a, "m", 60.0).zip(unit(b, "s", 1.0)),
        None => None,
    }
    .map(|(a, b): (f64, f64)| a + b)
    .unwrap_or_else(|| panic!("not a time: {text:?}"))
}

/// The report's budget is `budget_s` and the tune kept it on its own clock, which counts from
/// the command's start: no round starts that its pace says will not fit and the round under
/// way at the deadline is cancelled, so the time spent passes the budget by at most that
/// trial's cleanup (a table dropped, settings reset: seconds even on a loaded machine, 30 s a
/// generous ceiling). A slow machine buys fewer rounds; it does not overrun.
fn assert_budget_kept(md: &str, budget_s: f64) {
    let (budget, spent) = md
        .split_once("Budget ")
        .and_then(|(_, rest)| rest.split_once(';'))
        .and_then(|(said, _)| said.split_once(", spent "))
        .unwrap_or_else(|| panic!("no budget in:\n{md}"));
    assert_eq!(seconds_of(budget), budget_s, "{md}");
    let spent = seconds_of(spent);
    assert!(
        spent <= budget_s + 30.0,
        "spent {spent} s of {budget_s} s:\n{md}"
    );
}

#[test]
fn a_small_budget_writes_a_script_with_its_evidence_and_restores_the_sandbox() {
    state::remove();
    let dir = temp_dir("tune-out");
    let out = tune(&["--budget", "150s"], &dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sql =
        std::fs::read_to_string(dir.join("tune.sql")).expect("tune.sql in the current directory");
    let lines = parse_script(&sql);
    assert_eq!(
        lines,
        vec![("fsync".to_string(), "off".to_string())],
        "{sql}"
    );
    assert_accepted(&lines);
    for needle in [
        "measured on ",
        "confirmation: the tuned set and pgtune's set against the starting configuration",
        "verdict: tuned set better",
        "pgtune's set:           median ",
        "against the starting configuration, ",
        "-- memory: ",
        "-- fsync: on -> off (shown better)",
        "--   before (on): median ",
        "--   after  (off): median ",
        "interval",
        "takes effect after a reload",
        "durability: with fsync off a crash",
    ] {
        assert!(sql.contains(needle), "{needle:?} missing from:\n{sql}");
    }
    // Stdout is the script; the report and its chart sit beside it.
    assert_eq!(String::from_utf8_lossy(&out.stdout), sql);
    let md = std::fs::read_to_string(dir.join("tune.md")).unwrap();
    assert!(md.contains("![search path](tune.svg)"), "{md}");
    assert!(md.contains("| fsync=off |"), "{md}");
    let svg = std::fs::read_to_string(dir.join("tune.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("fsync"), "{svg}");
    // Every configuration tried is in the history like any run: as many runs as the report
    // counts (a race's rounds, one run each, and a run per side of each confirmation round).
    // Read as pglab reads it: past 1 MiB the file's older records move to archives.
    let (recorded, _) = pglab::history::read(&own_lab().paths.history_file());
    let runs = count_before(&md, " runs (each in the history)");
    // What the budget bought, as the tune counts it, not as a fast machine would buy it: a run
    // per round of the race, a run per side (three) of each round of the confirmation, and at
    // most two sides of a confirmation round the deadline cut short.
    let race = count_before(&sql, " rounds, ");
    let confirmation = count_before(&sql, " rounds interleaved");
    let bought = race + 3 * confirmation;
    assert!((bought..=bought + 2).contains(&runs), "{runs} runs:\n{md}");
    assert_budget_kept(&md, 150.0);
    assert!(
        recorded.len() >= runs,
        "{} runs in the history and its archives < {runs}",
        recorded.len()
    );
    assert!(!state_file().exists(), "a finished tune leaves no state");
    assert_own_settings();
    std::fs::remove_dir_all(&dir).ok();
}

/// A tune with a long budget, started in `dir`; returns once the sandbox runs with fsync off
/// (a trial of the race under way).
fn start_tune(dir: &Path) -> Child {
    let child = tune(&["--budget", "10min"], dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let end = Instant::now() + Duration::from_secs(90);
    loop {
        let changed = own_lab().sandbox.changed_settings();
        if changed.iter().any(|(n, v)| n == "fsync" && v == "off") && state_file().exists() {
            break;
        }
        assert!(Instant::now() < end, "the tune never set fsync off");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

mod state {
    pub fn remove() {
        std::fs::remove_file(super::state_file()).ok();
    }
}

#[test]
fn ctrl_c_restores_the_sandbox_and_resume_goes_on() {
    state::remove();
    let dir = temp_dir("tune-cancel");
    let mut child = start_tune(&dir);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "cancelled");
    assert_own_settings();
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state_file()).expect("the state is saved")).unwrap();
    assert_eq!(saved["workload"], "ingest");
    let spent = saved["spent_s"].as_f64().unwrap();
    assert!(spent > 0.0);
    assert!(saved["phase"].get("racing").is_some(), "{}", saved["phase"]);
    let rounds_before = saved["phase"]["racing"]["race"]["rounds"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        !dir.join("tune.sql").exists(),
        "no script from a cancelled tune"
    );

    // --resume goes on: the same race, its rounds kept, the clock going on.
    let mut c = own_lab().command();
    c.current_dir(&dir)
        .args(["--keep-sandbox", "tune", "--resume", "--budget", "150s"]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("spent)"), "{err}");
    let sql = std::fs::read_to_string(dir.join("tune.sql")).unwrap();
    assert_eq!(
        parse_script(&sql),
        vec![("fsync".into(), "off".into())],
        "{sql}"
    );
    // The race's trials: at least the rounds run before the cancel, plus what followed.
    let md = std::fs::read_to_string(dir.join("tune.md")).unwrap();
    assert!(md.contains("fsync: on → off"), "{md}");
    assert!(rounds_before <= 8);
    assert!(!state_file().exists());
    assert_own_settings();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn kill_9_leaves_the_state_and_the_next_start_restores_the_sandbox() {
    state::remove();
    let dir = temp_dir("tune-kill");
    let mut child = start_tune(&dir);
    child.kill().unwrap(); // SIGKILL: nothing of pglab runs after this
    child.wait().unwrap();
    let sb = &own_lab().sandbox;
    assert!(sb.whatif_pending(), "the journal is left");
    assert!(
        state_file().exists(),
        "the state of the rounds before is kept"
    );
    let probe = own_lab()
        .command()
        .args(["--keep-sandbox", "probe"])
        .output()
        .unwrap();
    assert!(probe.status.success(), "{}", stderr(&probe));
    assert_own_settings();
    state::remove();
    std::fs::remove_dir_all(&dir).ok();
}

/// A second real cluster, started through pglab's own code in a directory of its own: to a
/// pglab with another data dir, a server it did not start.
fn other_cluster() -> (pglab::server::Sandbox, u16, PathBuf) {
    let dir = temp_dir("tune-other");
    let paths = pglab::paths::Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sb = pglab::server::Sandbox::locate(&paths, None, None).expect("server binaries");
    let port = sb.start().expect("second cluster starts");
    (sb, port, dir)
}

#[test]
fn on_a_server_pglab_did_not_start_no_alter_system_is_ever_issued() {
    let (other, port, dir) = other_cluster();
    let db = format!(
        "host={} port={port} user=pglab dbname=pglab",
        other.root.display()
    );
    // The test's own setup: every statement of the server goes to its log from here.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let t = pglab::server::Target::new(other.conn_params(port), true).unwrap();
        let c = t.connect().await.unwrap();
        c.batch_execute("ALTER SYSTEM SET log_statement = 'all'")
            .await
            .unwrap();
        c.batch_execute("SELECT pg_reload_conf()").await.unwrap();
    });
    std::thread::sleep(Duration::from_millis(500));
    let auto_conf = other.data().join("postgresql.auto.conf");
    let conf_before = std::fs::read(&auto_conf).unwrap();
    let log_from = std::fs::metadata(other.log_file())
        .map(|m| m.len())
        .unwrap_or(0);

    let out = Command::new(TestLab::bin())
        .current_dir(&dir)
        .env("PGLAB_DATA_DIR", &own_lab().paths.data_dir)
        .env("PGLAB_CONFIG_DIR", &own_lab().paths.config_dir)
        .args([
            "--db",
            &db,
            "tune",
            "--workload",
            "ingest",
            "--param",
            "method=copy",
            "--param",
            "rows=2k",
            "--param",
            "batch=1000",
            // An ingest writes its tables: on a server pglab did not start the gate asks for
            // it (and they are dropped at the end); what is tested here is that no setting
            // is ever changed there.
            "--param",
            "writes=lab",
            "--settings",
            "work_mem,max_wal_size,shared_buffers",
            "--budget",
            "25s",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("never ALTER SYSTEM"), "{err}");
    assert!(
        err.contains("max_wal_size, shared_buffers need a reload or restart, which pglab does on its own sandbox only"),
        "{err}"
    );
    let log = std::fs::read(other.log_file()).unwrap();
    let log = String::from_utf8_lossy(&log[log_from as usize..]).to_string();
    assert!(
        log.contains("SET work_mem") || log.contains("work_mem"),
        "the tune ran there: {log}"
    );
    assert!(!log.to_ascii_uppercase().contains("ALTER SYSTEM"), "{log}");
    assert!(!log.contains("pg_reload_conf"), "{log}");
    assert_eq!(
        std::fs::read(&auto_conf).unwrap(),
        conf_before,
        "postgresql.auto.conf unchanged"
    );
    let sql = std::fs::read_to_string(dir.join("tune.sql")).unwrap();
    for (n, _) in parse_script(&sql) {
        assert_eq!(n, "work_mem", "only session settings: {sql}");
    }
    let _ = other.stop();
    std::fs::remove_dir_all(&other.root).ok();
    std::fs::remove_dir_all(&dir).ok();
}

/// The DBA's own statements as the workload: a `.sql` file with a setup that builds its table
/// once for every round, work_mem raced on a sort that spills at 64kB; a valid script (a real
/// setting and value, or no change) with the query objective, query runs in the history, the
/// sandbox's own settings back.
#[test]
fn a_file_of_statements_is_a_workload() {
    state::remove();
    let dir = temp_dir("tune-query");
    std::fs::write(
        dir.join("report.sql"),
        "-- name: sorted totals\nSELECT g % 5000 AS k, sum(g) FROM tq_rows GROUP BY 1 ORDER BY 2 DESC;\n-- name: one row\nSELECT g FROM tq_rows WHERE g = 4242;\n",
    )
    .unwrap();
    let out = own_lab()
        .command()
        .current_dir(&dir)
        .args([
            "--keep-sandbox",
            "tune",
            "--workload",
            "report.sql",
            "--param",
            "setup=CREATE TABLE tq_rows AS SELECT g FROM generate_series(1, 100000) g",
            "--settings",
            "work_mem",
            "--budget",
            "60s",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("setup runs once and is kept"), "{err}");
    let sql = std::fs::read_to_string(dir.join("tune.sql")).unwrap();
    let lines = parse_script(&sql);
    assert!(
        lines.iter().all(|(n, _)| n == "work_mem"),
        "only the raced setting: {sql}"
    );
    assert_accepted(&lines);
    assert!(
        !lines.is_empty() || sql.contains("-- no change recommended"),
        "{sql}"
    );
    let md = std::fs::read_to_string(dir.join("tune.md")).unwrap();
    assert!(
        md.contains("seconds of the timed statements of a pass"),
        "{md}"
    );
    assert!(md.contains("work_mem="), "{md}");
    // The confirmation sets each statement beside itself on every side: a set that speeds
    // one statement and slows another says both.
    let per = md
        .lines()
        .find(|l| l.contains("per statement"))
        .unwrap_or_else(|| panic!("each statement's verdict\n{md}"));
    assert!(
        per.contains("sorted totals") && per.contains("one row"),
        "{per}"
    );
    let hist = std::fs::read_to_string(own_lab().paths.history_file()).unwrap();
    assert!(
        hist.contains("\"experiment\":\"query\""),
        "query runs in the history"
    );
    assert!(!state_file().exists(), "a finished tune leaves no state");
    assert_own_settings();
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 37: a tune of several settings screens them first — each at the two ends of its
/// values, in paired rounds — and `tune.md` and `tune.sql` show the screening's table, every
/// setting ranked by its effect with its interval, raced or screened out; `work_mem` ×
/// `hash_mem_multiplier`, a known pair, is screened together and raced as one grid.
#[test]
fn a_tune_of_two_settings_screens_them_first_and_reports_the_table() {
    state::remove();
    let dir = temp_dir("tune-screen");
    std::fs::write(
        dir.join("report.sql"),
        "-- name: sorted totals\nSELECT g % 5000 AS k, sum(g) FROM ts_rows GROUP BY 1 ORDER BY 2 DESC;\n",
    )
    .unwrap();
    let out = own_lab()
        .command()
        .current_dir(&dir)
        .args([
            "--keep-sandbox",
            "tune",
            "--workload",
            "report.sql",
            "--param",
            "setup=CREATE TABLE ts_rows AS SELECT g FROM generate_series(1, 50000) g",
            "--settings",
            "work_mem,hash_mem_multiplier",
            "--budget",
            "90s",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("screening work_mem × hash_mem_multiplier: round 1"),
        "{err}"
    );
    let md = std::fs::read_to_string(dir.join("tune.md")).unwrap();
    assert!(md.contains("## Screening"), "{md}");
    assert!(
        md.contains("| rank | setting | low → high | ratio | interval (90%) | rounds | |"),
        "{md}"
    );
    // The screening's own table (the Plans section above it has a row per setting too).
    let screening = md
        .split("## Screening")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("no screening section\n{md}"));
    for setting in ["work_mem", "hash_mem_multiplier"] {
        let row = screening
            .lines()
            .find(|l| l.starts_with("| ") && l.contains(&format!("| {setting} |")))
            .unwrap_or_else(|| panic!("{setting}'s row\n{md}"));
        assert!(
            row.contains(" … ")
                && (row.contains("| raced |")
                    || row.contains("| moved; not raced (budget) |")
                    || row.contains("screened: no effect seen")),
            "{row}"
        );
    }
    assert!(md.contains("passes in the screening"), "{md}");
    // A known pair: screened together (its interaction measured), raced as one when both moved.
    assert!(
        md.contains("Interaction work_mem × hash_mem_multiplier: ×"),
        "{md}"
    );
    if md.matches("| raced |").count() == 2 {
        // One configuration of the pair's grid: both settings at their values in effect (the
        // pair in its ranking's order).
        assert!(
            md.contains("| work_mem=4MB hash_mem_multiplier=2 |")
                || md.contains("| hash_mem_multiplier=2 work_mem=4MB |"),
            "{md}"
        );
    }
    let sql = std::fs::read_to_string(dir.join("tune.sql")).unwrap();
    assert!(
        sql.contains("-- screening: each setting at the two ends"),
        "{sql}"
    );
    assert!(sql.contains("--   1. "), "{sql}");
    assert_accepted(&parse_script(&sql));
    assert!(!state_file().exists(), "a finished tune leaves no state");
    assert_own_settings();
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_flags_get_one_sentence_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["tune", "--budget", "1min"], "--workload"),
        (&["tune", "--workload", "ingest"], "--budget"),
        (
            &["tune", "--workload", "ingest", "--budget", "1s"],
            "too short",
        ),
        (
            &["tune", "--workload", "ingest", "--budget", "soon"],
            "--budget",
        ),
        (
            &["tune", "--workload", "nosuch", "--budget", "1min"],
            "nosuch",
        ),
        (
            &["tune", "--workload", "nosuch.sql", "--budget", "1min"],
            "no such file",
        ),
        (
            &[
                "tune",
                "--workload",
                "ingest",
                "--budget",
                "1min",
                "--param",
                "rows",
            ],
            "KEY=VALUE",
        ),
        (
            &[
                "tune",
                "--workload",
                "ingest",
                "--budget",
                "1min",
                "--param",
                "rows=lots",
            ],
            "rows",
        ),
        (
            &[
                "tune",
                "--workload",
                "ingest",
                "--budget",
                "1min",
                "--settings",
                "work-mem!",
            ],
            "not a setting name",
        ),
        (
            &[
                "tune",
                "--workload",
                "ingest",
                "--budget",
                "1min",
                "--settings",
                "synchronous_commit",
            ],
            "--param sync-commit",
        ),
        (
            &[
                "tune",
                "--workload",
                "index-build",
                "--budget",
                "1min",
                "--settings",
                "full_page_writes",
            ],
            "--allow-durability-tradeoff",
        ),
        (
            &[
                "--observe",
                "tune",
                "--workload",
                "ingest",
                "--budget",
                "1min",
            ],
            "look-only",
        ),
    ];
    for (args, needle) in cases {
        let out = own_lab().command().args(*args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: one sentence: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // --resume with nothing saved (its own data dir, so no other test's state is seen).
    let dir = temp_dir("tune-resume-none");
    let out = Command::new(TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["tune", "--resume"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no saved tune"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).ok();
}
