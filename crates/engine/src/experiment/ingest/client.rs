//! One loading client: its own session, its share of the rows, batch after batch by one
//! method, each batch timed. It stops between batches when told to, and a statement in
//! flight is cancelled on the server, so a stop takes effect within milliseconds.

use std::path::PathBuf;
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use hdrhistogram::Histogram;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Statement};
use tokio_util::sync::CancellationToken;

use super::kinds::{Method, PayloadType, SyncCommit};
use super::meter::{Meter, Tally};
use super::payload::{Doc, PayloadGen};
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::Target;
use crate::server::cancel::{cancel_then_wait, pq_cancel};
use crate::server::error::describe_query_error;
use crate::sql::settings::SessionSettings;

/// Highest batch latency the histogram resolves: one hour, in microseconds.
const LATENCY_HIGH_US: u64 = 3_600_000_000;

/// An empty batch-latency histogram (microseconds, 3 significant digits).
pub(crate) fn latency_histogram() -> Histogram<u64> {
    // Constant, valid bounds: this cannot fail.
    Histogram::new_with_bounds(1, LATENCY_HIGH_US, 3).expect("valid histogram bounds")
}

/// A session for loading: the lab's session (`session`, see `RunCtx::session_settings`) with
/// `synchronous_commit` set for it alone, and checked with `SHOW` (a value the server
/// silently ignored would make the trial a lie). The connection's I/O task runs on the
/// calling runtime. With `lean` and a local unix socket, over `server::lean` (fewer system
/// calls per round trip; only for a client that waits for each reply): then the socket file
/// comes back too, for cancelling.
pub(crate) async fn connect_session(
    target: &Target,
    session: &SessionSettings,
    sync: SyncCommit,
    lean: bool,
) -> Result<(Client, Option<PathBuf>), String> {
    let (client, socket) = match lean.then_some(()).and(target.lean_socket()) {
        Some(path) => match target.connect_lean().await {
            Some(Ok(c)) => (c, Some(path)),
            // Whatever went wrong, the usual way says it best (or works).
            _ => (target.connect().await.map_err(|e| e.to_string())?, None),
        },
        None => (target.connect().await.map_err(|e| e.to_string())?, None),
    };
    let mut settings = session.clone();
    settings.set("synchronous_commit", sync.as_str());
    let q = |e: tokio_postgres::Error| describe_query_error(&e);
    settings.apply(&client).await.map_err(q)?;
    let shown: String = client
        .query_one("SHOW synchronous_commit", &[])
        .await
        .map_err(q)?
        .get(0);
    if shown != sync.as_str() {
        return Err(format!(
            "SET synchronous_commit = {} did not take effect (SHOW says {shown})",
            sync.as_str()
        ));
    }
    Ok((client, socket))
}

/// [`connect_session`] for a run's context: the session a loading client of that run gets.
pub async fn open_session(ctx: &RunCtx, sync: SyncCommit) -> Result<Client, RunError> {
    ctx.check()?;
    connect_session(&ctx.target, &ctx.session_settings(), sync, false)
        .await
        .map(|(c, _)| c)
        .map_err(RunError::Failed)
}

/// What one client is to load.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// 0-based, of `of` clients.
    pub index: usize,
    pub of: usize,
    pub method: Method,
    pub batch: u64,
    /// Ids `first_id .. first_id + rows` are this client's.
    pub first_id: i64,
    pub rows: u64,
    pub pipeline: bool,
    pub payload_type: PayloadType,
    /// `"schema"."table"`.
    pub table: String,
}

/// How a client's load ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoadError {
    /// Told to stop (cancel, the time limit, or another client failed).
    Stopped,
    Failed(String),
}

/// What a client did.
pub(crate) struct LoadResult {
    pub rows: u64,
    pub commits: u64,
    pub latency_us: Histogram<u64>,
    pub error: Option<LoadError>,
}

/// A client with its statements prepared, ready to load.
pub(crate) struct Loader {
    client: Client,
    /// The unix socket of a lean session (`connect_session`), where cancel requests go.
    socket: Option<PathBuf>,
    job: Job,
    payload: Arc<PayloadGen>,
    stmts: Stmts,
    /// One payload buffer per row of a batch, reused.
    bufs: Vec<String>,
}

/// The statements a method runs, prepared.
enum Stmts {
    /// `INSERT … VALUES ($1, $2)`.
    Insert(Statement),
    /// `INSERT … VALUES` of `full_rows` rows, and of the remainder when there is one.
    Values {
        full_rows: u64,
        full: Statement,
        rest: Option<Statement>,
    },
    /// `COPY … FROM STDIN (FORMAT binary)`.
    Copy(String),
}

