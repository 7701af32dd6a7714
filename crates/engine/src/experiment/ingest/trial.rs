//! One trial: open the clients' sessions, split the rows among them exactly, start them
//! together, report progress while they load, and read WAL, row count and size afterwards.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::client::{Job, LoadError, LoadResult, latency_histogram};
use super::kinds::Method;
use super::meter::Meter;
use super::payload::PayloadGen;
use super::plan::TrialPlan;
use super::report::{IngestTrial, LatencyMs, StopReason, decay_pct};
use super::spec::IngestSpec;
use super::table;
use super::worker::{self, ClientMsg, ClientSetup, Go};
use crate::experiment::lab::cpu::{CpuUse, CpuWindow};
use crate::experiment::lab::distribute::Distribution;
use crate::experiment::lab::event::{Progress, TrialRef};
use crate::experiment::lab::standby_beside;
use crate::experiment::lab::standby_fault::Injector;
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::replication::ReplicaLag;

/// How often progress is sent (at most ~10 a second).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Seed of the payload bytes: the same spec writes the same data.
const PAYLOAD_SEED: u64 = 42;

/// Rows per client: `rows` split exactly, the remainder spread over the first clients.
pub fn split_rows(rows: u64, clients: u32) -> Vec<u64> {
    let c = clients.max(1) as u64;
    (0..c).map(|i| rows / c + u64::from(i < rows % c)).collect()
}

/// Wait until every client has ended (each one's last report sent, its sender gone).
async fn drain(rx: &mut mpsc::UnboundedReceiver<(usize, ClientMsg)>) {
    while rx.recv().await.is_some() {}
}

/// Where a trial loads and what is already there.
pub(crate) struct TrialTable<'a> {
    pub name: &'a str,
    /// The first id this trial writes.
    pub first_id: i64,
    /// Rows in the table before the trial.
    pub rows_before: u64,
}

/// The load's start, once the clients are told to go (None: they never were).
async fn started(mut go: watch::Receiver<Option<Go>>) -> Option<Instant> {
    let g = go.wait_for(|g| g.is_some()).await.ok()?;
    g.as_ref().map(|g| g.meter.start())
}

/// Run one trial on `table` (already created). `control` is the run's own session. With a
/// standby fault, the standby streams before the load, the fault runs beside the clients,
/// and the standby is put back and streaming again before the trial ends, however it ends.
pub(crate) async fn run(
    ctx: &RunCtx,
    control: &Client,
    spec: &IngestSpec,
    plan: &TrialPlan,
    tref: &TrialRef,
    at: &TrialTable<'_>,
    fault: Option<&Injector>,
) -> Result<IngestTrial, RunError> {
    if let Some(f) = fault {
        ctx.emit
            .phase(Some(tref.clone()), "standby streaming before the fault")
            .await;
        f.ready(ctx, control).await?;
    }
    ctx.emit.phase(Some(tref.clone()), "opening sessions").await;
    let stop = ctx.cancel.child_token();
    // However this function ends, no client goes on loading.
    let _stop_on_exit = stop.clone().drop_guard();
    let (go_tx, go_rx) = watch::channel(None::<Go>);
    let go_watch = go_rx.clone();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let groups = client_groups(ctx, spec, plan, at);
    let n = groups.iter().map(Vec::len).sum();
    start_groups(groups, &stop, go_rx, tx, &mut rx).await?;
    all_ready(ctx, n, &stop, &mut rx).await?;
    let wal_from = table::wal_position(ctx, control).await?;
    let checkpoints_from = table::checkpoints(ctx, control).await;

    ctx.emit.phase(Some(tref.clone()), "loading").await;
    // What other processes take beside the load (the control session's server is ours).
    let pid = control
        .query_one("SELECT pg_catalog.pg_backend_pid()", &[])
        .await
        .ok()
        .map(|r| r.get::<_, i32>(0));
    let meter = crate::host::load::HostMeter::start(pid);
    let loading = load(ctx, spec, tref, n, &stop, &go_tx, &mut rx);
    let when = (started(go_watch), spec.duration_s);
    let (load, window) = standby_beside::beside(ctx, control, fault, when, loading).await;
    let host = meter.finish();
    let put_back = match fault {
        Some(f) => f.ready(ctx, control).await,
        None => Ok(()),
    };
    if ctx.cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    if let Some(e) = &load.failure {
        return Err(RunError::Failed(format!(
            "{} ({}): {e}; the other clients were stopped and the trial's table is dropped",
            tref.label,
            plan.series()
        )));
    }
    put_back?;

    ctx.emit.phase(Some(tref.clone()), "counting rows").await;
    let after = read_after(ctx, control, at.name, &wal_from, checkpoints_from).await?;
    // The swept settings as SHOW reports them in a session set up exactly like the clients'.
    let settings = if ctx.whatif.plan.is_empty() {
        Default::default()
    } else {
        let s = ctx.session().await?;
        ctx.shown_settings(&s).await?
    };
    let mut trial = trial_of(spec, plan, at, load, after, settings);
    trial.fault = window;
    trial.host = host;
    Ok(trial)
}

