//! The libpq loader: `insert`, `insert-tx` (with or without `--pipeline on`) and `values`
//! through libpq, the library `pgbench` uses, driven without blocking from the client
//! thread's runtime. `copy` stays on tokio-postgres (`client::Loader`).
//!
//! Why: on tokio-postgres every statement is a future, a message over a channel to the
//! connection's task and a `Sync` of its own; pipelining 100 `INSERT`s cost about 2 µs of
//! client CPU per row against libpq's 0.3 (`benches/ingest.sh`, part 4). Here a pipeline is
//! written into libpq's buffer and sent in one write with one `Sync`, exactly as
//! `pgbench`'s `\startpipeline`/`\endpipeline` sends it; a single statement is `sendto`, a
//! wait for readability and `recvfrom`, as in `pgbench`.
//!
//! Readiness and the non-blocking loop are `server::pq_async`'s. Measured against peeking
//! after every read (`benches/ingest.sh`, 4 rounds, single-row insert, sync off): 7.5 against
//! 8.1 µs of client CPU per row at 4 clients, 6.3 against 6.6 at 16, 22.6 against 21.3 at 1
//! (one speculative read too many per row).
//!
//! Parameters are sent as text, as `pgbench -M prepared` sends them.

use std::ffi::{CStr, c_char};
use std::fmt::Write;
use std::sync::Arc;

use super::client::{Batches, Canceller, Job, values_sql};
use super::kinds::{Method, SyncCommit};
use super::payload::PayloadGen;
use crate::server::Target;
use crate::server::libpq::{Outcome, PqCancel, PqConn, PqResult};
use crate::server::pq_async::AsyncPq;
use crate::sql::settings::SessionSettings;

const INSERT: &CStr = c"pglab_insert";
const VALUES_FULL: &CStr = c"pglab_values";
const VALUES_REST: &CStr = c"pglab_values_rest";
const BEGIN: &CStr = c"pglab_begin";
const COMMIT: &CStr = c"pglab_commit";

/// A client on libpq, its statements prepared, in non-blocking (and for `--pipeline on`,
/// pipeline) mode.
pub(crate) struct PqLoader {
    /// The connection, read and written without blocking the client's thread.
    pq: AsyncPq,
    cancel: Arc<PqCancel>,
    job: Job,
    payload: Arc<PayloadGen>,
    /// Rows in the full `values` statement.
    values_rows: u64,
    /// Per row of a batch: the id and the payload, each NUL-terminated text.
    ids: Vec<String>,
    docs: Vec<String>,
    /// The parameter pointers of the batch being sent (into `ids` and `docs`).
    params: Vec<*const c_char>,
}

/// Whether the ingest clients load through libpq: yes unless `PGLAB_LOADER=tokio` (kept for
/// `benches/ingest.sh`, which measures both side by side); `copy` always uses tokio-postgres.
pub(crate) fn wanted(method: Method) -> Result<bool, String> {
    if method == Method::Copy {
        return Ok(false);
    }
    match std::env::var("PGLAB_LOADER").as_deref() {
        Err(_) | Ok("") | Ok("libpq") => Ok(true),
        Ok("tokio") => Ok(false),
        Ok(other) => Err(format!(
            "PGLAB_LOADER is '{other}': it must be libpq (the default) or tokio"
        )),
    }
}

/// Connect, set the session up and prepare (blocking: run off the runtime).
fn open_blocking(
    conninfo: &str,
    session: &SessionSettings,
    sync: SyncCommit,
    job: &Job,
    values_rows: u64,
) -> Result<PqConn, String> {
    let mut c = PqConn::connect(conninfo).map_err(|e| {
        format!(
            "cannot connect through libpq: {} (pglab's own sessions did connect; PGLAB_LOADER=tokio loads through those instead)",
            PqConn::connect_failure(&e)
        )
    })?;
    // The lab session's settings (search_path = pg_catalog, lab first), as parameters.
    let mut settings = session.clone();
    settings.set("synchronous_commit", sync.as_str());
    c.exec_params(&settings.sql(false), &settings.params())?;
    let shown = c.exec("SHOW synchronous_commit")?.unwrap_or_default();
    if shown != sync.as_str() {
        return Err(format!(
            "SET synchronous_commit = {} did not take effect (SHOW says {shown})",
            sync.as_str()
        ));
    }
    let table = &job.table;
    match job.method {
        Method::Insert | Method::InsertTx => {
            c.prepare(
                INSERT,
                &format!("INSERT INTO {table} (id, payload) VALUES ($1, $2)"),
            )?;
            c.prepare(BEGIN, "BEGIN")?;
            c.prepare(COMMIT, "COMMIT")?;
        }
        Method::Values => {
            c.prepare(VALUES_FULL, &values_sql(table, values_rows))?;
            let rest = job.rows % job.batch.max(1);
            if rest > 0 && rest != values_rows {
                c.prepare(VALUES_REST, &values_sql(table, rest))?;
            }
        }
        Method::Copy => return Err("copy does not load through libpq".into()),
    }
    c.set_nonblocking()?;
    if job.pipeline && job.method == Method::InsertTx {
        c.enter_pipeline_mode()?;
    }
    Ok(c)
}