pub(super) fn values_sql(table: &str, rows: u64) -> String {
    let mut s = format!("INSERT INTO {table} (id, payload) VALUES ");
    for i in 0..rows {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("(${}, ${})", 2 * i + 1, 2 * i + 2));
    }
    s
}

impl Loader {
    /// Prepare the job's statements on `client` (before the trial's clock starts).
    pub(crate) async fn prepare(
        (client, socket): (Client, Option<PathBuf>),
        job: Job,
        payload: Arc<PayloadGen>,
    ) -> Result<Loader, String> {
        let q = |e: tokio_postgres::Error| describe_query_error(&e);
        let table = job.table.clone();
        let stmts = match job.method {
            Method::Insert | Method::InsertTx => {
                let sql = format!("INSERT INTO {table} (id, payload) VALUES ($1, $2)");
                Stmts::Insert(client.prepare(&sql).await.map_err(q)?)
            }
            Method::Values => {
                let full_rows = job.batch.min(job.rows).max(1);
                let full = client
                    .prepare(&values_sql(&table, full_rows))
                    .await
                    .map_err(q)?;
                let rest_rows = job.rows % job.batch;
                let rest = if rest_rows > 0 && rest_rows != full_rows {
                    Some(
                        client
                            .prepare(&values_sql(&table, rest_rows))
                            .await
                            .map_err(q)?,
                    )
                } else {
                    None
                };
                Stmts::Values {
                    full_rows,
                    full,
                    rest,
                }
            }
            Method::Copy => Stmts::Copy(format!(
                "COPY {table} (id, payload) FROM STDIN (FORMAT binary)"
            )),
        };
        let slots = match job.method {
            Method::Insert | Method::Copy => 1,
            Method::InsertTx | Method::Values => job.batch.min(job.rows).max(1) as usize,
        };
        Ok(Loader {
            client,
            socket,
            job,
            payload,
            stmts,
            bufs: vec![String::new(); slots],
        })
    }

    /// One batch of `n` rows from id `first`; returns the commits it made.
    async fn batch_tokio(&mut self, first: i64, n: u64) -> Result<u64, tokio_postgres::Error> {
        let payload = &*self.payload;
        let bufs = &mut self.bufs;
        match (&self.stmts, self.job.method) {
            (Stmts::Insert(stmt), Method::InsertTx) => {
                let n = n as usize;
                for (i, b) in bufs[..n].iter_mut().enumerate() {
                    payload.fill(first + i as i64, b);
                }
                let ids: Vec<i64> = (0..n as i64).map(|i| first + i).collect();
                let docs: Vec<Doc<'_>> = bufs[..n].iter().map(|b| Doc(b)).collect();
                let params: Vec<[&(dyn ToSql + Sync); 2]> = ids
                    .iter()
                    .zip(&docs)
                    .map(|(id, d)| [id as &(dyn ToSql + Sync), d as &(dyn ToSql + Sync)])
                    .collect();
                let tx = self.client.transaction().await?;
                if self.job.pipeline {
                    try_join_all(params.iter().map(|p| tx.execute(stmt, p))).await?;
                } else {
                    for p in &params {
                        tx.execute(stmt, p).await?;
                    }
                }
                tx.commit().await?;
                Ok(1)
            }
            (Stmts::Insert(stmt), _) => {
                let buf = &mut bufs[0];
                payload.fill(first, buf);
                self.client.execute(stmt, &[&first, &Doc(buf)]).await?;
                Ok(1)
            }
            (
                Stmts::Values {
                    full_rows,
                    full,
                    rest,
                },
                _,
            ) => {
                let stmt = match rest {
                    Some(rest) if n != *full_rows => rest,
                    _ => full,
                };
                let n = n as usize;
                for (i, b) in bufs[..n].iter_mut().enumerate() {
                    payload.fill(first + i as i64, b);
                }
                let ids: Vec<i64> = (0..n as i64).map(|i| first + i).collect();
                let docs: Vec<Doc<'_>> = bufs[..n].iter().map(|b| Doc(b)).collect();
                let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(2 * n);
                for (id, d) in ids.iter().zip(&docs) {
                    params.push(id);
                    params.push(d);
                }
                self.client.execute(stmt, &params).await?;
                Ok(1)
            }
            (Stmts::Copy(sql), _) => {
                let ty = match self.job.payload_type {
                    PayloadType::Text => Type::TEXT,
                    PayloadType::Json => Type::JSONB,
                };
                let sink = self.client.copy_in(sql.as_str()).await?;
                let mut writer = pin!(BinaryCopyInWriter::new(sink, &[Type::INT8, ty]));
                let buf = &mut bufs[0];
                for id in first..first + n as i64 {
                    payload.fill(id, buf);
                    writer.as_mut().write(&[&id, &Doc(buf)]).await?;
                }
                writer.finish().await?;
                Ok(1)
            }
        }
    }
}

