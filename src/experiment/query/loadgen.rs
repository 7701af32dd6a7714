//! Throughput mode's clients: each runs the workload (a pgbench-style script, or the
//! statements one after the other) as transactions in a loop on its own libpq connection,
//! on a few OS threads of their own (one per core, never more than the clients), each with a
//! single-threaded runtime — the way `pgbench -j` multiplexes its connections, and with the
//! same library. Commands go on the simple protocol with `:variables` written in as text,
//! as `pgbench -M simple` (its default) sends them. A transaction is one run of the whole
//! workload (of a weighted mix: its `\set`s and one SQL command drawn by weight); its
//! latency is from its first command sent to its last reply.
//!
//! A client opens its session, reports `Ready`, waits for `Go` (one clock for all), runs
//! until the deadline (a transaction in flight then finishes and counts, as in pgbench) or a
//! stop, and reports `Done`. A stop cancels the command in flight on the server. On a standby
//! (`go_on_conflict`) a statement the standby cancels for a conflict with recovery is counted
//! and the client goes on with its next transaction (see [`recovery`]); any other error ends
//! the client.

pub mod recovery;

use std::ffi::{CStr, CString};
use std::io::Write;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::SeedableRng;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::expr;
use super::script::{Command, Part, Script};
use crate::server::cancel::{cancel_then_wait, pq_cancel};
use crate::server::libpq::{Outcome, PqCancel, PqConn};
use crate::server::pq_async::{self, AsyncPq};
use crate::sql::settings::SessionSettings;

/// Highest transaction latency the histogram resolves: one hour, in microseconds.
const LATENCY_HIGH_US: u64 = 3_600_000_000;

/// What every client of a trial shares.
pub struct Workload {
    pub script: Arc<Script>,
    /// libpq connection string of the target.
    pub conninfo: String,
    /// Settings that make a fresh connection a measuring session.
    pub session: SessionSettings,
    /// Commands before and after each transaction (`BEGIN` … `ROLLBACK`), if any.
    pub frame: Option<(&'static str, &'static str)>,
    pub seed: u64,
    /// Transactions finished by all clients so far (for progress).
    pub done: Arc<AtomicU64>,
    /// The clients read on a standby: a recovery conflict is counted, not the client's end.
    pub go_on_conflict: bool,
}

/// The start signal: when to stop starting transactions.
#[derive(Clone, Copy)]
pub struct Go {
    pub deadline: Instant,
}

/// What one client did.
pub struct ClientResult {
    pub transactions: u64,
    pub rows: u64,
    pub latency_us: Histogram<u64>,
    /// Each execution of a statement of the workload (not the frame's `BEGIN`/`ROLLBACK`).
    pub statement_us: Histogram<u64>,
    /// When its last transaction ended.
    pub ended: Instant,
    /// Why it stopped early: a sentence (None: it ran to the deadline or was stopped).
    pub error: Option<String>,
    /// Statements the standby cancelled for a conflict with recovery (`go_on_conflict`).
    pub cancelled: u64,
    /// Of those, sessions the standby ended (the client opened a new one).
    pub terminated: u64,
}

/// A client's reports, tagged with its index.
pub enum ClientMsg {
    Ready,
    NotReady(String),
    Done(Box<ClientResult>),
}

pub fn histogram() -> Histogram<u64> {
    // Constant, valid bounds: this cannot fail.
    Histogram::new_with_bounds(1, LATENCY_HIGH_US, 3).expect("valid histogram bounds")
}

/// One command of the workload, ready to send.
enum Ready {
    Set {
        var: usize,
        expr: expr::Expr,
    },
    /// Without variables: sent as is, every time.
    Fixed(CString),
    Template(Vec<Part>),
    /// Value sets (see `variants`): each execution runs one, drawn from the client's seeded
    /// generator (a `Fixed` or `Template` each).
    Choice(Vec<Ready>),
}

fn prepare(script: &Script) -> Result<Vec<Ready>, String> {
    script
        .commands
        .iter()
        .map(|c| match c {
            Command::Set { var, expr, .. } => Ok(Ready::Set {
                var: *var,
                expr: expr.clone(),
            }),
            Command::Sql {
                parts, variants, ..
            } if variants.is_empty() => sql_command(script, parts),
            Command::Sql { variants, .. } => variants
                .iter()
                .map(|v| sql_command(script, v))
                .collect::<Result<_, _>>()
                .map(Ready::Choice),
        })
        .collect()
}

/// A SQL command ready to send: fixed text, or a template of variables.
fn sql_command(script: &Script, parts: &[Part]) -> Result<Ready, String> {
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        CString::new(script.render(parts, None))
            .map(Ready::Fixed)
            .map_err(|_| "a command holds a NUL byte".to_string())
    } else {
        Ok(Ready::Template(parts.to_vec()))
    }
}