impl PqLoader {
    /// Open the client's session and prepare its statements; must run inside the client
    /// thread's runtime (the socket is registered with it).
    pub(crate) async fn open(
        target: &Target,
        session: &SessionSettings,
        sync: SyncCommit,
        job: Job,
        payload: Arc<PayloadGen>,
    ) -> Result<PqLoader, String> {
        let values_rows = job.batch.min(job.rows).max(1);
        let conninfo = target.libpq_conninfo();
        let session = session.clone();
        let j = job.clone();
        let conn = tokio::task::spawn_blocking(move || {
            open_blocking(&conninfo, &session, sync, &j, values_rows)
        })
        .await
        .map_err(|e| format!("the connecting thread failed: {e}"))??;
        let cancel = Arc::new(conn.canceller()?);
        let pq = AsyncPq::new(conn)?;
        let slots = match job.method {
            Method::Insert => 1,
            _ => values_rows as usize,
        };
        Ok(PqLoader {
            pq,
            cancel,
            job,
            payload,
            values_rows,
            ids: vec![String::new(); slots],
            docs: vec![String::new(); slots],
            params: Vec::with_capacity(2 * slots),
        })
    }

    /// Fill rows `first .. first + n` into the buffers and point `params` at them.
    fn fill(&mut self, first: i64, n: usize) {
        self.params.clear();
        for (i, (id, doc)) in self.ids[..n]
            .iter_mut()
            .zip(&mut self.docs[..n])
            .enumerate()
        {
            let row = first + i as i64;
            id.clear();
            let _ = write!(id, "{row}\0");
            self.payload.fill(row, doc);
            doc.push('\0');
            self.params.push(id.as_ptr().cast());
            self.params.push(doc.as_ptr().cast());
        }
    }

    /// A failed libpq call said as a sentence (a lost connection named as such).
    fn failure(&self, e: String) -> String {
        self.pq.conn.failure(&e)
    }

    async fn next_result(&mut self) -> Result<Option<PqResult>, String> {
        self.pq.next_result().await
    }

    async fn flush(&mut self) -> Result<(), String> {
        self.pq.flush().await
    }

    /// Queue a prepared statement.
    ///
    /// `params` must be empty or point into `ids`/`docs` as `fill` left them (NUL-terminated,
    /// unchanged until the next `fill`).
    fn send(&mut self, stmt: &CStr, params: &[*const c_char]) -> Result<(), String> {
        // SAFETY: see above: every pointer is a NUL-terminated buffer of `ids` or `docs`,
        // which nothing changes while a batch is sent.
        unsafe { self.pq.conn.send_prepared(stmt, params) }.map_err(|e| self.failure(e))
    }

    /// Wait for the next result; a read error after a statement already failed keeps the
    /// statement's error (the server says why it ended the session before it closes it).
    async fn next_or(&mut self, failed: &mut Option<String>) -> Result<Option<PqResult>, String> {
        match self.next_result().await {
            Ok(r) => Ok(r),
            Err(e) => Err(failed.take().unwrap_or(e)),
        }
    }

    /// Send one prepared statement and wait for its end: `Err` with its error if it failed.
    async fn round_trip(&mut self, stmt: &CStr, params: &[*const c_char]) -> Result<(), String> {
        self.send(stmt, params)?;
        self.flush().await?;
        let mut failed = None;
        while let Some(r) = self.next_or(&mut failed).await? {
            if failed.is_none() {
                failed = r.check().err();
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// BEGIN, the `n` INSERTs of `params`, COMMIT, one Sync: sent at once, then the results.
    async fn pipeline(&mut self, params: &[*const c_char], n: usize) -> Result<(), String> {
        self.send(BEGIN, &[])?;
        for row in params.chunks_exact(2).take(n) {
            self.send(INSERT, row)?;
        }
        self.send(COMMIT, &[])?;
        if let Err(e) = self.pq.conn.pipeline_sync() {
            return Err(self.failure(e));
        }
        self.flush().await?;
        let mut failed = None;
        // Statements' results end with a NULL each; two in a row mean libpq has nothing
        // more to give (a connection gone bad without a read error): never spin on that.
        let mut nulls = 0;
        loop {
            match self.next_or(&mut failed).await? {
                None => {
                    nulls += 1;
                    if nulls > 1 || self.pq.conn.is_bad() {
                        let lost = self.failure(self.pq.conn.error_message());
                        return Err(failed.unwrap_or(lost));
                    }
                }
                Some(r) => {
                    nulls = 0;
                    match r.outcome() {
                        Outcome::Sync => break,
                        Outcome::Ok | Outcome::Aborted => {}
                        Outcome::Failed => {
                            if failed.is_none() {
                                failed = r.check().err();
                            }
                        }
                    }
                }
            }
        }
        failed.map_or(Ok(()), Err)
    }

    async fn batch_pq(&mut self, first: i64, n: u64) -> Result<u64, String> {
        let rows = n as usize;
        self.fill(first, rows);
        // Taken for the batch (the calls below borrow `self`), put back after.
        let params = std::mem::take(&mut self.params);
        let r = match self.job.method {
            Method::Insert => self.round_trip(INSERT, &params).await,
            Method::InsertTx if self.job.pipeline => self.pipeline(&params, rows).await,
            Method::InsertTx => {
                let mut r = self.round_trip(BEGIN, &[]).await;
                for row in params.chunks_exact(2) {
                    if r.is_err() {
                        break;
                    }
                    r = self.round_trip(INSERT, row).await;
                }
                if r.is_ok() {
                    r = self.round_trip(COMMIT, &[]).await;
                }
                r
            }
            Method::Values => {
                let stmt = if n == self.values_rows {
                    VALUES_FULL
                } else {
                    VALUES_REST
                };
                self.round_trip(stmt, &params).await
            }
            Method::Copy => Err("copy does not load through libpq".into()),
        };
        self.params = params;
        r.map(|()| 1)
    }
}

impl Batches for PqLoader {
    fn job(&self) -> &Job {
        &self.job
    }

    fn canceller(&self, _target: &Arc<Target>) -> Canceller {
        Canceller::Pq(self.cancel.clone())
    }

    async fn batch(&mut self, first: i64, n: u64) -> Result<u64, String> {
        self.batch_pq(first, n).await
    }
}
