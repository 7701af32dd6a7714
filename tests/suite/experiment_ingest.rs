//! The ingest experiment against a real sandbox: exact row counts for every method, exact
//! splits among clients, the √2 ladder, synchronous_commit really set, cancel and a dying
//! client leaving no table, time limits, appending, repeats by rounds with verdicts
//! (`insert` against `copy`, `repeat auto` within its cap), and the JSON schema.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pglab::experiment::ingest::{self, IngestReport, Method, StopReason, SyncCommit};
use pglab::experiment::{
    self, Emitter, ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunCtx, RunEvent,
    RunOptions, RunReport, lab::preflight,
};
use pglab::server::{Target, snapshot};
use tokio_util::sync::CancellationToken;

/// A spec from `pairs`; one trial per configuration unless `repeat` is given (these tests
/// check what a trial does, not verdicts).
/// A spec from these fields over one repeat of 10k rows with no time limit (the tests' own
/// base: small, and every trial ends by its rows).
fn spec(pairs: &[(&str, &str)]) -> ExperimentSpec {
    let mut p: ParamText = ParamText::from([
        ("repeat".to_string(), "1".to_string()),
        ("rows".to_string(), "10k".to_string()),
        ("duration".to_string(), "off".to_string()),
    ]);
    p.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    ExperimentKind::Ingest.parse_spec(&p).expect("valid spec")
}

fn body(r: &RunReport) -> &IngestReport {
    match &r.body {
        ReportBody::Ingest(b) => b,
        _ => panic!("not an ingest report"),
    }
}

static SCHEMA: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();

/// A RunCtx on the lab's sandbox, for calling the experiment's parts directly.
async fn direct_ctx(target: Arc<Target>) -> RunCtx {
    let control = target.connect().await.unwrap();
    let server = snapshot::read(&control, &target).await.unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    RunCtx::new(
        target,
        Emitter::new(tx),
        CancellationToken::new(),
        "test".into(),
        RunOptions::default(),
        server,
        pglab::host::HostSnapshot::read(None),
    )
}

/// Start a run once the lab schema exists (runs starting together on a fresh server would
/// otherwise race to create it).
async fn start(
    target: Arc<Target>,
    spec: ExperimentSpec,
    opts: RunOptions,
) -> experiment::RunHandle {
    SCHEMA
        .get_or_init(|| async {
            let ctx = direct_ctx(target.clone()).await;
            let c = target.connect().await.unwrap();
            ctx.ensure_schema(&c).await.unwrap();
        })
        .await;
    experiment::spawn(target, spec, opts)
}

/// Run to the end; returns every event, the last being final.
async fn run_all(target: Arc<Target>, spec: ExperimentSpec) -> Vec<RunEvent> {
    run_with(target, spec, RunOptions::default()).await
}

async fn run_with(target: Arc<Target>, spec: ExperimentSpec, opts: RunOptions) -> Vec<RunEvent> {
    let mut h = start(target, spec, opts).await;
    let mut events = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(120), h.events.recv())
        .await
        .expect("run finishes within 2 min")
    {
        let last = ev.is_final();
        events.push(ev);
        if last {
            break;
        }
    }
    events
}

fn finished(events: &[RunEvent]) -> &RunReport {
    match events.last() {
        Some(RunEvent::Finished(r)) => r,
        Some(RunEvent::Failed { error, .. }) => panic!("run failed: {error}"),
        other => panic!("unexpected end: {other:?}"),
    }
}

fn schema_check(report: &RunReport) {
    let schema: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/schema/ingest.schema.json"
    )))
    .expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let json = serde_json::to_value(report).expect("report serialises");
    let errors: Vec<String> = v
        .iter_errors(&json)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

/// The name every table of a run starts with.
fn table_prefix(run_id: &str) -> String {
    format!(
        "ingest_{}",
        run_id
            .to_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    )
}

