//! The fault matrix against the sandbox: a terminated builder, the server stopped mid-run, a
//! full disk, a read-only database. Each run fails with a sentence, cleans up with a fresh
//! session, and leaves the history readable.

use crate::common;

use std::time::Duration;

use pglab::experiment::{
    self, ExperimentKind, ExperimentSpec, ParamText, RunEvent, RunOptions, RunReport,
};
use pglab::paths::Paths;
use pglab::server::{Sandbox, Target};

fn spec(pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ExperimentKind::IndexBuild.parse_spec(&p).unwrap()
}

/// Run until the final event; call `during` once when a build is under way.
async fn run_with_fault(
    target: std::sync::Arc<Target>,
    spec: ExperimentSpec,
    opts: RunOptions,
    during: impl AsyncFnOnce(i32),
) -> Result<RunReport, (String, RunReport)> {
    let watcher = target.connect().await.unwrap();
    let mut h = experiment::spawn(target, spec, opts);
    let mut during = Some(during);
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(120), h.events.recv())
            .await
            .expect("final event in time")
            .expect("event");
        match ev {
            RunEvent::Progress(p) if p.trial.is_some() && during.is_some() => {
                let pid: Option<i32> = watcher
                    .query_opt("SELECT pid FROM pg_stat_progress_create_index LIMIT 1", &[])
                    .await
                    .ok()
                    .flatten()
                    .map(|r| r.get(0));
                if let Some(pid) = pid {
                    (during.take().unwrap())(pid).await;
                }
            }
            RunEvent::Finished(r) => return Ok(*r),
            RunEvent::Cancelled(r) => return Ok(*r),
            RunEvent::Failed { error, report } => return Err((error, *report)),
            _ => {}
        }
    }
}

#[tokio::test]
async fn terminated_builder_fails_the_run_with_a_sentence_and_cleans_up() {
    let lab = common::lab();
    let target = lab.target();
    let killer = target.connect().await.unwrap();
    let history = lab.dir.join("faults-history.jsonl");
    let opts = RunOptions {
        schema: "fault_term".into(),
        recorder: Some(pglab::history::recorder(history.clone())),
        ..RunOptions::default()
    };
    let s = spec(&[
        ("rows", "150k"),
        ("key", "text"),
        ("order", "random"),
        ("mwm", "1MB"),
        ("repeat", "10"),
    ]);
    let r = run_with_fault(target.clone(), s, opts, async |pid| {
        killer
            .query_one("SELECT pg_terminate_backend($1)", &[&pid])
            .await
            .unwrap();
    })
    .await;
    let (error, report) = r.expect_err("the run must fail");
    assert!(
        error.contains("ended the session") || error.contains("connection to the server was lost"),
        "{error}"
    );
    assert_eq!(report.outcome, pglab::experiment::Outcome::Failed);
    let c = target.connect().await.unwrap();
    let idx: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = 'fault_term'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(idx, 0, "cleanup by a fresh session dropped the index");
    let text = std::fs::read_to_string(&history).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "failed");
}

#[tokio::test]
async fn server_stopped_mid_run_fails_with_a_sentence_and_history_survives() {
    let dir = common::temp_dir("fault-stop");
    let paths = Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sb = Sandbox::locate(&paths, None, None).unwrap();
    let port = sb.start().unwrap();
    let target = std::sync::Arc::new(Target::new(sb.conn_params(port), true).unwrap());
    let history = dir.join("history.jsonl");
    let opts = RunOptions {
        schema: "fault_stop".into(),
        recorder: Some(pglab::history::recorder(history.clone())),
        ..RunOptions::default()
    };
    let s = spec(&[
        ("rows", "150k"),
        ("key", "text"),
        ("order", "random"),
        ("mwm", "1MB"),
        ("repeat", "10"),
    ]);
    let sb2 = sb.clone();
    let r = run_with_fault(target.clone(), s, opts, async move |_| {
        let mut c = std::process::Command::new(sb2.bin.tool("pg_ctl"));
        c.arg("-D")
            .arg(sb2.data())
            .args(["-m", "immediate", "-w", "stop"]);
        if let Some((uid, gid, _)) = &sb2.run_as {
            use std::os::unix::process::CommandExt;
            c.uid(uid.as_raw()).gid(gid.as_raw()).current_dir(&sb2.root);
        }
        assert!(c.output().unwrap().status.success());
    })
    .await;
    let (error, _) = r.expect_err("the run must fail");
    assert!(
        error.contains("shutting down")
            || error.contains("connection to the server was lost")
            || error.contains("ended the session"),
        "{error}"
    );
    let text = std::fs::read_to_string(&history).unwrap();
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    // The server comes back and is usable; the next run cleans what the crash left.
    let port = sb.start().unwrap();
    let target = Target::new(sb.conn_params(port), true).unwrap();
    target.connect().await.unwrap();
    sb.destroy().unwrap();
}

#[tokio::test]
async fn read_only_database_is_refused_with_the_reason() {
    let lab = common::lab();
    let admin = lab.target().connect().await.unwrap();
    admin.batch_execute("CREATE DATABASE rodb").await.unwrap();
    admin
        .batch_execute("ALTER DATABASE rodb SET default_transaction_read_only = on")
        .await
        .unwrap();
    let mut params = lab.sandbox.conn_params(lab.port);
    params.dbname = "rodb".into();
    let target = std::sync::Arc::new(Target::new(params, true).unwrap());
    let mut h = experiment::spawn(
        target,
        spec(&[("rows", "1k"), ("mwm", "1MB"), ("repeat", "1")]),
        RunOptions::default(),
    );
    let error = loop {
        match h.events.recv().await.unwrap() {
            RunEvent::Failed { error, .. } => break error,
            RunEvent::Finished(_) => panic!("must refuse"),
            _ => {}
        }
    };
    assert!(error.contains("default_transaction_read_only"), "{error}");
    let _ = admin.batch_execute("DROP DATABASE rodb").await;
}
