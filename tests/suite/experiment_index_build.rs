//! index-build against the sandbox with small tables: exact orders, one trial per
//! combination, the server's worker rule, cancel leaving nothing behind, the JSON schema.

use crate::common;

use std::time::{Duration, Instant};

use pglab::experiment::{
    self, ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};

fn spec(pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ExperimentKind::IndexBuild.parse_spec(&p).unwrap()
}

fn opts(schema: &str) -> RunOptions {
    RunOptions {
        schema: schema.into(),
        ..RunOptions::default()
    }
}

async fn run_to_end(spec: ExperimentSpec, schema: &str) -> RunReport {
    let mut h = experiment::spawn(common::lab().target(), spec, opts(schema));
    while let Some(ev) = h.events.recv().await {
        match ev {
            RunEvent::Finished(r) => return *r,
            RunEvent::Failed { error, .. } => panic!("run failed: {error}"),
            RunEvent::Cancelled(_) => panic!("cancelled"),
            _ => {}
        }
    }
    panic!("no final event")
}

fn body(r: &RunReport) -> &pglab::experiment::index_build::IndexBuildReport {
    match &r.body {
        ReportBody::IndexBuild(b) => b,
        _ => panic!("not index-build"),
    }
}

#[tokio::test]
async fn orders_are_generated_exactly() {
    let r = run_to_end(
        spec(&[
            ("rows", "20k"),
            ("order", "sorted,reverse,random,partial:5"),
            ("mwm", "1MB"),
            ("repeat", "1"),
        ]),
        "ib_orders",
    )
    .await;
    let b = body(&r);
    assert_eq!(b.datasets.len(), 4);
    for d in &b.datasets {
        let c = d.correlation.expect("pg_stats correlation after ANALYZE");
        match d.order.name().as_str() {
            "sorted" => assert!(c > 0.99, "sorted {c}"),
            "reverse" => assert!(c < -0.99, "reverse {c}"),
            "random" => assert!(c.abs() < 0.1, "random {c}"),
            _ => assert!(c > 0.8 && c < 0.999, "partial {c}"),
        }
        assert_eq!(d.rows, 20_000);
    }
    let client = common::lab().target().connect().await.unwrap();
    let n: i64 = client
        .query_one(
            "SELECT count(DISTINCT id) FROM ib_orders.ib_int4_random_20000_s42",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 20_000);
    // A second run reuses the datasets and says so.
    let again = run_to_end(
        spec(&[
            ("rows", "20k"),
            ("order", "random"),
            ("mwm", "1MB"),
            ("repeat", "1"),
        ]),
        "ib_orders",
    )
    .await;
    assert!(body(&again).datasets[0].reused);
    assert!(
        again.notes.iter().any(|n| n.contains("reusing dataset")),
        "{:?}",
        again.notes
    );
}

#[tokio::test]
async fn sweep_gives_one_trial_per_combination_and_valid_json() {
    let r = run_to_end(
        spec(&[
            ("rows", "30k"),
            ("order", "sorted,random"),
            ("mwm", "1MB,16MB"),
            ("workers", "0,1"),
            ("repeat", "2"),
            ("warmup", "on"),
            ("shuffle", "on"),
        ]),
        "ib_sweep",
    )
    .await;
    let b = body(&r);
    let timed: Vec<_> = b.trials.iter().filter(|t| !t.warmup).collect();
    assert_eq!(timed.len(), 2 * 2 * 2 * 2);
    assert_eq!(b.trials.iter().filter(|t| t.warmup).count(), 2);
    for order in ["sorted", "random"] {
        for w in [0u32, 1] {
            for m in ["1MB", "16MB"] {
                let n = timed
                    .iter()
                    .filter(|t| {
                        t.order.name() == order
                            && t.workers_requested == w
                            && t.maintenance_work_mem == m
                    })
                    .count();
                assert_eq!(n, 2, "{order} {w} {m}");
            }
        }
    }
    for t in &b.trials {
        assert!(t.seconds > 0.0 && t.seconds < 60.0);
        assert!(t.index_bytes > 0);
        assert!(t.temp_bytes >= 0);
        assert!(t.checkpoint);
        assert_eq!(t.rows, 30_000);
    }
    // At 1MB the sort spills; at 16MB 30k int4 keys sort in memory.
    assert!(
        timed
            .iter()
            .filter(|t| t.maintenance_work_mem == "1MB")
            .all(|t| t.sort.as_deref().unwrap_or("").contains("external"))
    );
    assert_eq!(b.summary.groups.len(), 4);
    assert!(!b.summary.findings.is_empty());

    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../assets/schema/index-build.schema.json")).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    // Nothing of the run is left but the reusable datasets.
    let client = common::lab().target().connect().await.unwrap();
    let idx: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = 'ib_sweep'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(idx, 0);
}