/// Tables of a run still in the lab schema.
async fn run_tables(target: &Target, run_id: &str) -> i64 {
    let c = target.connect().await.unwrap();
    let prefix = table_prefix(run_id);
    c.query_one(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'pglab' AND starts_with(tablename, $1)",
        &[&prefix],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_method_inserts_exactly_the_rows_split_exactly() {
    let lab = common::lab();
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "insert,insert-tx,values,copy"),
            ("rows", "1001"),
            ("batch", "64"),
            ("clients", "1,3"),
            ("sync-commit", "off"),
        ]),
    )
    .await;
    assert!(
        matches!(events.first(), Some(RunEvent::Started { trials: 8, .. })),
        "Started comes first: {:?}",
        events.first()
    );
    let samples = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Sample(_)))
        .count();
    assert_eq!(samples, 8);
    let report = finished(&events);
    let b = body(report);
    assert_eq!(b.trials.len(), 8);
    for t in &b.trials {
        let what = format!("{} ×{}", t.method.as_str(), t.clients);
        assert_eq!(t.rows, 1001, "{what}");
        assert_eq!(t.rows_counted, 1001, "{what}: count(*) of the table");
        assert_eq!(t.client_rows, ingest::split_rows(1001, t.clients), "{what}");
        assert_eq!(t.synchronous_commit, SyncCommit::Off);
        assert_eq!(t.stopped_by, StopReason::Rows);
        assert!(t.wal_bytes > 0 && t.rows_per_s > 0.0, "{what}");
        let expected_commits: u64 = match t.method {
            Method::Insert => 1001,
            _ => t.client_rows.iter().map(|r| r.div_ceil(64)).sum(),
        };
        assert_eq!(t.commits, expected_commits, "{what}");
        assert!(t.latency_ms.p50 <= t.latency_ms.p99 && t.latency_ms.p99 <= t.latency_ms.max);
        // The load generator's own CPU is recorded beside the host's.
        assert!(
            t.client_cpu_s >= 0.0 && t.client_cpu_s < 60.0,
            "{what}: {}",
            t.client_cpu_s
        );
        assert!((0.0..=1.0).contains(&t.client_cpu_share), "{what}");
        if let Some(h) = t.host_cpu_share {
            assert!((0.0..=1.0).contains(&h), "{what}: host {h}");
        }
    }
    assert!(
        b.trials.iter().any(|t| t.client_cpu_s > 0.0),
        "some trial used measurable CPU"
    );
    assert_eq!(
        b.trials
            .iter()
            .find(|t| t.clients == 3)
            .map(|t| t.client_rows.clone()),
        Some(vec![334, 334, 333])
    );
    assert_eq!(b.summary.best.len(), 4);
    assert_eq!(b.summary.configs.len(), 8);
    // One trial each: every question is too few trials, and no winner is named.
    assert!(!b.summary.groups.is_empty());
    for g in &b.summary.groups {
        assert_eq!(
            g.verdict.map(|v| v.as_str()),
            Some("too few trials"),
            "{g:?}"
        );
        assert_eq!(g.winner, None);
    }
    assert!(!b.summary.findings.is_empty());
    assert_eq!(run_tables(&lab.target(), &report.run_id).await, 0);
    schema_check(report);
}

#[test]
fn sqrt2_ladder_expands_to_19_batches() {
    let ExperimentSpec::Ingest(s) = spec(&[("batch", "sqrt2")]) else {
        panic!()
    };
    assert_eq!(
        s.batches,
        [
            1, 2, 4, 5, 8, 11, 16, 22, 32, 45, 64, 90, 128, 181, 256, 362, 512, 724, 1024
        ]
    );
}

