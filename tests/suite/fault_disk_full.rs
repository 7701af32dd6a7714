//! Disk full during a run, in its own file (its own sandbox): a full tablespace makes
//! checkpoints fail, which would disturb other tests sharing the server.

use crate::common;

use std::time::Duration;

use pglab::experiment::{self, ExperimentKind, ExperimentSpec, ParamText, RunEvent, RunOptions};
use pglab::server::Target;

fn spec(pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ExperimentKind::IndexBuild.parse_spec(&p).unwrap()
}

#[tokio::test]
async fn disk_full_is_said_plainly_and_the_server_stays_up() {
    let lab = common::lab();
    let Some(mnt) = common::tmpfs("disk-full", "24m") else {
        return;
    };
    if let Some((uid, gid, _)) = &lab.sandbox.run_as {
        nix::unistd::chown(&mnt, Some(*uid), Some(*gid)).unwrap();
    }
    let admin = lab.target().connect().await.unwrap();
    admin
        .batch_execute(&format!(
            "CREATE TABLESPACE small LOCATION '{}'",
            mnt.display()
        ))
        .await
        .unwrap();
    admin
        .batch_execute("CREATE DATABASE fulldb TABLESPACE small")
        .await
        .unwrap();
    let mut params = lab.sandbox.conn_params(lab.port);
    params.dbname = "fulldb".into();
    let target = std::sync::Arc::new(Target::new(params, true).unwrap());
    let opts = RunOptions {
        schema: "fault_full".into(),
        ..RunOptions::default()
    };
    let mut h = experiment::spawn(
        target.clone(),
        spec(&[
            ("rows", "2M"),
            ("order", "sorted"),
            ("mwm", "1MB"),
            ("repeat", "1"),
        ]),
        opts,
    );
    let error = loop {
        match tokio::time::timeout(Duration::from_secs(120), h.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            RunEvent::Failed { error, .. } => break error,
            RunEvent::Finished(_) => panic!("a 2M-row table cannot fit in 24MB"),
            _ => {}
        }
    };
    assert!(error.contains("disk full"), "{error}");
    let c = target.connect().await.expect("the server stays up");
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'fault_full'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        n, 0,
        "the half-loaded table was dropped, giving the space back"
    );
    drop(c);
    admin.batch_execute("DROP DATABASE fulldb").await.unwrap();
    admin.batch_execute("DROP TABLESPACE small").await.unwrap();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
}