/// Each client's setup, its share of the rows split exactly and its ids following the
/// previous client's, dealt round-robin to a thread per core (see `worker`).
fn client_groups(
    ctx: &RunCtx,
    spec: &IngestSpec,
    plan: &TrialPlan,
    at: &TrialTable<'_>,
) -> Vec<Vec<ClientSetup>> {
    let payload = Arc::new(PayloadGen::new(
        spec.payload_type,
        spec.payload.bytes,
        spec.indexes,
        PAYLOAD_SEED,
    ));
    let shares = split_rows(spec.rows, plan.clients);
    let n = shares.len();
    let session = ctx.session_settings();
    let mut first_id = at.first_id;
    let threads = crate::server::pq_async::client_threads(n);
    let mut groups: Vec<Vec<ClientSetup>> = (0..threads).map(|_| Vec::new()).collect();
    for (index, &rows) in shares.iter().enumerate() {
        let setup = ClientSetup {
            target: ctx.target.clone(),
            session: session.clone(),
            sync: plan.sync,
            job: Job {
                index,
                of: n,
                method: plan.method,
                batch: plan.batch,
                first_id,
                rows,
                pipeline: spec.pipeline && plan.method == Method::InsertTx,
                payload_type: spec.payload_type,
                table: ctx.table(at.name),
            },
            payload: payload.clone(),
        };
        first_id += rows as i64;
        groups[index % threads].push(setup);
    }
    groups
}

/// Start a worker thread per group; if one cannot start, stop those already started
/// and wait for them before failing.
async fn start_groups(
    groups: Vec<Vec<ClientSetup>>,
    stop: &CancellationToken,
    go_rx: watch::Receiver<Option<Go>>,
    tx: mpsc::UnboundedSender<(usize, ClientMsg)>,
    rx: &mut mpsc::UnboundedReceiver<(usize, ClientMsg)>,
) -> Result<(), RunError> {
    for group in groups.into_iter().filter(|g| !g.is_empty()) {
        if let Err(e) = worker::start(group, stop.clone(), go_rx.clone(), tx.clone()) {
            stop.cancel();
            drain(rx).await;
            return Err(RunError::Failed(e));
        }
    }
    Ok(())
}

/// Everyone ready, or nobody starts: wait for the `n` clients' sessions to open.
async fn all_ready(
    ctx: &RunCtx,
    n: usize,
    stop: &CancellationToken,
    rx: &mut mpsc::UnboundedReceiver<(usize, ClientMsg)>,
) -> Result<(), RunError> {
    let mut ready = 0;
    let mut failure: Option<String> = None;
    while ready < n {
        match rx.recv().await {
            Some((_, ClientMsg::Ready)) => ready += 1,
            Some((_, ClientMsg::NotReady(LoadError::Failed(e)))) => {
                failure = Some(e);
                break;
            }
            Some((i, ClientMsg::Gone)) => {
                failure = Some(format!("client {} of {n} stopped unexpectedly", i + 1));
                break;
            }
            Some(_) | None => break,
        }
    }
    if ready < n {
        stop.cancel();
        drain(rx).await;
        return Err(match failure {
            Some(e) if !ctx.cancel.is_cancelled() => RunError::Failed(e),
            _ => RunError::Cancelled,
        });
    }
    Ok(())
}

