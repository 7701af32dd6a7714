//! One throughput trial: N clients (see [`super::loadgen`]) run the workload for the trial's
//! duration under the combination in effect; the result is transactions per second over the
//! trial (from the common start to the last client's last transaction, as pgbench counts
//! them), latency percentiles over every transaction, rows returned, and pglab's own CPU.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::guard::TxMode;
use super::loadgen::{self, ClientMsg, Go, Workload, histogram};
use super::report::Latency;
use super::script::Script;
use super::spec::QuerySpec;
use crate::experiment::event::{Progress, TrialRef};
use crate::experiment::ingest::cpu::CpuWindow;
use crate::experiment::lab::{RunCtx, RunError};

/// What a throughput trial measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    pub seconds: f64,
    pub transactions: u64,
    pub rows: u64,
    pub tps: f64,
    pub latency: Latency,
    pub client_cpu_s: Option<f64>,
}

/// The workload of a spec: its script, or its statements as one.
pub fn script_of(spec: &QuerySpec) -> Script {
    spec.script
        .clone()
        .unwrap_or_else(|| Script::of_statements(&spec.statements))
}

/// A client's failure said as the run's: a read-only refusal with the way on.
fn word(e: &str) -> String {
    if e.contains("read-only transaction") {
        super::guard::read_only_sentence(e)
    } else {
        e.to_string()
    }
}

/// Run one trial of `clients` clients.
pub async fn trial(
    ctx: &RunCtx,
    spec: &QuerySpec,
    mode: TxMode,
    clients: u32,
    tref: &TrialRef,
) -> Result<Throughput, RunError> {
    let n = clients as usize;
    if let Some(free) = ctx.server.free_connection_slots()
        && (n as i64 + 2) > free
    {
        return Err(RunError::failed(format!(
            "{n} clients need {} connections but the server has only {} free: use fewer clients or raise max_connections",
            n + 2,
            free.max(0)
        )));
    }
    let done = Arc::new(AtomicU64::new(0));
    let work = Arc::new(Workload {
        script: Arc::new(script_of(spec)),
        conninfo: ctx.target.libpq_conninfo(),
        session_sql: format!("{}{}", ctx.session_sql(), mode.session_sql()),
        frame: mode.script_frame(),
        seed: spec.seed,
        done: done.clone(),
    });
    let stop = CancellationToken::new();
    let (go_tx, go_rx) = watch::channel(None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let threads = loadgen::threads_for(n);
    for t in 0..threads {
        let ids: Vec<usize> = (0..n).filter(|i| i % threads == t).collect();
        if let Err(e) = loadgen::start(work.clone(), ids, stop.clone(), go_rx.clone(), tx.clone()) {
            stop.cancel();
            return Err(RunError::Failed(e));
        }
    }
    drop(tx);
    // Every client ready (or the first that could not be), then one start for all.
    let mut ready = 0;
    while ready < n {
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = ctx.cancel.cancelled() => { stop.cancel(); return Err(RunError::Cancelled); }
        };
        match msg {
            Some((_, ClientMsg::Ready)) => ready += 1,
            Some((id, ClientMsg::NotReady(e))) => {
                stop.cancel();
                return Err(RunError::failed(format!("client {} of {n}: {e}", id + 1)));
            }
            Some((_, ClientMsg::Done(_))) => ready += 1,
            None => {
                stop.cancel();
                return Err(RunError::failed("the client threads ended before starting"));
            }
        }
    }
    let duration = Duration::from_secs_f64(spec.duration_s);
    let cpu = CpuWindow::start();
    let t0 = Instant::now();
    let _ = go_tx.send(Some(Go {
        deadline: t0 + duration,
    }));
    let mut results = Vec::with_capacity(n);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut cancelled = false;
    while results.len() < n {
        tokio::select! {
            m = rx.recv() => match m {
                Some((id, ClientMsg::Done(r))) => {
                    if let Some(e) = &r.error {
                        stop.cancel();
                        return Err(RunError::failed(format!("client {} of {n}: {}", id + 1, word(e))));
                    }
                    results.push(r);
                }
                Some(_) => {}
                None => break,
            },
            _ = tick.tick() => {
                let el = t0.elapsed().as_secs_f64();
                let txs = done.load(std::sync::atomic::Ordering::Relaxed) as f64;
                ctx.emit.progress(Progress {
                    trial: Some(tref.clone()),
                    phase: format!("{n} client{} running", if n == 1 { "" } else { "s" }),
                    fraction: Some((el / spec.duration_s).min(1.0)),
                    elapsed_s: el,
                    rate: (el > 0.0).then(|| txs / el),
                    rate_unit: "tps".into(),
                });
            }
            _ = ctx.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                stop.cancel();
            }
        }
    }
    if cancelled || ctx.cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    let used = cpu.finish();
    let end = results.iter().map(|r| r.ended).max().unwrap_or(t0);
    let seconds = end.duration_since(t0).as_secs_f64().max(1e-9);
    let mut hist = histogram();
    let (mut transactions, mut rows) = (0u64, 0u64);
    for r in &results {
        transactions += r.transactions;
        rows += r.rows;
        let _ = hist.add(&r.latency_us);
    }
    if transactions == 0 {
        return Err(RunError::failed(format!(
            "no transaction finished within the trial's {}: give a longer --duration",
            crate::measure::units::format_seconds(spec.duration_s)
        )));
    }
    let ms = |q: f64| hist.value_at_quantile(q) as f64 / 1000.0;
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
        client_cpu_s: Some(used.client_cpu_s),
    })
}