impl Batches for Loader {
    fn job(&self) -> &Job {
        &self.job
    }

    fn canceller(&self, target: &Arc<Target>) -> Canceller {
        Canceller::Tokio {
            token: self.client.cancel_token(),
            socket: self.socket.clone(),
            target: target.clone(),
        }
    }

    async fn batch(&mut self, first: i64, n: u64) -> Result<u64, String> {
        self.batch_tokio(first, n)
            .await
            .map_err(|e| describe_query_error(&e))
    }
}

/// How to cancel the statement a client has in flight.
pub(crate) enum Canceller {
    Tokio {
        token: tokio_postgres::CancelToken,
        /// A lean session's unix socket (`connect_session`).
        socket: Option<PathBuf>,
        target: Arc<Target>,
    },
    Pq(Arc<crate::server::libpq::PqCancel>),
}

impl Canceller {
    async fn cancel(&self) {
        match self {
            Canceller::Tokio {
                token,
                socket: Some(path),
                target,
            } => target.cancel_query_at(token, path).await,
            Canceller::Tokio { token, target, .. } => target.cancel_query(token).await,
            Canceller::Pq(c) => {
                if let Err(e) = pq_cancel(c).await {
                    tracing::warn!("cancel request failed: {e}");
                }
            }
        }
    }
}

/// A client ready to load batch after batch: on tokio-postgres ([`Loader`]) or on libpq
/// (`pq_loader::PqLoader`).
pub(crate) trait Batches {
    fn job(&self) -> &Job;
    /// What cancels a batch in flight (taken once, before the load).
    fn canceller(&self, target: &Arc<Target>) -> Canceller;
    /// One batch of `n` rows from id `first`: the commits it made, or what went wrong as a
    /// sentence.
    async fn batch(&mut self, first: i64, n: u64) -> Result<u64, String>;
}

/// Load the job's rows (or until `deadline`, or until `stop`), recording each committed batch
/// in `meter`. A batch in flight when `stop` comes is cancelled on the server.
pub(crate) async fn run_load<B: Batches>(
    mut loader: B,
    meter: Arc<Meter>,
    stop: CancellationToken,
    target: Arc<Target>,
    deadline: Option<Instant>,
) -> LoadResult {
    let canceller = loader.canceller(&target);
    let job = loader.job().clone();
    let mut latency_us = latency_histogram();
    let (mut done, mut commits) = (0u64, 0u64);
    let mut error = None;
    let mut tally = Tally::new(&meter);
    // One cancellation future for the whole load, not one per batch.
    let mut cancelled = pin!(stop.cancelled());
    // Each batch's end is the next one's start: one clock read per batch.
    let mut t0 = Instant::now();
    while done < job.rows {
        if stop.is_cancelled() {
            error = Some(LoadError::Stopped);
            break;
        }
        if deadline.is_some_and(|d| t0 >= d) {
            break;
        }
        let n = job.batch.min(job.rows - done);
        let first = job.first_id + done as i64;
        let outcome = {
            let mut fut = pin!(loader.batch(first, n));
            tokio::select! {
                biased;
                r = &mut fut => Some(r),
                _ = &mut cancelled => {
                    // Let the server abort it so the session ends clean.
                    let _ = cancel_then_wait(canceller.cancel(), &mut fut, Duration::from_secs(5)).await;
                    None
                }
            }
        };
        match outcome {
            Some(Ok(c)) => {
                let now = Instant::now();
                let us = u64::try_from(now.duration_since(t0).as_micros()).unwrap_or(u64::MAX);
                latency_us.saturating_record(us.max(1));
                t0 = now;
                done += n;
                commits += c;
                tally.add(n, now);
            }
            Some(Err(_)) | None if stop.is_cancelled() => {
                error = Some(LoadError::Stopped);
                break;
            }
            Some(Err(e)) => {
                error = Some(LoadError::Failed(format!(
                    "client {} of {} failed after {} rows: {e}",
                    job.index + 1,
                    job.of,
                    done,
                )));
                break;
            }
            None => {
                error = Some(LoadError::Stopped);
                break;
            }
        }
    }
    tally.flush();
    LoadResult {
        rows: done,
        commits,
        latency_us,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_statement_numbers_its_parameters() {
        assert_eq!(
            values_sql("t", 2),
            "INSERT INTO t (id, payload) VALUES ($1, $2),($3, $4)"
        );
    }
}