/// Start a group of clients (`ids`, of `of`) on a thread of their own.
pub fn start(
    work: Arc<Workload>,
    ids: Vec<usize>,
    stop: CancellationToken,
    go: watch::Receiver<Option<Go>>,
    reports: mpsc::UnboundedSender<(usize, ClientMsg)>,
) -> Result<(), String> {
    let first = ids.first().copied().unwrap_or(0);
    std::thread::Builder::new()
        .name(format!("pglab-query-{}", first + 1))
        .spawn(move || {
            // Sockets and timers only: with the signal and process drivers too, every park
            // of the thread also looked for orphaned child processes (perf: about 1 % of a
            // client thread at 4 clients), and these threads start none.
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    for id in &ids {
                        let _ = reports.send((
                            *id,
                            ClientMsg::NotReady(format!("cannot start a runtime: {e}")),
                        ));
                    }
                    return;
                }
            };
            rt.block_on(pq_async::run_all(ids.iter().map(|&id| {
                client_main(work.clone(), id, stop.clone(), go.clone(), reports.clone())
            })));
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start a client thread: {e}"))
}

/// A failed command: its sentence, and whether it was a standby's conflict with recovery.
#[derive(Debug)]
struct Failure {
    text: String,
    conflict: bool,
}

impl From<String> for Failure {
    fn from(text: String) -> Failure {
        Failure {
            text,
            conflict: false,
        }
    }
}

/// Connect and set the session up (blocking: run off the runtime).
fn connect(work: &Workload) -> Result<PqConn, String> {
    let mut c = PqConn::connect(&work.conninfo).map_err(|e| {
        format!(
            "cannot connect through libpq: {}",
            PqConn::connect_failure(&e)
        )
    })?;
    c.exec_params(&work.session.sql(false), &work.session.params())?;
    c.set_nonblocking()?;
    Ok(c)
}

/// A session of the workload, watched from this thread's runtime, and its canceller.
async fn open(work: Arc<Workload>) -> Result<(AsyncPq, Arc<PqCancel>), String> {
    tokio::task::spawn_blocking(move || connect(&work))
        .await
        .map_err(|e| format!("the connecting thread failed: {e}"))
        .and_then(|r| r)
        .and_then(|conn| {
            let cancel = Arc::new(conn.canceller()?);
            Ok((AsyncPq::new(conn)?, cancel))
        })
}

async fn client_main(
    work: Arc<Workload>,
    id: usize,
    stop: CancellationToken,
    mut go: watch::Receiver<Option<Go>>,
    reports: mpsc::UnboundedSender<(usize, ClientMsg)>,
) {
    let opened = open(work.clone())
        .await
        .and_then(|(pq, cancel)| Ok((pq, cancel, prepare(&work.script)?)));
    let (pq, cancel, commands) = match opened {
        Ok(x) => x,
        Err(e) => {
            let _ = reports.send((id, ClientMsg::NotReady(e)));
            return;
        }
    };
    let _ = reports.send((id, ClientMsg::Ready));
    let start = tokio::select! {
        g = go.wait_for(Option::is_some) => g.ok().and_then(|g| *g),
        _ = stop.cancelled() => None,
    };
    let result = match start {
        Some(g) => {
            let mut c = Client {
                pq,
                cancel,
                work: work.clone(),
                commands: Arc::new(commands),
                frame: work
                    .frame
                    .and_then(|(b, e)| CString::new(b).ok().zip(CString::new(e).ok()))
                    .map(Arc::new),
                vars: vec![0; work.script.vars.len()],
                mix: work.script.mix().map(|m| {
                    let mut total = 0;
                    Arc::new(
                        m.into_iter()
                            .map(|(i, w)| {
                                total += w;
                                (i, total)
                            })
                            .collect(),
                    )
                }),
                rng: rand_chacha::ChaCha8Rng::seed_from_u64(work.seed ^ (id as u64 + 1)),
                buf: Vec::new(),
                statement_us: histogram(),
                conflicts: (0, 0),
            };
            c.vars[0] = id as i64;
            if let Some(s) = c.vars.get_mut(1) {
                *s = 1;
            }
            c.run(g.deadline, &stop).await
        }
        None => ClientResult {
            transactions: 0,
            rows: 0,
            latency_us: histogram(),
            statement_us: histogram(),
            ended: Instant::now(),
            error: None,
            cancelled: 0,
            terminated: 0,
        },
    };
    let _ = reports.send((id, ClientMsg::Done(Box::new(result))));
}

/// A client running its transactions.
struct Client {
    pq: AsyncPq,
    /// Cancels the command in flight on the server (its session's: renewed with it).
    cancel: Arc<PqCancel>,
    work: Arc<Workload>,
    commands: Arc<Vec<Ready>>,
    /// The frame's commands (`BEGIN`, `ROLLBACK`), when there is one.
    frame: Option<Arc<(CString, CString)>>,
    vars: Vec<i64>,
    /// A weighted mix: each SQL command's index with the running sum of the weights.
    mix: Option<Arc<Vec<(usize, u64)>>>,
    rng: rand_chacha::ChaCha8Rng,
    /// The text of the command being sent, NUL-terminated.
    buf: Vec<u8>,
    /// Each statement execution's latency.
    statement_us: Histogram<u64>,
    /// Statements the standby cancelled, and sessions it ended, for conflicts with recovery.
    conflicts: (u64, u64),
}

