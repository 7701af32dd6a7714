//! One throughput trial: N clients (see [`super::loadgen`]) run the workload for the trial's
//! duration under the combination in effect; the result is transactions per second over the
//! trial (from the common start to the last client's last transaction, as pgbench counts
//! them), latency percentiles over every transaction, rows returned, and pglab's own CPU.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::guard::TxMode;
use super::loadgen::{self, ClientMsg, ClientResult, Go, Workload, histogram};
use super::per_second::{LoadRecord, PerSecond};
use super::report::{Latency, QueryTrial, clients_name};
use super::rounds::Planned;
use super::script::Script;
use super::spec::QuerySpec;
use crate::experiment::lab::commit_cost::{LatencyMs, stalls_of};
use crate::experiment::lab::cpu::CpuWindow;
use crate::experiment::lab::event::{Progress, TrialRef};
use crate::experiment::lab::standby_beside;
use crate::experiment::lab::standby_fault::{FaultWindow, Injector};
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::replication::ReplicaLag;

/// What a throughput trial measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Throughput {
    pub seconds: f64,
    pub transactions: u64,
    pub rows: u64,
    pub tps: f64,
    pub latency: Latency,
    pub client_cpu_s: Option<f64>,
    pub load: LoadRecord,
    /// Statements a standby cancelled for conflicts with recovery, and of those the sessions
    /// it ended (clients on a standby only; see `loadgen::recovery`).
    pub conflicts: (u64, u64),
}

impl Throughput {
    /// The trial's record: `clients` clients in round `p`, under the `settings` shown.
    pub(crate) fn record(
        self,
        p: Planned,
        clients: u32,
        settings: std::collections::BTreeMap<String, String>,
    ) -> QueryTrial {
        QueryTrial {
            statement: 0,
            name: clients_name(clients),
            combo: p.combo,
            settings,
            repeat: p.repeat,
            seconds: self.seconds,
            executions: 1,
            rows: self.rows,
            clients: Some(clients),
            tps: Some(self.tps),
            transactions: Some(self.transactions),
            latency_ms: Some(self.latency),
            client_cpu_s: self.client_cpu_s,
            cold: false,
            load: Some(self.load),
            host: None,
        }
    }
}

/// What a throughput run's trials take, said before they start: "5 trials of 10 s each: about
/// 50 s of load, plus the warm-up, the setup and the plans before them" (with `repeat auto`,
/// the range from the first rounds to the most). None in statement mode.
pub(crate) fn length_sentence(spec: &QuerySpec) -> Option<String> {
    if !spec.throughput() || spec.on_standby.is_some() {
        return None;
    }
    let per = spec.combo_count() * spec.units();
    let most = spec.trials();
    let d = spec.duration_s;
    let s = crate::measure::units::format_seconds;
    let each = super::spec_values::format_duration(d);
    let extra = "plus the warm-up, the setup and the plans before them";
    Some(if spec.repeat.is_auto() {
        let first = per * spec.repeat.initial() as usize;
        format!(
            "{first} to {most} trials of {each} each (repeat auto): {} to {} of load, {extra}",
            s(first as f64 * d),
            s(most as f64 * d)
        )
    } else {
        format!(
            "{most} trial{} of {each} each: about {} of load, {extra}",
            if most == 1 { "" } else { "s" },
            s(most as f64 * d)
        )
    })
}

/// The workload of a spec: its script, or its statements as one.
pub(crate) fn script_of(spec: &QuerySpec) -> Script {
    spec.script
        .clone()
        .unwrap_or_else(|| Script::of_statements(&spec.statements))
}

/// A trial's clients, running on their threads; dropping it stops them.
struct Clients {
    n: usize,
    stop: CancellationToken,
    go: watch::Sender<Option<Go>>,
    rx: mpsc::UnboundedReceiver<(usize, ClientMsg)>,
    done: Arc<AtomicU64>,
}

