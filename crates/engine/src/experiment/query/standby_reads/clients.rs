//! The readers of a trial on the standby: one session running the statements in turn (see
//! [`super::reader`]), or — with `--clients N` or `--script` — the throughput load generator
//! pointed at the standby's connection string: N clients for the trial's time, each going on
//! with its next transaction past a statement the standby cancels for a conflict with
//! recovery (counted; see `loadgen::recovery`), so a trial gives the reads' transactions/s and
//! statement latency beside the cancels.

use std::time::Instant;

use super::reader::{self, Reads};
use super::trial::Setup;
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::query::free_slots::{self, Server};
use crate::experiment::query::guard::TxMode;
use crate::experiment::query::throughput::{self, Throughput};
use crate::experiment::query::{Latency, QuerySpec};

/// The workload the clients run: the spec's script (or its statements as one).
pub(crate) struct Clients {
    spec: QuerySpec,
    mode: TxMode,
}

impl Clients {
    /// Clients for a spec in throughput mode (None: one session reads the statements).
    pub(crate) fn of(spec: &QuerySpec) -> Option<Clients> {
        spec.throughput().then(|| Clients {
            spec: spec.clone(),
            mode: TxMode::of(spec.writes, true),
        })
    }
}

/// What the readers of a trial got.
pub(crate) enum Got {
    /// One session's statements.
    Reads(Reads),
    /// `n` clients' transactions.
    Clients(u32, Box<Throughput>),
}

impl Got {
    /// Executions that returned: statements, or the clients' transactions.
    pub(crate) fn executions(&self) -> u64 {
        match self {
            Got::Reads(r) => r.seconds.iter().map(|s| s.len() as u64).sum(),
            Got::Clients(_, t) => t.transactions,
        }
    }

    /// Statements the standby cancelled, and sessions it ended.
    pub(crate) fn conflicts(&self) -> (u64, u64) {
        match self {
            Got::Reads(r) => (r.cancelled_total(), r.terminated),
            Got::Clients(_, t) => t.conflicts,
        }
    }

    /// Latency of the statements that returned, ms (None: none did).
    pub(crate) fn latency(&self) -> Option<Latency> {
        match self {
            Got::Reads(r) => {
                let all: Vec<f64> = r.seconds.iter().flatten().copied().collect();
                super::trial::latency(&all)
            }
            Got::Clients(_, t) if t.transactions > 0 => {
                let s = t.load.statement_ms;
                Some(Latency {
                    p50: s.p50,
                    p95: s.p95,
                    p99: s.p99,
                })
            }
            Got::Clients(..) => None,
        }
    }

    /// The clients and their transactions/s (None: one session read).
    pub(crate) fn throughput(&self) -> Option<(u32, f64)> {
        match self {
            Got::Reads(_) => None,
            Got::Clients(n, t) => Some((*n, t.tps)),
        }
    }
}

/// The trial's readers on the standby until `until` (one session), or for the trial's time
/// (`n` clients).
pub(crate) async fn read(
    ctx: &RunCtx,
    setup: &Setup,
    n: u32,
    (until, tref): (Instant, &TrialRef),
) -> Result<Got, RunError> {
    let target = &setup.node.target;
    let Some(c) = &setup.clients else {
        let r = reader::read_until(ctx, target, &setup.statements, until, setup.flush).await?;
        return Ok(Got::Reads(r));
    };
    fits(ctx, setup, n).await?;
    let work = throughput::workload(ctx, &c.spec, c.mode, target.libpq_conninfo(), true);
    let seconds = setup.duration.as_secs_f64();
    let t = throughput::alone(ctx, work, n as usize, (seconds, tref))
        .await
        .map_err(|e| e.within(format_args!("on {}", setup.node.name())))?;
    Ok(Got::Clients(n, Box::new(t)))
}

/// Refused with a sentence when the standby has fewer free connection slots than `n` clients
/// need: it is the standby they connect to, whatever the primary has free.
async fn fits(ctx: &RunCtx, setup: &Setup, n: u32) -> Result<(), RunError> {
    let name = setup.node.name();
    let c = setup
        .node
        .target
        .connect()
        .await
        .map_err(|e| RunError::Failed(format!("{name}: {e}")))?;
    let free = free_slots::free_on(&c).await.map_err(|e| ctx.error(e))?;
    drop(c);
    match free_slots::short(n as usize, n as usize, free, Server::Standby(&name)) {
        Some(why) => Err(RunError::Failed(why)),
        None => Ok(()),
    }
}
