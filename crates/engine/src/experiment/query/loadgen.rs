//! Throughput mode's clients: each runs the workload (a pgbench-style script, or the
//! statements one after the other) as transactions in a loop on its own libpq connection.
//! The clients are spread over a few OS threads (one per core, never more than the clients),
//! and each thread drives its clients the way pgbench's `-j` threads do: one `poll(2)` over
//! the sockets of its clients waiting for a reply, then, for each socket that has something,
//! libpq's `PQconsumeInput` and `PQgetResult` called directly, and the client's next command
//! sent at once (see [`driver`]). No task or waker stands between a reply and the next
//! command; against the tokio task per client this replaced, a replay at 1 client spends
//! ×0.92 of the client CPU per transaction (`benches/capture.sh`), CPU the server shares on a
//! small host. Commands go as `--protocol` says, with pgbench's `-M` meanings (see [`bind`]):
//! `prepared` (the default: each statement prepared once per session when the client
//! connects, then `PQsendQueryPrepared` with its values bound), `extended`
//! (`PQsendQueryParams`, an unnamed statement parsed every time) or `simple` (`:variables`
//! written into the text, `PQsendQuery`). A session that forgets its prepared statements (a
//! `DEALLOCATE`/`DISCARD` of the workload, sent on the simple protocol; or one the client did
//! not see, which fails with SQLSTATE 26000) prepares them again before its next statement.
//! A transaction is one run of the whole
//! workload (of a weighted mix: its `\set`s and one SQL command drawn by weight); its latency
//! runs from the end of the client's previous transaction (or the common start) to its last
//! reply, as pgbench counts it.
//!
//! A client opens its session, reports `Ready`, waits for `Go` (one clock for all), runs
//! until the deadline (a transaction in flight then finishes and counts, as in pgbench) or a
//! stop, and reports `Done`. A stop cancels the command in flight on the server. On a standby
//! (`go_on_conflict`) a statement the standby cancels for a conflict with recovery is counted
//! and the client goes on with its next transaction (see [`recovery`]); any other error ends
//! the client.

mod bell;
pub(crate) mod bind;
mod client;
mod driver;
pub(crate) mod recovery;

use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use hdrhistogram::Histogram;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::expr;
use super::protocol::Protocol;
use super::script::{Command, Part, Script};
use crate::server::libpq::{PqCancel, PqConn};
use crate::sql::settings::SessionSettings;

/// Highest transaction latency the histogram resolves: one hour, in microseconds.
const LATENCY_HIGH_US: u64 = 3_600_000_000;

/// What every client of a trial shares.
pub(crate) struct Workload {
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
    /// How the statements are sent.
    pub protocol: Protocol,
}

/// The start signal: when to stop starting transactions.
#[derive(Clone, Copy)]
pub(crate) struct Go {
    pub deadline: Instant,
}

/// What one client did.
pub(crate) struct ClientResult {
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
    /// Times the session had forgotten its prepared statements (SQLSTATE 26000) and the
    /// client prepared them again.
    pub reprepared: u64,
}

impl ClientResult {
    /// A client that never started (stopped before the start signal).
    fn nothing() -> ClientResult {
        ClientResult {
            transactions: 0,
            rows: 0,
            latency_us: histogram(),
            statement_us: histogram(),
            ended: Instant::now(),
            error: None,
            cancelled: 0,
            terminated: 0,
            reprepared: 0,
        }
    }
}

/// A client's reports, tagged with its index.
pub(crate) enum ClientMsg {
    Ready,
    NotReady(String),
    Done(Box<ClientResult>),
}

pub(crate) fn histogram() -> Histogram<u64> {
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
    /// On the extended protocol: a statement with its values bound (prepared, or unnamed).
    Bound(bind::Bound),
    /// A `DEALLOCATE`/`DISCARD` of the workload, on the simple protocol: the session's
    /// prepared statements are prepared again before the next one runs.
    Forget(CString),
}

/// One step of a transaction, in order.
#[derive(Clone, Copy)]
enum Step {
    /// The frame's first command (`BEGIN …`).
    Begin,
    /// The workload's command of that index.
    Command(usize),
    /// A weighted mix's SQL command, drawn by weight.
    Draw,
    /// The frame's last command (`ROLLBACK`).
    End,
}

