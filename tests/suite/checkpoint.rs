//! No CHECKPOINT on a server pglab did not start unless asked (`--checkpoint on`): every
//! experiment's trials record that none was taken and the summary says what that means. On
//! the sandbox pglab keeps taking one before each trial. Its own binary and sandbox: the
//! server's checkpoint counter must see no other test's work.

use crate::common;

use std::process::Output;
use std::sync::Mutex;

/// The tests count the server's checkpoints: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Checkpoints requested so far (CHECKPOINT statements count here; timed ones do not).
fn requested() -> i64 {
    let lab = common::lab();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        lab.target()
            .connect()
            .await
            .unwrap()
            .query_one("SELECT checkpoints_req FROM pg_stat_bgwriter", &[])
            .await
            .unwrap()
            .get(0)
    })
}

fn json(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "pglab failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

const RUNS: &[&[&str]] = &[
    &[
        "index-build",
        "--rows",
        "5k",
        "--order",
        "random",
        "--mwm",
        "1MB",
        "--repeat",
        "2",
        // The runs go through --db, as to a server pglab did not start: their generated
        // tables are asked for (and dropped at the end).
        "--writes",
        "lab",
    ],
    &[
        "ingest", "--method", "copy", "--batch", "256", "--rows", "2k", "--repeat", "2",
        "--writes", "lab",
    ],
    &[
        "growth", "--units", "200", "--steps", "0,2", "--design", "snapshot", "--repeat", "1",
        "--writes", "lab",
    ],
];

/// The trials (or growth steps) of a report.
fn trials(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["trials"]
        .as_array()
        .or_else(|| r["steps"].as_array())
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t["projected"] != true && t["warmup"] != true)
        .collect()
}

#[test]
fn no_checkpoint_on_a_server_pglab_did_not_start() {
    let _g = serial();
    let lab = common::lab();
    for args in RUNS {
        let before = requested();
        let out = lab
            .command()
            .args(["--db", &lab.db(), "run"])
            .args(*args)
            .args(["--format", "json", "--no-history"])
            .output()
            .unwrap();
        let r = json(&out);
        assert_eq!(requested(), before, "{}: a CHECKPOINT was taken", args[0]);
        let ts = trials(&r);
        assert!(!ts.is_empty(), "{r}");
        for t in &ts {
            assert_eq!(t["checkpoint"], false, "{}: {t}", args[0]);
        }
        let confounders = r["summary"]["confounders"].to_string() + &r["notes"].to_string();
        assert!(
            confounders.contains("no CHECKPOINT"),
            "{}: the summary says none was taken: {confounders}",
            args[0]
        );
    }
}

#[test]
fn checkpoint_on_asks_for_one_before_each_trial() {
    let _g = serial();
    let lab = common::lab();
    let before = requested();
    let out = lab
        .command()
        .args(["--db", &lab.db(), "run"])
        .args(RUNS[0])
        .args(["--checkpoint", "on", "--format", "json", "--no-history"])
        .output()
        .unwrap();
    let r = json(&out);
    assert!(requested() >= before + 2, "one per build");
    for t in trials(&r) {
        assert_eq!(t["checkpoint"], true, "{t}");
    }
    // On pglab's own sandbox the default is on; off is honoured there too.
    let before = requested();
    let out = lab
        .command()
        .args(["--sandbox", "--keep-sandbox", "run"])
        .args(RUNS[1])
        .args(["--format", "json", "--no-history"])
        .output()
        .unwrap();
    json(&out);
    assert!(
        requested() >= before + 2,
        "the sandbox checkpoints by default"
    );
    let before = requested();
    let out = lab
        .command()
        .args(["--sandbox", "--keep-sandbox", "run"])
        .args(RUNS[1])
        .args(["--checkpoint", "off", "--format", "json", "--no-history"])
        .output()
        .unwrap();
    json(&out);
    assert_eq!(requested(), before, "--checkpoint off on the sandbox");
}

#[test]
fn a_bad_checkpoint_value_is_a_sentence() {
    let lab = common::lab();
    let out = lab
        .command()
        .args([
            "--db",
            &lab.db(),
            "run",
            "index-build",
            "--checkpoint",
            "sometimes",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("checkpoint"), "{err}");
}