/// PostgreSQL's rule (plan_create_index_workers): the table's size caps the workers, and each
/// participant (leader included) needs 32MB of maintenance_work_mem.
fn expected_workers(requested: u32, mwm_mb: u64, heap_pages: i64) -> u32 {
    let by_size = if heap_pages < 1024 {
        0
    } else {
        let mut w = 1;
        let mut t = 1024 * 3;
        while heap_pages >= t {
            w += 1;
            t *= 3;
        }
        w
    };
    let mut w = requested.min(by_size);
    while w > 0 && mwm_mb / (w as u64 + 1) < 32 {
        w -= 1;
    }
    w
}

#[tokio::test]
async fn workers_launched_follow_the_server_rule() {
    let r = run_to_end(
        spec(&[
            ("rows", "200k"),
            ("order", "sorted"),
            ("mwm", "32MB,64MB,128MB"),
            ("workers", "2"),
            ("repeat", "1"),
        ]),
        "ib_workers",
    )
    .await;
    let b = body(&r);
    let pages = b.datasets[0].heap_bytes / 8192;
    for t in &b.trials {
        let mb = t.maintenance_work_mem_bytes >> 20;
        assert_eq!(
            t.workers_launched,
            expected_workers(2, mb, pages),
            "{} with {pages} pages",
            t.maintenance_work_mem
        );
    }
    assert!(
        b.trials.iter().any(|t| t.workers_launched > 0),
        "some trial must run in parallel"
    );
}