/// What the clients of a thread run: the workload's commands ready to send, and the steps of
/// every transaction.
struct Plan {
    protocol: Protocol,
    commands: Vec<Ready>,
    steps: Vec<Step>,
    /// The frame's commands (`BEGIN`, `ROLLBACK`), when there is one.
    frame: Option<(CString, CString)>,
    /// A weighted mix: each SQL command's index with the running sum of the weights.
    mix: Vec<(usize, u64)>,
}

impl Plan {
    fn of(work: &Workload) -> Result<Plan, String> {
        let script = &work.script;
        let commands = prepare(script, work.protocol)?;
        let frame = match work.frame {
            Some((b, e)) => Some(
                CString::new(b)
                    .ok()
                    .zip(CString::new(e).ok())
                    .ok_or("the frame holds a NUL byte")?,
            ),
            None => None,
        };
        let weighted = script.mix();
        let is_weighted = weighted.is_some();
        let mut total = 0;
        let mix: Vec<(usize, u64)> = weighted
            .unwrap_or_default()
            .into_iter()
            .map(|(i, w)| {
                total += w;
                (i, total)
            })
            .collect();
        let mut steps = Vec::new();
        if frame.is_some() {
            steps.push(Step::Begin);
        }
        for (i, c) in commands.iter().enumerate() {
            if !is_weighted || matches!(c, Ready::Set { .. }) {
                steps.push(Step::Command(i));
            }
        }
        if is_weighted {
            steps.push(Step::Draw);
        }
        if frame.is_some() {
            steps.push(Step::End);
        }
        Ok(Plan {
            protocol: work.protocol,
            commands,
            steps,
            frame,
            mix,
        })
    }
}

fn prepare(script: &Script, protocol: Protocol) -> Result<Vec<Ready>, String> {
    let mut slots = 0;
    script
        .commands
        .iter()
        .map(|c| match c {
            Command::Set { var, expr, .. } => Ok(Ready::Set {
                var: *var,
                expr: expr.clone(),
            }),
            Command::Sql {
                parts,
                variants,
                captured,
                line,
                ..
            } if protocol.binds() && (variants.is_empty() || captured.is_some()) => {
                let fixed = parts.iter().all(|p| matches!(p, Part::Text(_)));
                if fixed && bind::forgets_prepared(&script.render(parts, None)) {
                    return sql_command(script, parts).map(|r| match r {
                        Ready::Fixed(sql) => Ready::Forget(sql),
                        other => other,
                    });
                }
                slots += 1;
                bind::bound(slots - 1, *line, parts, captured.as_ref()).map(Ready::Bound)
            }
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

impl Plan {
    /// The statements a prepared session prepares.
    fn bound(&self) -> impl Iterator<Item = &bind::Bound> {
        self.commands.iter().filter_map(|c| match c {
            Ready::Bound(b) => Some(b),
            _ => None,
        })
    }
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

/// A failed command: its sentence, whether it was a standby's conflict with recovery, and
/// whether the session had forgotten the prepared statement (SQLSTATE 26000).
#[derive(Debug)]
struct Failure {
    text: String,
    conflict: bool,
    forgotten: bool,
}

impl From<String> for Failure {
    fn from(text: String) -> Failure {
        Failure {
            text,
            conflict: false,
            forgotten: false,
        }
    }
}

/// Connect and set the session up (blocking), in non-blocking mode, with its canceller.
fn connect(work: &Workload) -> Result<(PqConn, PqCancel), String> {
    let mut c = PqConn::connect(&work.conninfo).map_err(|e| {
        format!(
            "cannot connect through libpq: {}",
            PqConn::connect_failure(&e)
        )
    })?;
    c.exec_params(&work.session.sql(false), &work.session.params())?;
    c.set_nonblocking()?;
    let cancel = c.canceller()?;
    Ok((c, cancel))
}

/// Start a group of clients (`ids`) on a thread of their own: they connect side by side,
/// report `Ready`, wait for the start signal (or a stop), then run (see [`driver`]).
pub(crate) fn start(
    work: Arc<Workload>,
    ids: Vec<usize>,
    stop: CancellationToken,
    go: watch::Receiver<Option<Go>>,
    reports: mpsc::UnboundedSender<(usize, ClientMsg)>,
) -> Result<(), String> {
    let first = ids.first().copied().unwrap_or(0);
    std::thread::Builder::new()
        .name(format!("pglab-query-{}", first + 1))
        .spawn(move || driver::thread_main(work, ids, stop, go, reports))
        .map(|_| ())
        .map_err(|e| format!("cannot start a client thread: {e}"))
}