impl Client {
    /// Send one command and read all its results: the rows they returned.
    async fn command(&mut self, sql: &std::ffi::CStr) -> Result<u64, Failure> {
        self.pq.send_query(sql).await?;
        let mut rows = 0;
        let mut failed = None;
        while let Some(r) = self.pq.next_result().await? {
            match r.outcome() {
                Outcome::Failed | Outcome::Aborted => {
                    if failed.is_none() {
                        failed = recovery::failure(&r);
                    }
                }
                _ => rows += r.rows(),
            }
        }
        failed.map_or(Ok(rows), Err)
    }

    /// A statement of the workload: one command, its latency recorded when it succeeds.
    async fn statement(&mut self, sql: &std::ffi::CStr) -> Result<u64, Failure> {
        let t0 = Instant::now();
        let rows = self.command(sql).await?;
        let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.statement_us.saturating_record(us.max(1));
        Ok(rows)
    }

    /// One run of the workload.
    async fn transaction(&mut self) -> Result<u64, Failure> {
        let mut rows = 0;
        let frame = self.frame.clone();
        if let Some(f) = &frame {
            self.command(&f.0).await?;
        }
        let commands = self.commands.clone();
        match self.mix.clone() {
            None => {
                for c in commands.iter() {
                    rows += self.step(c).await?;
                }
            }
            Some(mix) => {
                for c in commands.iter().filter(|c| matches!(c, Ready::Set { .. })) {
                    self.step(c).await?;
                }
                let total = mix.last().map_or(1, |m| m.1);
                let draw = rand::RngExt::random_range(&mut self.rng, 0..total);
                let at = mix.partition_point(|m| m.1 <= draw);
                if let Some(c) = mix.get(at).and_then(|m| commands.get(m.0)) {
                    rows += self.step(c).await?;
                }
            }
        }
        if let Some(f) = &frame {
            self.command(&f.1).await?;
        }
        Ok(rows)
    }

    /// One command of the workload: a `\set`, or a SQL command (its rows).
    async fn step(&mut self, c: &Ready) -> Result<u64, Failure> {
        match c {
            Ready::Set { var, expr } => {
                let v = expr::eval(expr, &self.vars, &mut self.rng)?;
                self.vars[*var] = v;
                Ok(0)
            }
            Ready::Choice(sets) => {
                let i = rand::RngExt::random_range(&mut self.rng, 0..sets.len().max(1));
                match sets.get(i) {
                    Some(c) => self.sql(c).await,
                    None => Ok(0),
                }
            }
            c => self.sql(c).await,
        }
    }

    /// A SQL command: its rows.
    async fn sql(&mut self, c: &Ready) -> Result<u64, Failure> {
        match c {
            Ready::Fixed(sql) => self.statement(sql).await,
            Ready::Template(parts) => {
                // One buffer for the text, reused: no allocation per command.
                let mut buf = std::mem::take(&mut self.buf);
                buf.clear();
                for p in parts {
                    match p {
                        Part::Text(t) => buf.extend_from_slice(t.as_bytes()),
                        Part::Var(v) => {
                            let n = self.vars.get(*v).copied().unwrap_or(0);
                            let _ = write!(buf, "{n}");
                        }
                    }
                }
                buf.push(0);
                let r = match CStr::from_bytes_with_nul(&buf) {
                    Ok(sql) => self.statement(sql).await,
                    Err(_) => Err("a command holds a NUL byte".to_string().into()),
                };
                self.buf = buf;
                r
            }
            Ready::Set { .. } | Ready::Choice(_) => Ok(0),
        }
    }

    async fn run(&mut self, deadline: Instant, stop: &CancellationToken) -> ClientResult {
        let mut latency_us = histogram();
        let (mut transactions, mut rows) = (0u64, 0u64);
        let mut error = None;
        let mut cancelled = pin!(stop.cancelled());
        let mut t0 = Instant::now();
        while t0 < deadline && !stop.is_cancelled() {
            let cancel = self.cancel.clone();
            let outcome = {
                let mut fut = pin!(self.transaction());
                tokio::select! {
                    biased;
                    r = &mut fut => Some(r),
                    _ = &mut cancelled => {
                        let ask = async {
                            let _ = pq_cancel(&cancel).await;
                        };
                        let _ = cancel_then_wait(ask, &mut fut, Duration::from_secs(5)).await;
                        None
                    }
                }
            };
            match outcome {
                Some(Ok(r)) => {
                    let now = Instant::now();
                    let us = u64::try_from(now.duration_since(t0).as_micros()).unwrap_or(u64::MAX);
                    latency_us.saturating_record(us.max(1));
                    transactions += 1;
                    rows += r;
                    self.work.done.fetch_add(1, Ordering::Relaxed);
                    t0 = now;
                }
                Some(Err(e)) if !stop.is_cancelled() => match self.go_on(e).await {
                    Ok(()) => t0 = Instant::now(),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                },
                _ => break,
            }
        }
        ClientResult {
            transactions,
            rows,
            latency_us,
            statement_us: std::mem::replace(&mut self.statement_us, histogram()),
            ended: t0,
            error,
            cancelled: self.conflicts.0,
            terminated: self.conflicts.1,
        }
    }
}
