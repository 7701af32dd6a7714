//! What-if sweeps (`--set`) on a real sandbox: a session setting is recorded as SHOW reports
//! it; reload and restart settings take effect and are put back after the run, after a
//! cancel, and after pglab is killed (the next start repairs); the same settings against a
//! server pglab did not start are refused with exit 2 and the server is untouched; bad names,
//! units and ranges get a sentence each.

use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::{TestLab, lab};

/// The tests restart the one sandbox of this file: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn pglab(args: &[&str]) -> Command {
    let mut c = lab().command();
    c.arg("--keep-sandbox").args(args);
    c
}

fn run(args: &[&str]) -> Output {
    pglab(args).output().expect("pglab runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "pglab failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// `SHOW` of each name on a fresh session (starting the sandbox again if it is down).
fn show(names: &[&str]) -> Vec<String> {
    lab().show(names)
}

fn auto_conf() -> Vec<u8> {
    std::fs::read(lab().sandbox.data().join("postgresql.auto.conf")).unwrap_or_default()
}

/// The sandbox runs on its own settings: nothing in postgresql.auto.conf, no journal.
fn assert_own_settings() {
    let sb = &lab().sandbox;
    assert_eq!(
        sb.changed_settings(),
        vec![],
        "postgresql.auto.conf is clean"
    );
    assert!(!sb.whatif_pending(), "no what-if journal left");
    assert_eq!(show(&["shared_buffers", "max_wal_size"]), ["128MB", "1GB"]);
}

/// The report validates against the experiment's published schema.
fn valid(r: &serde_json::Value, schema: &str) {
    let schema: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(r)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// A small index-build (5k sorted rows, 1MB, one repeat) sweeping `set` (each `--set`).
fn small_build<'a>(set: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "index-build",
        "--rows",
        "5k",
        "--order",
        "sorted",
        "--mwm",
        "1MB",
        "--repeat",
        "1",
    ];
    for s in set {
        args.extend(["--set", s]);
    }
    args
}

fn settings_of(trials: &serde_json::Value, name: &str) -> Vec<String> {
    let mut v: Vec<String> = trials
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["warmup"] != true)
        .map(|t| t["settings"][name].as_str().unwrap_or("?").to_string())
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn a_session_setting_is_recorded_as_show_reports_it() {
    let _g = serial();
    let out = run(&[
        "run",
        "ingest",
        "--method",
        "copy",
        "--batch",
        "256",
        "--rows",
        "2k",
        "--repeat",
        "1",
        "--set",
        "work_mem=1024kB,64MB",
        "--set",
        "wal_compression=off,pglz",
        "--format",
        "json",
        "--no-history",
    ]);
    let r = json(&out);
    // SHOW writes 1024kB as 1MB: the record says what the server did, not what was typed.
    assert_eq!(settings_of(&r["trials"], "work_mem"), ["1MB", "64MB"]);
    assert_eq!(
        settings_of(&r["trials"], "wal_compression"),
        ["off", "pglz"]
    );
    assert_eq!(r["trials"].as_array().unwrap().len(), 4);
    assert_eq!(r["whatif"]["settings"][0]["apply"], "session");
    assert!(
        r["whatif"]["restarts"].is_null(),
        "no restart for session settings"
    );
    let groups = r["summary"]["groups"].as_array().unwrap();
    assert!(
        groups.iter().any(|g| g["question"] == "settings"),
        "the settings are a question of their own: {groups:?}"
    );
    valid(&r, include_str!("../../assets/schema/ingest.schema.json"));
    assert_own_settings();
}

#[test]
fn reload_and_restart_settings_take_effect_and_are_put_back() {
    let _g = serial();
    let mut args = small_build(&["max_wal_size=1GB,2GB", "shared_buffers=128MB,256MB"]);
    args.extend(["--format", "json", "--no-history"]);
    let out = run(&args);
    let r = json(&out);
    assert_eq!(
        settings_of(&r["trials"], "shared_buffers"),
        ["128MB", "256MB"]
    );
    assert_eq!(settings_of(&r["trials"], "max_wal_size"), ["1GB", "2GB"]);
    valid(
        &r,
        include_str!("../../assets/schema/index-build.schema.json"),
    );
    let w = &r["whatif"];
    assert_eq!(w["settings"][0]["apply"], "reload");
    assert_eq!(w["settings"][1]["apply"], "restart");
    // Two shared_buffers values: one restart into 256MB, one back (grouped, not per trial).
    let restarts = w["restarts"].as_array().unwrap();
    assert!(
        (2..=3).contains(&restarts.len()),
        "restarts grouped by value: {restarts:?}"
    );
    assert!(
        w["restored"]
            .as_str()
            .unwrap()
            .contains("own settings back")
    );
    assert_own_settings();
}

/// A query sweep of shared_buffers restarts the server between values, which empties its
/// caches: with `--cache warm` the statements run once untimed again after every restart, so
/// each trial ran warm as the report says, and the run says how.
#[test]
fn a_query_sweep_that_restarts_warms_again_after_each_restart() {
    let _g = serial();
    let out = run(&[
        "run",
        "query",
        "--sql",
        "SELECT count(*) FROM pg_class",
        "--set",
        "shared_buffers=128MB,256MB",
        "--repeat",
        "3",
        "--format",
        "json",
        "--no-history",
    ]);
    let r = json(&out);
    let restarts = r["whatif"]["restarts"].as_array().unwrap().len();
    let note = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("cache warm across restarts"))
        .unwrap_or_else(|| panic!("no re-warm note: {}", r["notes"]));
    // Each value's first visit warms anyway; every later visit came after a restart.
    assert!(
        restarts >= 3,
        "the rounds interleave the values: {restarts} restarts"
    );
    assert!(
        note.contains(&format!("({} times)", restarts - 2))
            || note.contains(&format!("({} times)", restarts - 1)),
        "{note} ({restarts} restarts)"
    );
    assert_own_settings();
}