#[tokio::test]
async fn cancel_mid_build_leaves_no_index_and_a_usable_server() {
    let target = common::lab().target();
    let s = spec(&[
        ("rows", "150k"),
        ("key", "text"),
        ("order", "random"),
        ("mwm", "1MB"),
        ("repeat", "20"),
    ]);
    let mut h = experiment::spawn(target.clone(), s, opts("ib_cancel"));
    let mut asked: Option<Instant> = None;
    let report = loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match ev {
            RunEvent::Progress(p)
                if asked.is_none()
                    && p.trial.is_some()
                    && p.phase.starts_with("building index") =>
            {
                asked = Some(Instant::now());
                h.cancel.cancel();
            }
            RunEvent::Cancelled(r) => break r,
            RunEvent::Finished(_) => panic!("finished before the cancel"),
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    };
    let took = asked.unwrap().elapsed();
    assert!(took < Duration::from_secs(3), "cancel took {took:?}");
    assert!(body(&report).trials.len() < 20);
    let client = target.connect().await.unwrap();
    let idx: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = 'ib_cancel'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(idx, 0, "no index left");
    let active: i64 = client
        // Only this test's schema: the other tests of this file build indexes beside it.
        .query_one("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX%ib_cancel.%' AND state = 'active'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(active, 0, "the server-side build was cancelled");
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM ib_cancel.ib_text_random_150000_s42",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 150_000, "the dataset is intact and the server usable");
    // The cancelled run says what it left, with its size and how to drop it.
    let kept = report
        .notes
        .iter()
        .find(|n| {
            n.starts_with("kept for reuse in schema ib_cancel: dataset ib_text_random_150000_s42 (")
        })
        .unwrap_or_else(|| panic!("no kept note in {:#?}", report.notes));
    assert!(
        kept.contains(" MB); ") && kept.contains("`pglab clean --datasets` drops it"),
        "{kept}"
    );
}

#[tokio::test]
async fn cancel_during_generation_leaves_no_table() {
    let target = common::lab().target();
    let s = spec(&[
        ("rows", "200k"),
        ("key", "uuid"),
        ("order", "random"),
        ("mwm", "1MB"),
        ("repeat", "1"),
    ]);
    let mut h = experiment::spawn(target.clone(), s, opts("ib_gencancel"));
    let report = loop {
        match h.events.recv().await.unwrap() {
            RunEvent::Phase { phase, .. } if phase.starts_with("generating") => h.cancel.cancel(),
            RunEvent::Cancelled(r) => break r,
            RunEvent::Finished(_) => panic!("finished"),
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    };
    assert!(
        !report.notes.iter().any(|n| n.starts_with("kept for reuse")),
        "nothing is kept: {:#?}",
        report.notes
    );
    let client = target.connect().await.unwrap();
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'ib_gencancel'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "the half-made dataset was dropped");
}

#[tokio::test]
async fn an_unprivileged_role_runs_with_checkpoint_skipped_and_fields_marked() {
    let lab = common::lab();
    let admin = lab.target().connect().await.unwrap();
    admin
        .batch_execute("CREATE ROLE bob LOGIN; GRANT CREATE ON DATABASE pglab TO bob")
        .await
        .unwrap();
    lab.allow_role(&admin, "bob").await;
    let mut params = lab.sandbox.conn_params(lab.port);
    params.user = "bob".into();
    let target = std::sync::Arc::new(pglab::server::Target::new(params, true).unwrap());
    let c = target.connect().await.unwrap();
    let snap = pglab::server::snapshot::read(&c, &target).await.unwrap();
    assert!(!snap.superuser && !snap.can_checkpoint);
    assert!(
        snap.settings["data_directory"].value().is_none(),
        "marked, not an error"
    );
    let mut h = experiment::spawn(
        target,
        spec(&[
            ("rows", "5k"),
            ("order", "sorted"),
            ("mwm", "1MB"),
            ("repeat", "1"),
        ]),
        opts("ib_bob"),
    );
    let r = loop {
        match h.events.recv().await.unwrap() {
            RunEvent::Finished(r) => break r,
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    };
    let b = body(&r);
    assert!(b.trials.iter().all(|t| !t.checkpoint));
    assert!(
        b.summary
            .confounders
            .iter()
            .any(|c| c.contains("CHECKPOINT skipped")),
        "{:?}",
        b.summary.confounders
    );
}

/// Headless, a run says what it will cost before it starts — trials, rows and a time — and
/// labels its progress as the TUI does.
#[test]
fn a_headless_run_prints_its_estimate_first() {
    let lab = common::lab();
    let out = lab
        .command()
        .args([
            "--db",
            &lab.db(),
            "run",
            "index-build",
            "--rows",
            "5k",
            "--writes",
            "lab",
        ])
        .args(["--order", "random", "--mwm", "1MB,4MB", "--repeat", "1"])
        .args(["--no-history"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let first = err
        .lines()
        .find(|l| l.contains("estimate:"))
        .unwrap_or_else(|| panic!("no estimate line: {err}"));
    assert!(
        first.contains("2 trials × 5000 rows") && first.contains("time"),
        "{first}"
    );
    let est = err.find("estimate:").unwrap();
    assert!(
        err.find("trial 1").is_none_or(|t| t > est),
        "the estimate comes before the first trial: {err}"
    );
}