/// What the load phase gave: each client's result and the clock and CPU around them.
struct Loaded {
    results: Vec<LoadResult>,
    meter: Arc<Meter>,
    last_commit: Instant,
    cpu: CpuUse,
    /// The first client's failure; the others were stopped because of it.
    failure: Option<String>,
}

/// Start the clients together and report progress until every one has ended; the first
/// failure stops the others.
async fn load(
    ctx: &RunCtx,
    spec: &IngestSpec,
    tref: &TrialRef,
    n: usize,
    stop: &CancellationToken,
    go_tx: &watch::Sender<Option<Go>>,
    rx: &mut mpsc::UnboundedReceiver<(usize, ClientMsg)>,
) -> Loaded {
    let meter = Arc::new(Meter::new());
    let deadline = spec
        .duration_s
        .map(|s| meter.start() + Duration::from_secs_f64(s));
    let cpu = CpuWindow::start();
    let _ = go_tx.send(Some(Go {
        meter: meter.clone(),
        deadline,
    }));
    let mut results: Vec<Option<LoadResult>> = (0..n).map(|_| None).collect();
    let mut failure: Option<String> = None;
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut window: VecDeque<(Instant, u64)> = VecDeque::from([(meter.start(), 0)]);
    let mut last_commit = meter.start();
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                None => break,
                Some((i, ClientMsg::Done(r))) => {
                    last_commit = Instant::now();
                    if let Some(LoadError::Failed(e)) = &r.error
                        && failure.is_none()
                    {
                        failure = Some(e.clone());
                        stop.cancel();
                    }
                    results[i] = Some(r);
                }
                Some((i, _)) => {
                    if failure.is_none() {
                        failure = Some(format!("client {} of {n} stopped unexpectedly", i + 1));
                    }
                    stop.cancel();
                }
            },
            _ = tick.tick() => progress(ctx, spec, tref, &meter, &mut window),
        }
    }
    Loaded {
        results: results.into_iter().flatten().collect(),
        meter,
        last_commit,
        cpu: cpu.finish(),
        failure,
    }
}

/// Send the loading progress: the fraction done (of the rows, or of the time limit if
/// that is further) and the rate over about the last second (`window`).
fn progress(
    ctx: &RunCtx,
    spec: &IngestSpec,
    tref: &TrialRef,
    meter: &Meter,
    window: &mut VecDeque<(Instant, u64)>,
) {
    let now = Instant::now();
    let done = meter.done();
    window.push_back((now, done));
    while window.len() > 2 && now.duration_since(window[1].0) >= Duration::from_secs(1) {
        window.pop_front();
    }
    let (t0, d0) = window[0];
    let dt = now.duration_since(t0).as_secs_f64();
    let elapsed = now.duration_since(meter.start()).as_secs_f64();
    let mut fraction = done as f64 / spec.rows.max(1) as f64;
    if let Some(limit) = spec.duration_s {
        fraction = fraction.max(elapsed / limit);
    }
    ctx.emit.progress(Progress {
        trial: Some(tref.clone()),
        phase: "loading".into(),
        fraction: Some(fraction.min(1.0)),
        elapsed_s: elapsed,
        rate: (dt > 0.05).then(|| (done - d0) as f64 / dt),
        rate_unit: "rows/s".into(),
    });
}

/// What the server says after the load: WAL written, checkpoints, rows and size.
struct After {
    wal_bytes: i64,
    checkpoints_during: Option<i64>,
    rows_counted: u64,
    table_bytes: i64,
    distribution: Distribution,
    replicas: Vec<ReplicaLag>,
}