/// Start a what-if run that takes a while, and wait until the sandbox shows the changed value.
fn start_long_run() -> Child {
    let child = pglab(&[
        "run",
        "index-build",
        "--rows",
        "20k",
        "--order",
        "random",
        "--mwm",
        "1MB",
        "--repeat",
        "30",
        "--set",
        "shared_buffers=256MB,128MB",
        "--no-history",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if lab().sandbox.live_postmaster().is_some()
            && std::panic::catch_unwind(|| show(&["shared_buffers"])).is_ok_and(|v| v[0] == "256MB")
        {
            break;
        }
        assert!(Instant::now() < end, "the run never changed shared_buffers");
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

#[test]
fn a_cancelled_run_puts_the_settings_back() {
    let _g = serial();
    let mut child = start_long_run();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "cancelled");
    assert_own_settings();
}

#[test]
fn a_killed_run_is_repaired_by_the_next_start() {
    let _g = serial();
    let mut child = start_long_run();
    child.kill().unwrap(); // SIGKILL: nothing of pglab runs after this
    child.wait().unwrap();
    let sb = &lab().sandbox;
    assert!(sb.whatif_pending(), "the journal is left");
    assert!(
        sb.changed_settings()
            .iter()
            .any(|(n, v)| n == "shared_buffers" && v == "256MB"),
        "{:?}",
        sb.changed_settings()
    );
    let status = run(&["sandbox", "status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("left by an interrupted what-if run"),
        "{text}"
    );
    // The next pglab start repairs: any command that opens the sandbox.
    let probe = run(&["probe"]);
    assert!(
        probe.status.success(),
        "{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    assert_own_settings();
}

#[test]
fn a_server_pglab_did_not_start_is_never_changed() {
    let _g = serial();
    let lab = lab();
    lab.sandbox.start().expect("up");
    // The sandbox, reached with --db, is "a server pglab did not start" for this run.
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.sandbox.live_postmaster().expect("running").1
    );
    let settings_before = pg_settings(&db);
    let conf_before = auto_conf();
    for set in ["shared_buffers=128MB,256MB", "max_wal_size=1GB,2GB"] {
        let out = Command::new(TestLab::bin())
            .env("PGLAB_DATA_DIR", &lab.paths.data_dir)
            .env("PGLAB_CONFIG_DIR", &lab.paths.config_dir)
            .args([
                "--db",
                &db,
                "run",
                "index-build",
                "--rows",
                "5k",
                "--set",
                set,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("pglab never changes or restarts a server it did not start"),
            "{err}"
        );
        assert!(
            err.contains("run it on the sandbox: pglab --sandbox"),
            "{err}"
        );
    }
    assert_eq!(pg_settings(&db), settings_before, "pg_settings unchanged");
    assert_eq!(
        auto_conf(),
        conf_before,
        "postgresql.auto.conf byte-identical"
    );
}

fn pg_settings(db: &str) -> String {
    let out = Command::new("psql")
        .args([db, "-XAtc", "SELECT string_agg(name || '=' || setting || ':' || source, ',' ORDER BY name) FROM pg_settings"])
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            // psql missing: the same reading through pglab's own driver.
            let lab = lab();
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let c = lab.target().connect().await.unwrap();
                c.query_one("SELECT string_agg(name || '=' || setting || ':' || source, ',' ORDER BY name) FROM pg_settings", &[])
                    .await
                    .unwrap()
                    .get(0)
            })
        }
    }
}