#[tokio::test]
async fn synchronous_commit_off_is_in_effect_in_the_loading_session() {
    let lab = common::lab();
    let target = lab.target();
    let control = target.connect().await.unwrap();
    let ctx = direct_ctx(target.clone()).await;
    for sync in [SyncCommit::Off, SyncCommit::On] {
        let s = ingest::open_session(&ctx, sync).await.unwrap();
        let shown: String = s
            .query_one("SHOW synchronous_commit", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(shown, sync.as_str());
    }
    // And the server default is untouched.
    let shown: String = control
        .query_one("SHOW synchronous_commit", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(shown, "on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_every_client_and_leaves_no_table() {
    cancel_mid_load(&[
        ("method", "insert"),
        ("rows", "1M"),
        ("clients", "2"),
        ("sync-commit", "on"),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_pipelined_load_and_leaves_no_table() {
    // libpq's pipeline mode: the cancel reaches a pipeline in flight.
    cancel_mid_load(&[
        ("method", "insert-tx"),
        ("pipeline", "on"),
        ("batch", "2000"),
        ("rows", "10M"),
        ("clients", "2"),
        ("sync-commit", "on"),
    ])
    .await;
}

async fn cancel_mid_load(pairs: &[(&str, &str)]) {
    let lab = common::lab();
    let target = lab.target();
    let mut h = start(target.clone(), spec(pairs), RunOptions::default()).await;
    let mut cancelled_at = None;
    let report = loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("events keep coming")
            .expect("a final event");
        match ev {
            RunEvent::Progress(p) if cancelled_at.is_none() => {
                assert_eq!(p.rate_unit, "rows/s");
                cancelled_at = Some(Instant::now());
                h.cancel.cancel();
            }
            RunEvent::Cancelled(r) => break r,
            e if e.is_final() => panic!("not cancelled: {e:?}"),
            _ => {}
        }
    };
    let took = cancelled_at.expect("saw progress").elapsed();
    assert!(took < Duration::from_secs(3), "cancel took {took:?}");
    assert_eq!(run_tables(&target, &report.run_id).await, 0);
    // No loading session is left working on the server.
    let c = target.connect().await.unwrap();
    let busy: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE state <> 'idle' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0",
            &[&table_prefix(&report.run_id)],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(busy, 0);
    schema_check(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_losing_its_connection_fails_the_trial_and_drops_the_table() {
    let lab = common::lab();
    let target = lab.target();
    let mut h = start(
        target.clone(),
        spec(&[
            ("method", "insert-tx"),
            ("batch", "4"),
            ("rows", "1M"),
            ("clients", "2"),
            ("sync-commit", "on"),
        ]),
        RunOptions::default(),
    )
    .await;
    let killer = target.connect().await.unwrap();
    let mut table = String::new();
    let mut killed = false;
    let (error, report) = loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), h.events.recv())
            .await
            .expect("events keep coming")
            .expect("a final event");
        match ev {
            RunEvent::Started { run_id, .. } => table = table_prefix(&run_id),
            // Terminate one of this run's loading sessions (retrying until one is caught
            // showing its INSERT rather than BEGIN or COMMIT).
            RunEvent::Progress(_) if !killed => {
                let n: i64 = killer
                    .query_one(
                        "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
                          WHERE pid <> pg_backend_pid() AND strpos(query, $1) > 0
                          ORDER BY pid LIMIT 1) s",
                        &[&table],
                    )
                    .await
                    .unwrap()
                    .get(0);
                killed = n == 1;
            }
            RunEvent::Failed { error, report } => break (error, report),
            e if e.is_final() => panic!("expected a failure: {e:?}"),
            _ => {}
        }
    };
    assert!(
        killed,
        "the run ended before a session was terminated: {error}"
    );
    assert!(
        error.contains("client") && error.contains("of 2"),
        "{error}"
    );
    assert!(
        error.contains("ended the session") || error.contains("connection"),
        "{error}"
    );
    assert_eq!(run_tables(&target, &report.run_id).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_limit_ends_the_trial_with_exact_counts() {
    let lab = common::lab();
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "copy"),
            ("batch", "100"),
            ("rows", "10M"),
            ("duration", "1500ms"),
            ("sync-commit", "off"),
        ]),
    )
    .await;
    let report = finished(&events);
    let t = &body(report).trials[0];
    assert_eq!(t.stopped_by, StopReason::Duration);
    assert!(t.rows < 10_000_000 && t.rows > 0);
    assert_eq!(t.rows_counted, t.rows);
    assert!(t.seconds >= 1.5 && t.seconds < 3.0, "{}", t.seconds);
    assert!(!t.series.is_empty());
    // Where its rows are shown, the trial says it was cut and of how many.
    let cut = format!(
        "{} of 10M, cut at 1.5 s",
        pglab::measure::units::format_count(t.rows as f64)
    );
    assert_eq!(t.rows_cell(&body(report).params), cut);
    let cells = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Sample(s) => Some(s.cells.clone()),
            _ => None,
        })
        .expect("a sample");
    assert!(cells.contains(&cut), "{cells:?}");
    let md = pglab::report::markdown::render(report);
    assert!(md.contains(&cut), "{md}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appending_grows_one_table_with_json_and_indexes() {
    let lab = common::lab();
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "values,copy"),
            ("batch", "50"),
            ("rows", "500"),
            ("clients", "2"),
            ("append", "on"),
            ("payload", "300B"),
            ("payload-type", "json"),
            ("indexes", "3"),
            ("sync-commit", "off"),
        ]),
    )
    .await;
    let report = finished(&events);
    let b = body(report);
    assert_eq!(b.trials.len(), 2);
    assert_eq!(b.trials[0].rows_before, 0);
    assert_eq!(b.trials[0].rows_counted, 500);
    assert_eq!(b.trials[1].rows_before, 500);
    assert_eq!(b.trials[1].rows_counted, 1000);
    assert_eq!(run_tables(&lab.target(), &report.run_id).await, 0);
    schema_check(report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_insert_tx_inserts_exactly_the_rows() {
    let lab = common::lab();
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "insert-tx"),
            ("batch", "50"),
            ("rows", "777"),
            ("clients", "2"),
            ("pipeline", "on"),
            ("sync-commit", "off"),
        ]),
    )
    .await;
    let t = &body(finished(&events)).trials[0];
    assert!(t.pipeline);
    assert_eq!((t.rows, t.rows_counted), (777, 777));
    assert_eq!(t.client_rows, [389, 388]);
    assert_eq!(t.commits, 8 + 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_commits_are_compared_with_the_probed_fsync_rate() {
    let lab = common::lab();
    let probe_dir = common::temp_dir("fsync");
    let events = run_with(
        lab.target(),
        spec(&[
            ("method", "insert"),
            ("rows", "200"),
            ("sync-commit", "on,off"),
        ]),
        RunOptions {
            local_data_dir: Some(probe_dir.clone()),
            probe_dir: Some(probe_dir.clone()),
            ..RunOptions::default()
        },
    )
    .await;
    let report = finished(&events);
    let b = body(report);
    let fsync = b.fsync.as_ref().expect("probed");
    assert_eq!(fsync.source, "probe");
    assert!(fsync.ops_per_s > 0.0);
    let on = b
        .trials
        .iter()
        .find(|t| t.synchronous_commit == SyncCommit::On)
        .unwrap();
    let off = b
        .trials
        .iter()
        .find(|t| t.synchronous_commit == SyncCommit::Off)
        .unwrap();
    assert!(on.fsync_fraction.is_some_and(|f| f > 0.0));
    assert_eq!(off.fsync_fraction, None);
    let all = b.summary.findings.join("\n");
    assert!(all.contains("fsyncs/s"), "{all}");
    assert!(all.contains("by sync-commit"), "{all}");
    schema_check(report);
    let _ = std::fs::remove_dir_all(probe_dir);
}

#[tokio::test]
async fn too_many_clients_are_refused_before_anything_runs() {
    let lab = common::lab();
    let target = lab.target();
    let c = target.connect().await.unwrap();
    let server = snapshot::read(&c, &target).await.unwrap();
    let s = spec(&[("clients", "500"), ("rows", "1000")]);
    let pf = preflight::preflight(&s, None, Some(&server), preflight::CONFIRM_ABOVE);
    assert!(
        pf.refuse
            .as_deref()
            .is_some_and(|r| r.contains("502 connections")),
        "{pf:?}"
    );
    // A payload the disk cannot hold is refused by the same preflight.
    let free = pglab::host::free_bytes(&lab.dir).expect("free space of a local dir");
    let huge = spec(&[("rows", "1e9"), ("payload", "64MB")]);
    let pf = preflight::preflight(&huge, Some(free), Some(&server), preflight::CONFIRM_ABOVE);
    assert!(
        pf.refuse.as_deref().is_some_and(|r| r.contains("of disk")),
        "{pf:?}"
    );
    // The run itself refuses too many clients, for callers that skip the preflight.
    let events = run_all(target.clone(), s).await;
    assert_eq!(events.len(), 1, "nothing ran: {events:?}");
    let Some(RunEvent::Failed { error, .. }) = events.last() else {
        panic!("{events:?}")
    };
    assert!(error.contains("connections"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_against_copy_is_a_verdict_over_interleaved_rounds() {
    let lab = common::lab();
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "insert,copy"),
            ("batch", "500"),
            ("rows", "2000"),
            ("sync-commit", "off"),
            // Five a side tolerate a crossed pair or two from a noisy host; four need every
            // copy trial above every insert trial.
            ("repeat", "5"),
        ]),
    )
    .await;
    assert!(matches!(
        events.first(),
        Some(RunEvent::Started { trials: 10, .. })
    ));
    let report = finished(&events);
    let b = body(report);
    // Rounds: insert and copy alternate, round 1 of both before round 2 of either.
    let order: Vec<(Method, u32)> = b.trials.iter().map(|t| (t.method, t.repeat)).collect();
    assert_eq!(
        order,
        (1..=5)
            .flat_map(|r| [(Method::Insert, r), (Method::Copy, r)])
            .collect::<Vec<_>>()
    );
    assert!(
        b.trials.iter().all(|t| t.checkpoint),
        "the sandbox role may CHECKPOINT"
    );
    for c in &b.summary.configs {
        assert_eq!(c.rows_per_s.n, 5);
        assert!(
            c.rows_per_s.ci_low <= c.rows_per_s.median
                && c.rows_per_s.median <= c.rows_per_s.ci_high
        );
    }
    let g = b
        .summary
        .groups
        .iter()
        .find(|g| g.question == ingest::Question::Method)
        .expect("insert and copy compared");
    assert_eq!(
        g.verdict.map(|v| v.as_str()),
        Some("faster"),
        "{}",
        g.finding
    );
    assert_eq!(g.winner.as_deref(), Some("copy"), "{}", g.finding);
    let insert = &g.settings[0];
    assert_eq!(insert.label, "insert");
    assert_eq!(insert.verdict.map(|v| v.as_str()), Some("slower"));
    // The difference is large, not a hair past the threshold.
    assert!(insert.ratio_high.unwrap() < 0.7, "{insert:?}");
    assert!(
        b.summary
            .findings
            .iter()
            .any(|f| f.contains("copy faster than every other setting"))
    );
    // The same findings reach the run pane and the headless progress as notes.
    for f in &b.summary.findings {
        assert!(
            events
                .iter()
                .any(|e| matches!(e, RunEvent::Note(n) if n == f)),
            "finding not noted: {f}"
        );
    }
    schema_check(report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeat_auto_stops_at_max_repeat_when_undecided() {
    let lab = common::lab();
    // Two settings that do the same work (a batch past the row count is one COPY of all
    // 1000 rows either way) and no practical threshold: "no significant difference" would
    // need an interval of width zero, and "faster" an interval clear of 0, which a true
    // difference of 0 gives with at most the 0.5% error. So the run stays undecided and must
    // stop at max-repeat 5.
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "copy"),
            ("batch", "1000,2000"),
            ("rows", "1000"),
            ("sync-commit", "off"),
            ("repeat", "auto"),
            ("max-repeat", "5"),
            ("confidence", "99.5%"),
            ("min-effect", "0"),
        ]),
    )
    .await;
    assert!(matches!(
        events.first(),
        Some(RunEvent::Started { trials: 10, .. })
    ));
    let report = finished(&events);
    let b = body(report);
    assert_eq!(b.trials.len(), 10);
    assert!(b.trials.iter().all(|t| t.repeat <= 5));
    assert_eq!(
        b.summary.groups[0].verdict.map(|v| v.as_str()),
        Some("too few trials")
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("stopped at max-repeat 5")),
        "{:?}",
        report.notes
    );
    schema_check(report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeat_auto_stops_as_soon_as_decided() {
    let lab = common::lab();
    // One row per commit against COPY: a difference far beyond any noise. Two settings at
    // most 10 each first look at 5 a side (6 looks share the 5%; see measure::family), where
    // this is decided: auto stops there.
    let events = run_all(
        lab.target(),
        spec(&[
            ("method", "insert,copy"),
            ("batch", "500"),
            ("rows", "2000"),
            ("sync-commit", "off"),
            ("repeat", "auto"),
        ]),
    )
    .await;
    let b = body(finished(&events));
    assert_eq!(b.trials.len(), 10, "5 each, then decided");
    let g = &b.summary.groups[0];
    assert_eq!(g.verdict.map(|v| v.as_str()), Some("faster"), "{g:?}");
    assert_eq!(g.winner.as_deref(), Some("copy"));
}

/// The loading clients' lean session (a unix socket watched for readability only) answers
/// and is cancelled on the server like any other.
#[tokio::test(flavor = "current_thread")]
async fn a_lean_session_runs_and_cancels_a_statement() {
    let lab = common::lab();
    let target = lab.target();
    let socket = target
        .lean_socket()
        .expect("the sandbox listens on a unix socket");
    let client = target
        .connect_lean()
        .await
        .expect("a local socket")
        .unwrap();
    let one: i32 = client.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
    let token = client.cancel_token();
    let t = Instant::now();
    let (r, ()) = tokio::join!(client.batch_execute("SELECT pg_sleep(30)"), async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        target.cancel_query_at(&token, &socket).await;
    });
    let e = r.expect_err("cancelled");
    assert_eq!(
        e.code(),
        Some(&tokio_postgres::error::SqlState::QUERY_CANCELED),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The session is usable after the cancel.
    let two: i32 = client.query_one("SELECT 2", &[]).await.unwrap().get(0);
    assert_eq!(two, 2);
}