/// Read what the load left on the server, on the run's own session.
async fn read_after(
    ctx: &RunCtx,
    control: &Client,
    name: &str,
    wal_from: &str,
    checkpoints_from: Option<i64>,
) -> Result<After, RunError> {
    let wal_bytes = table::wal_since(ctx, control, wal_from).await?;
    let checkpoints_during = match (checkpoints_from, table::checkpoints(ctx, control).await) {
        (Some(a), Some(b)) => Some((b - a).max(0)),
        _ => None,
    };
    let (rows_counted, table_bytes, distribution) =
        table::count_and_size(ctx, control, name).await?;
    // Read-only; a role that may not see it (or a server without standbys) gives none.
    let replicas = crate::server::replication::read(control)
        .await
        .unwrap_or_default();
    Ok(After {
        wal_bytes,
        checkpoints_during,
        rows_counted,
        table_bytes,
        distribution,
        replicas,
    })
}

/// The clients' latencies merged, in milliseconds.
fn latency_ms(results: &[LoadResult]) -> LatencyMs {
    let mut latency = latency_histogram();
    for r in results {
        // Same bounds, so adding cannot fail.
        let _ = latency.add(&r.latency_us);
    }
    let q = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
    LatencyMs {
        p50: q(0.50),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        max: latency.max() as f64 / 1000.0,
    }
}

/// The trial's record, from what the clients did and what the server read afterwards.
fn trial_of(
    spec: &IngestSpec,
    plan: &TrialPlan,
    at: &TrialTable<'_>,
    load: Loaded,
    after: After,
    settings: BTreeMap<String, String>,
) -> IngestTrial {
    let Loaded {
        results,
        meter,
        last_commit,
        cpu,
        ..
    } = load;
    let seconds = last_commit
        .duration_since(meter.start())
        .as_secs_f64()
        .max(1e-6);
    let rows: u64 = results.iter().map(|r| r.rows).sum();
    let commits: u64 = results.iter().map(|r| r.commits).sum();
    let series = meter.series(seconds);
    let (stall_seconds, worst_second) = super::report::stalls_of(&series);
    let commits_per_s = commits as f64 / seconds;
    IngestTrial {
        checkpoints_during: after.checkpoints_during,
        combo: plan.combo,
        settings,
        // The run sets the round and whether a CHECKPOINT preceded the trial.
        repeat: 1,
        checkpoint: false,
        method: plan.method,
        batch: plan.batch,
        clients: plan.clients,
        synchronous_commit: plan.sync,
        pipeline: spec.pipeline && plan.method == Method::InsertTx,
        rows,
        client_rows: results.iter().map(|r| r.rows).collect(),
        rows_counted: after.rows_counted,
        rows_before: at.rows_before,
        seconds,
        rows_per_s: rows as f64 / seconds,
        latency_ms: latency_ms(&results),
        wal_bytes: after.wal_bytes,
        wal_bytes_per_row: if rows > 0 {
            after.wal_bytes as f64 / rows as f64
        } else {
            0.0
        },
        commits,
        commits_per_s,
        decay_pct: decay_pct(&series),
        series,
        table_bytes: after.table_bytes,
        stopped_by: if rows < spec.rows {
            StopReason::Duration
        } else {
            StopReason::Rows
        },
        // Set once the run knows the disk's fsync rate (`IngestReport::apply_fsync`).
        fsync_fraction: None,
        client_cpu_s: cpu.client_cpu_s,
        client_cpu_share: cpu.client_cpu_share,
        host_cpu_share: cpu.host_cpu_share,
        distribution: after.distribution,
        stall_seconds,
        worst_second,
        replicas: after.replicas,
        fault: None,
        host: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_exactly() {
        assert_eq!(split_rows(10, 3), [4, 3, 3]);
        assert_eq!(split_rows(9, 3), [3, 3, 3]);
        assert_eq!(split_rows(1001, 2), [501, 500]);
        assert_eq!(split_rows(5, 1), [5]);
        for (rows, c) in [(10_000u64, 7u32), (3, 3), (1_000_003, 13)] {
            let s = split_rows(rows, c);
            assert_eq!(s.iter().sum::<u64>(), rows);
            assert!(s.iter().max().unwrap() - s.iter().min().unwrap() <= 1);
        }
    }
}