#[test]
fn bad_names_units_and_ranges_get_a_sentence_each() {
    let _g = serial();
    for (set, needle) in [
        ("shared_bufers=128MB", "did you mean shared_buffers"),
        ("max_wal_size=1XB", "not a size unit"),
        ("max_wal_size=1MB", "below the minimum of max_wal_size, 2MB"),
        (
            "checkpoint_timeout=2d",
            "above the maximum of checkpoint_timeout",
        ),
        ("wal_compression=maybe", "is not a value of wal_compression"),
        ("temp_buffers=lots", "temp_buffers takes a number"),
        ("block_size=16384", "cannot be changed"),
        ("maintenance_work_mem=1MB,2MB", "sweep it with --mwm"),
    ] {
        let out = run(&["run", "index-build", "--rows", "5k", "--set", set]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert!(err.contains(needle), "{set}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
    }
    assert_own_settings();
}

#[test]
fn a_restart_is_refused_while_another_pglab_uses_the_sandbox() {
    let _g = serial();
    // This test process takes a lease, as a second pglab (a TUI, another run) would.
    let lease = lab().sandbox.lease().expect("lease");
    let out = run(&[
        "run",
        "index-build",
        "--rows",
        "5k",
        "--set",
        "shared_buffers=128MB,256MB",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("another pglab is using the sandbox (pid"),
        "{err}"
    );
    // Session settings change nobody else's runs: allowed.
    let out = run(&[
        "run",
        "ingest",
        "--method",
        "copy",
        "--batch",
        "256",
        "--rows",
        "1k",
        "--repeat",
        "1",
        "--set",
        "work_mem=1MB,2MB",
        "--no-history",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(lease);
    assert_own_settings();
}

/// A panic in the middle of a what-if run (forced by the test-only fault hook) still puts the
/// sandbox's own settings back before the what-if lock is released: the run ends with a
/// sentence, and no later start is needed to repair it.
#[test]
fn a_panic_mid_run_puts_the_settings_back() {
    let _g = serial();
    let mut args = small_build(&["shared_buffers=256MB,128MB"]);
    args.push("--no-history");
    let out = pglab(&args)
        .env("PGLAB_FAULT", "after-whatif-change")
        .output()
        .expect("pglab runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("PGLAB_FAULT"),
        "the panic is the planted one: {err}"
    );
    assert!(
        err.contains("own settings back"),
        "the run says it restored: {err}"
    );
    // Checked before anything starts the sandbox again (a start would repair on its own).
    let sb = &lab().sandbox;
    assert_eq!(
        sb.changed_settings(),
        vec![],
        "postgresql.auto.conf is clean"
    );
    assert!(!sb.whatif_pending(), "no what-if journal left");
    assert!(!sb.whatif_live(), "the what-if lock is released");
    assert_own_settings();
}

/// The what-if lock is taken before the run's first trial (before its dataset is even
/// made): a second pglab that starts meanwhile is refused instead of measuring settings the
/// first one is about to change.
#[test]
fn a_second_pglab_is_refused_while_a_whatif_run_prepares() {
    use std::io::{BufRead, BufReader};
    let _g = serial();
    let mut first = pglab(&[
        "run",
        "index-build",
        "--rows",
        "400k",
        "--order",
        "random",
        "--mwm",
        "64MB",
        "--repeat",
        "1",
        "--set",
        "shared_buffers=256MB,128MB",
        "--no-history",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn");
    let mut lines = BufReader::new(first.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    loop {
        let line = lines.next().expect("the first run goes on").unwrap();
        seen.push(line.clone());
        if line.contains("generating dataset") {
            break;
        }
        assert!(
            !line.contains("CREATE INDEX") && seen.len() < 200,
            "no dataset step seen: {seen:?}"
        );
    }
    let mut args = small_build(&[]);
    args.push("--no-history");
    let second = run(&args);
    let err = String::from_utf8_lossy(&second.stderr);
    for l in lines.by_ref() {
        seen.push(l.unwrap());
    }
    let status = first.wait().unwrap();
    assert!(status.success(), "the first run finishes: {seen:?}");
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("what-if run of another pglab"),
        "the second one is refused with a sentence: {err}"
    );
    assert_own_settings();
}

/// Restart values take turns round by round (ABAB…) in ingest and growth as in index-build:
/// never all repeats of one value in one block; each turn costs a restart, none of it inside
/// a trial.
#[test]
fn restart_values_alternate_round_by_round() {
    let _g = serial();
    let r = json(&run(&[
        "run",
        "ingest",
        "--method",
        "copy",
        "--batch",
        "256",
        "--rows",
        "1k",
        "--repeat",
        "3",
        "--set",
        "shared_buffers=128MB,256MB",
        "--format",
        "json",
        "--no-history",
    ]));
    let seq: Vec<&str> = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["settings"]["shared_buffers"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(seq, ["128MB", "256MB", "128MB", "256MB", "128MB", "256MB"]);
    // Five turns into the other value (the first is the sandbox's own), one back after.
    let restarts = r["whatif"]["restarts"].as_array().unwrap().len();
    assert!((5..=6).contains(&restarts), "{restarts} restarts");
    assert_own_settings();

    let g = json(&run(&[
        "run",
        "growth",
        "--units",
        "100",
        "--steps",
        "0,2",
        "--design",
        "snapshot",
        "--repeat",
        "3",
        "--set",
        "shared_buffers=128MB,256MB",
        "--format",
        "json",
        "--no-history",
    ]));
    let measured: Vec<&serde_json::Value> = g["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["projected"] != true)
        .collect();
    assert_eq!(measured.len(), 4, "two steps × two values");
    for s in &measured {
        assert_eq!(s["write_repeats"].as_array().unwrap().len(), 3, "{s}");
        assert_eq!(s["read_repeats"].as_array().unwrap().len(), 3, "{s}");
    }
    // In blocks a step would cost one restart; taking turns, every round of writes and of
    // reads does (2 steps × (3 + 3 rounds) × 2 values, less the turns that stay).
    let restarts = g["whatif"]["restarts"].as_array().unwrap().len();
    assert!(
        restarts >= 20,
        "{restarts} restarts: the values did not take turns"
    );
    assert_own_settings();
}