impl Drop for Clients {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Clients {
    /// Start `n` clients of `work` on their threads (one per core at the most).
    fn start(work: Arc<Workload>, n: usize) -> Result<Clients, RunError> {
        let stop = CancellationToken::new();
        let (go, go_rx) = watch::channel(None);
        let (tx, rx) = mpsc::unbounded_channel();
        let done = work.done.clone();
        let threads = crate::server::pq_async::client_threads(n);
        let clients = Clients {
            n,
            stop: stop.clone(),
            go,
            rx,
            done,
        };
        for t in 0..threads {
            let ids: Vec<usize> = (0..n).filter(|i| i % threads == t).collect();
            loadgen::start(work.clone(), ids, stop.clone(), go_rx.clone(), tx.clone())
                .map_err(RunError::Failed)?;
        }
        Ok(clients)
    }

    /// Wait until every client has its session (or the first that could not).
    async fn ready(&mut self, ctx: &RunCtx) -> Result<(), RunError> {
        let n = self.n;
        let mut ready = 0;
        while ready < n {
            let msg = tokio::select! {
                m = self.rx.recv() => m,
                _ = ctx.cancel.cancelled() => return Err(RunError::Cancelled),
            };
            match msg {
                Some((_, ClientMsg::Ready | ClientMsg::Done(_))) => ready += 1,
                Some((id, ClientMsg::NotReady(e))) => {
                    return Err(RunError::failed(format!("client {} of {n}: {e}", id + 1)));
                }
                None => return Err(RunError::failed("the client threads ended before starting")),
            }
        }
        Ok(())
    }

    /// Start them all on one clock and collect what each did, showing progress meanwhile.
    async fn run(
        &mut self,
        ctx: &RunCtx,
        duration_s: f64,
        tref: &TrialRef,
    ) -> Result<(Instant, Vec<ClientResult>, PerSecond), RunError> {
        let n = self.n;
        let t0 = Instant::now();
        let _ = self.go.send(Some(Go {
            deadline: t0 + Duration::from_secs_f64(duration_s),
        }));
        let mut results = Vec::with_capacity(n);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let mut seconds = PerSecond::new(self.done.clone(), t0);
        while results.len() < n {
            tokio::select! {
                _ = seconds.tick() => seconds.sample(),
                m = self.rx.recv() => match m {
                    Some((id, ClientMsg::Done(r))) => {
                        if let Some(e) = &r.error {
                            return Err(RunError::failed(format!("client {} of {n}: {e}", id + 1)));
                        }
                        results.push(*r);
                    }
                    Some(_) => {}
                    None => break,
                },
                _ = tick.tick() => {
                    let el = t0.elapsed().as_secs_f64();
                    let txs = self.done.load(std::sync::atomic::Ordering::Relaxed) as f64;
                    ctx.emit.progress(Progress {
                        trial: Some(tref.clone()),
                        phase: format!("{n} client{} running", if n == 1 { "" } else { "s" }),
                        fraction: Some((el / duration_s).min(1.0)),
                        elapsed_s: el,
                        rate: (el > 0.0).then(|| txs / el),
                        rate_unit: "tps".into(),
                    });
                }
                // Each client cancels its command on the server and stops; what they did is
                // not a result.
                _ = ctx.cancel.cancelled() => {
                    self.wind_down(results.len()).await;
                    return Err(RunError::Cancelled);
                }
            }
        }
        Ok((t0, results, seconds))
    }
}

impl Clients {
    /// Stop the clients and wait (10 s at the most) until the `n - finished` still running
    /// have cancelled their commands on the server and ended.
    async fn wind_down(&mut self, finished: usize) {
        self.stop.cancel();
        let mut left = self.n.saturating_sub(finished);
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while left > 0 {
            match tokio::time::timeout_at(until, self.rx.recv()).await {
                Ok(Some((_, ClientMsg::Done(_) | ClientMsg::NotReady(_)))) => left -= 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
}

/// What the clients did, as one trial: transactions/s from the common start to the last
/// client's last transaction, latency percentiles over every transaction.
fn sum(t0: Instant, results: &[ClientResult], duration_s: f64) -> Result<Throughput, RunError> {
    let end = results.iter().map(|r| r.ended).max().unwrap_or(t0);
    let seconds = end.duration_since(t0).as_secs_f64().max(1e-9);
    let (mut hist, mut statements) = (histogram(), histogram());
    let (mut transactions, mut rows, mut conflicts) = (0u64, 0u64, (0u64, 0u64));
    for r in results {
        transactions += r.transactions;
        rows += r.rows;
        conflicts.0 += r.cancelled;
        conflicts.1 += r.terminated;
        // Same bounds, so adding cannot fail.
        let _ = hist.add(&r.latency_us);
        let _ = statements.add(&r.statement_us);
    }
    // On a standby every transaction may have been cancelled: counted, not a failure.
    if transactions == 0 && conflicts.0 == 0 {
        return Err(RunError::failed(format!(
            "no transaction finished within the trial's {}: give a longer --duration",
            crate::measure::units::format_seconds(duration_s)
        )));
    }
    let ms = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
    let sq = |q: f64| statements.value_at_quantile(q) as f64 / 1000.0;
    Ok(Throughput {
        seconds,
        transactions,
        rows,
        tps: transactions as f64 / seconds,
        latency: Latency {
            p50: ms(0.50),
            p95: ms(0.95),
            p99: ms(0.99),
        },
        client_cpu_s: None,
        load: LoadRecord {
            statement_ms: LatencyMs {
                p50: sq(0.50),
                p95: sq(0.95),
                p99: sq(0.99),
                p999: sq(0.999),
                max: statements.max() as f64 / 1000.0,
            },
            ..LoadRecord::default()
        },
        conflicts,
    })
}

/// The trial's record completed: pglab's CPU, the per-second series and its stalls.
fn finish(mut t: Throughput, cpu: CpuWindow, per_second: &PerSecond) -> Throughput {
    t.client_cpu_s = Some(cpu.finish().client_cpu_s);
    t.load.shape.series = per_second.series(t.transactions, t.seconds);
    (t.load.shape.stall_seconds, t.load.shape.worst_second) = stalls_of(&t.load.shape.series);
    t
}

/// The clients of a trial: the workload of `spec` in `mode` on `conninfo`, going on past
/// conflicts with recovery when they read on a standby (`go_on_conflict`).
pub(crate) fn workload(
    ctx: &RunCtx,
    spec: &QuerySpec,
    mode: TxMode,
    conninfo: String,
    go_on_conflict: bool,
) -> Arc<Workload> {
    Arc::new(Workload {
        script: Arc::new(script_of(spec)),
        conninfo,
        session: super::session::measuring_settings(ctx, mode),
        frame: mode.script_frame(),
        seed: spec.seed,
        done: Arc::new(AtomicU64::new(0)),
        go_on_conflict,
        protocol: spec.protocol,
    })
}

/// `n` clients of `work` for `duration_s`, with nothing beside them (a standby's readers):
/// what they did, conflicts counted.
pub(crate) async fn alone(
    ctx: &RunCtx,
    work: Arc<Workload>,
    n: usize,
    (duration_s, tref): (f64, &TrialRef),
) -> Result<Throughput, RunError> {
    let mut group = Clients::start(work, n)?;
    group.ready(ctx).await?;
    let cpu = CpuWindow::start();
    let (t0, results, per_second) = group.run(ctx, duration_s, tref).await?;
    Ok(finish(sum(t0, &results, duration_s)?, cpu, &per_second))
}

/// The primary's standbys right after the load, on a session of the run's own (read-only;
/// none on a server without standbys, or for a role that may not see them).
async fn replicas(ctx: &RunCtx) -> Vec<ReplicaLag> {
    match ctx.session().await {
        Ok(c) => crate::server::replication::read(&c)
            .await
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// What the clients' run gives: their common start, each one's result, the count at every
/// second, and what a standby fault beside them did.
type Ran = (Instant, Vec<ClientResult>, PerSecond, Option<FaultWindow>);

/// The clients' run, with the standby fault (the standby already streaming, `control` the
/// run's session) beside it when there is one; the standby is put back and streaming again
/// before this returns, however the run ended.
async fn run_beside(
    ctx: &RunCtx,
    group: &mut Clients,
    (duration_s, tref): (f64, &TrialRef),
    fault: Option<(&Injector, &Client)>,
) -> Result<Ran, RunError> {
    let Some((f, control)) = fault else {
        let (t0, results, per_second) = group.run(ctx, duration_s, tref).await?;
        return Ok((t0, results, per_second, None));
    };
    let mut go = group.go.subscribe();
    let started = async move {
        let g = (*go.wait_for(Option::is_some).await.ok()?)?;
        Some(g.deadline - Duration::from_secs_f64(duration_s))
    };
    let running = group.run(ctx, duration_s, tref);
    let when = (started, Some(duration_s));
    let (ran, window) = standby_beside::beside(ctx, control, Some(f), when, running).await;
    let put_back = f.ready(ctx, control).await;
    let (t0, results, per_second) = ran?;
    put_back?;
    Ok((t0, results, per_second, window))
}

/// Run one trial of `clients` clients (with a standby fault beside them when given).
pub(crate) async fn trial(
    ctx: &RunCtx,
    spec: &QuerySpec,
    (mode, fault): (TxMode, Option<&Injector>),
    clients: u32,
    tref: &TrialRef,
) -> Result<Throughput, RunError> {
    let n = clients as usize;
    if let Some(why) = ctx.server.free_connection_slots().and_then(|free| {
        super::free_slots::short(n, n + 2, free, super::free_slots::Server::Target)
    }) {
        return Err(RunError::Failed(why));
    }
    let work = workload(ctx, spec, mode, ctx.target.libpq_conninfo(), false);
    let control = match fault {
        Some(f) => {
            let c = ctx.session().await?;
            ctx.emit
                .phase(Some(tref.clone()), "standby streaming before the fault")
                .await;
            f.ready(ctx, &c).await?;
            Some(c)
        }
        None => None,
    };
    let mut group = Clients::start(work, n)?;
    group.ready(ctx).await?;
    let cpu = CpuWindow::start();
    let beside = fault.zip(control.as_ref());
    let (t0, results, per_second, window) =
        run_beside(ctx, &mut group, (spec.duration_s, tref), beside).await?;
    let mut t = finish(sum(t0, &results, spec.duration_s)?, cpu, &per_second);
    let reprepared: u64 = results.iter().map(|r| r.reprepared).sum();
    if reprepared > 0 {
        ctx.note(format!(
            "{}: sessions forgot their prepared statements {reprepared} time{} (SQLSTATE 26000: a DEALLOCATE or DISCARD the clients did not send) and prepared them again; each transaction cut short started again, uncounted",
            tref.label,
            if reprepared == 1 { "" } else { "s" }
        ))
        .await;
    }
    t.load.shape.replicas = replicas(ctx).await;
    t.load.fault = window;
    Ok(t)
}

#[cfg(test)]
mod length_tests {
    use super::length_sentence;
    use crate::experiment::{ExperimentKind, ExperimentSpec};

    fn spec(pairs: &[(&str, &str)]) -> QuerySpec {
        let p = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match ExperimentKind::Query.parse_spec(&p).unwrap() {
            ExperimentSpec::Query(q) => *q,
            _ => unreachable!(),
        }
    }

    use super::QuerySpec;

    #[test]
    fn a_replay_says_how_long_its_load_takes_before_it_starts() {
        let q = spec(&[
            ("sql", "SELECT 1"),
            ("clients", "1"),
            ("duration", "10s"),
            ("repeat", "5"),
        ]);
        assert_eq!(
            length_sentence(&q).unwrap(),
            "5 trials of 10s each: about 50.0 s of load, plus the warm-up, the setup and the plans before them"
        );
        assert!(length_sentence(&spec(&[("sql", "SELECT 1")])).is_none());
    }
}
