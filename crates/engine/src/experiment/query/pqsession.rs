//! The measuring session of statement mode, on libpq — the library and the calls psql uses
//! (`PQsendQuery`, then `PQgetResult` until it is done), so that a timed execution costs the
//! client what `psql \timing` measures: for a 40 µs lookup the difference is the result, not
//! a client library's overhead (tokio-postgres' extra hop through its connection task added
//! about 10 µs a statement, `benches/query.sh` part 1). The blocking calls run on tokio's
//! blocking threads, one at a time; the clock starts right before sending and stops after the
//! last result, both on that thread. Cancelling the run sends libpq's cancel request, which the
//! server acts on within milliseconds.

use std::ffi::CString;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::belts::{self, TempWatch};
use super::exec::Executed;
use super::guard::{self, TxMode};
use super::session::measuring_settings;
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::format_bytes;
use crate::server::cancel::{cancel_then_wait, pq_cancel};
use crate::server::libpq::{Outcome, PqCancel, PqConn};
use crate::sql::settings::SessionSettings;

/// What one command string gave back.
#[derive(Debug, Default)]
struct Reply {
    /// The first value of the first result with rows.
    first: Option<String>,
    /// Rows of the results with rows.
    rows: u64,
    /// The largest count a command reported.
    affected: u64,
    seconds: f64,
    /// The first error: (SQLSTATE, message).
    error: Option<(Option<String>, String)>,
    /// The session is outside any transaction afterwards (libpq's transaction status).
    idle: bool,
}

/// A libpq session set up for measuring.
pub(crate) struct PqSession {
    /// None only while a blocking call has it.
    conn: Option<PqConn>,
    cancel: Arc<PqCancel>,
    /// The temporary files one execution may write (`--max-temp`).
    cap: Option<u64>,
    /// The cap is the server's own `temp_file_limit` in this session.
    limit_by_server: bool,
    /// Else a watch of the session's temporary files, where the role may read them.
    watch: Option<TempWatch>,
    /// The combination in effect, for the sentence of a statement stopped past the cap.
    pub label: String,
}

/// Wait until the watch sees the cap passed (never, without a watch).
async fn over(watch: Option<&TempWatch>) -> u64 {
    match watch {
        Some(w) => w.over().await,
        None => std::future::pending().await,
    }
}

/// Send `sql` and read every result (blocking), timed.
fn round_trip(conn: &mut PqConn, sql: &str) -> Reply {
    let mut r = Reply::default();
    let Ok(c) = CString::new(sql) else {
        r.error = Some((None, "the statement holds a NUL byte".into()));
        return r;
    };
    let t0 = Instant::now();
    if let Err(e) = conn.send_query(&c) {
        r.error = Some((None, conn.failure(&e)));
        return r;
    }
    while let Some(res) = conn.next_result() {
        match res.outcome() {
            Outcome::Failed | Outcome::Aborted => {
                if r.error.is_none() {
                    let (code, msg) = res.error();
                    r.error = Some((code, msg));
                }
            }
            _ if res.has_rows() => {
                if r.first.is_none() {
                    r.first = res.value(0, 0);
                }
                r.rows += res.rows();
            }
            _ => r.affected = r.affected.max(res.affected()),
        }
    }
    r.seconds = t0.elapsed().as_secs_f64();
    r.idle = conn.transaction_idle();
    if r.error.is_none() && conn.is_bad() {
        r.error = Some((None, conn.failure(&conn.error_message())));
    }
    r
}

impl PqSession {
    /// Connect and set the session up: the lab's session, the transaction mode's default,
    /// the combination in effect.
    pub(crate) async fn open(ctx: &RunCtx, mode: TxMode) -> Result<PqSession, RunError> {
        let conninfo = ctx.target.libpq_conninfo();
        let setup = measuring_settings(ctx, mode);
        let conn = tokio::task::spawn_blocking(move || {
            let mut c = PqConn::connect(&conninfo).map_err(|e| {
                format!(
                    "cannot connect through libpq: {}",
                    PqConn::connect_failure(&e)
                )
            })?;
            c.exec_params(&setup.sql(false), &setup.params())?;
            Ok::<PqConn, String>(c)
        })
        .await
        .map_err(|e| RunError::failed(format!("the connecting thread failed: {e}")))?
        .map_err(RunError::Failed)?;
        let cancel = Arc::new(conn.canceller().map_err(RunError::Failed)?);
        let mut session = PqSession {
            conn: Some(conn),
            cancel,
            cap: belts::max_temp(ctx),
            limit_by_server: false,
            watch: None,
            label: String::new(),
        };
        session.belt(ctx).await?;
        Ok(session)
    }

    /// The temp-file cap: the server's `temp_file_limit` where this role may set it, else a
    /// watch where it may read `pg_ls_tmpdir()` (else the plans' spill only, see
    /// [`belts`]).
    async fn belt(&mut self, ctx: &RunCtx) -> Result<(), RunError> {
        let Some(cap) = self.cap else {
            return Ok(());
        };
        self.limit_by_server = self
            .exec(ctx, &belts::temp_file_limit_sql(cap))
            .await
            .is_ok();
        if !self.limit_by_server
            && let Some(pid) = self
                .exec(ctx, "SELECT pg_catalog.pg_backend_pid()")
                .await?
                .and_then(|p| p.parse().ok())
        {
            self.watch = TempWatch::open(ctx, pid, cap).await;
        }
        Ok(())
    }

    /// The cap on an execution's temporary files, if any.
    pub(crate) fn max_temp(&self) -> Option<u64> {
        self.cap
    }

    /// Run `sql` on the session (on a blocking thread); cancelling the run cancels it on the
    /// server, and so does the temp-file watch when the statement passes `--max-temp`.
    async fn run(&mut self, ctx: &RunCtx, sql: String) -> Result<Reply, RunError> {
        ctx.check()?;
        let mut conn = self
            .conn
            .take()
            .ok_or_else(|| RunError::failed("internal: the measuring session is busy"))?;
        let mut task = tokio::task::spawn_blocking(move || {
            let r = round_trip(&mut conn, &sql);
            (conn, r)
        });
        let watch = self.watch.take();
        let stopped = tokio::select! {
            r = &mut task => {
                self.watch = watch;
                let (conn, reply) = r.map_err(|e| RunError::failed(format!("the measuring thread failed: {e}")))?;
                self.conn = Some(conn);
                return Ok(reply);
            }
            _ = ctx.cancel.cancelled() => RunError::Cancelled,
            bytes = over(watch.as_ref()) => RunError::failed(belts::sentence(
                "the statement",
                self.cap.unwrap_or(0),
                &self.label,
                &format!("its temporary files reached {}; pglab cancelled it", format_bytes(bytes)),
            )),
        };
        self.watch = watch;
        let cancel = async {
            let _ = pq_cancel(&self.cancel).await;
        };
        match cancel_then_wait(cancel, &mut task, Duration::from_secs(10)).await {
            Some(Ok((conn, _))) => {
                self.conn = Some(conn);
                Err(stopped)
            }
            _ => Err(RunError::failed(
                "the server did not acknowledge the cancel within 10 s",
            )),
        }
    }

    /// Run pglab's own `sql` even when the run is being cancelled (a `ROLLBACK` after a
    /// cancel): no cancel select, a short blocking round trip.
    async fn run_anyway(&mut self, sql: &'static str) -> Option<Reply> {
        let mut conn = self.conn.take()?;
        let (conn, r) = tokio::task::spawn_blocking(move || {
            let r = round_trip(&mut conn, sql);
            (conn, r)
        })
        .await
        .ok()?;
        self.conn = Some(conn);
        Some(r)
    }

    /// Close an execution's transaction (`end`: its COMMIT or ROLLBACK; a failed execution
    /// always rolls back), then verify that the session is not left in a transaction: if it
    /// is, roll back, and if that does not help, close the session rather than leave it
    /// holding locks and snapshots on the server.
    async fn close(&mut self, end: Option<&'static str>, ok: bool) -> Result<(), RunError> {
        let mut idle = self.conn.as_ref().is_some_and(|c| c.transaction_idle());
        if let Some(end) = end {
            let sent = if ok { end } else { "ROLLBACK" };
            idle = self.run_anyway(sent).await.is_some_and(|r| r.idle);
        }
        if !idle {
            idle = self.run_anyway("ROLLBACK").await.is_some_and(|r| r.idle);
        }
        if idle {
            return Ok(());
        }
        self.conn = None;
        Err(RunError::failed(
            "the measuring session was still in a transaction after pglab ended it, so pglab closed it",
        ))
    }

    /// Send one of pglab's transaction-control messages (BEGIN …) on its own.
    async fn control(&mut self, ctx: &RunCtx, sql: &str) -> Result<(), RunError> {
        let r = self.run(ctx, sql.to_string()).await?;
        match r.error {
            Some(e) => {
                let _ = self.close(None, false).await;
                Err(self.failed(ctx, "pglab", e))
            }
            None => Ok(()),
        }
    }

    /// Run one statement of the DBA's (a setup's) as its own message; its error as a
    /// sentence naming it. The transaction it is in is the caller's to end.
    pub(crate) async fn command(
        &mut self,
        ctx: &RunCtx,
        name: &str,
        sql: &str,
    ) -> Result<(), RunError> {
        let r = self.run(ctx, sql.to_string()).await?;
        match r.error {
            Some(e) => Err(self.failed(ctx, name, e)),
            None => Ok(()),
        }
    }

    /// Open a transaction (`BEGIN`, its own message).
    pub(crate) async fn begin(&mut self, ctx: &RunCtx) -> Result<(), RunError> {
        self.control(ctx, "BEGIN").await
    }

    /// End the open transaction with COMMIT (`commit`) or ROLLBACK: Ok(true) when the
    /// server confirmed it (the command succeeded and the session is out of any
    /// transaction). Otherwise the session is rolled back again or closed, and Ok(false).
    pub(crate) async fn finish(&mut self, commit: bool) -> bool {
        let end = if commit { "COMMIT" } else { "ROLLBACK" };
        let confirmed = self
            .run_anyway(end)
            .await
            .is_some_and(|r| r.error.is_none() && r.idle);
        confirmed || (self.close(None, false).await.is_ok() && !commit)
    }

    /// A statement's error as a sentence naming it (see [`word`]); past the temp-file cap,
    /// the combination that made it spill.
    fn failed(&self, ctx: &RunCtx, name: &str, (code, msg): (Option<String>, String)) -> RunError {
        if ctx.cancel.is_cancelled() {
            return RunError::Cancelled;
        }
        if code.as_deref() == Some("53400") && msg.contains("temp_file_limit") {
            return RunError::failed(belts::sentence(
                name,
                self.cap.unwrap_or(0),
                &self.label,
                "the server's temp_file_limit, set by pglab for this session",
            ));
        }
        word(ctx, name, code.as_deref(), &msg)
    }

    /// Apply session settings (the combination in effect) on the session.
    pub(crate) async fn apply(
        &mut self,
        ctx: &RunCtx,
        s: &SessionSettings,
    ) -> Result<(), RunError> {
        if s.is_empty() {
            return Ok(());
        }
        ctx.check()?;
        let mut conn = self
            .conn
            .take()
            .ok_or_else(|| RunError::failed("internal: the measuring session is busy"))?;
        let s = s.clone();
        let (conn, r) = tokio::task::spawn_blocking(move || {
            let r = conn.exec_params(&s.sql(false), &s.params());
            (conn, r)
        })
        .await
        .map_err(|e| RunError::failed(format!("the measuring thread failed: {e}")))?;
        self.conn = Some(conn);
        r.map(|_| ()).map_err(RunError::Failed)
    }

    /// Run pglab's own statements (SET, SHOW …): the first value.
    pub(crate) async fn exec(
        &mut self,
        ctx: &RunCtx,
        sql: &str,
    ) -> Result<Option<String>, RunError> {
        let r = self.run(ctx, sql.to_string()).await?;
        match r.error {
            Some(e) => Err(self.failed(ctx, "pglab", e)),
            None => Ok(r.first),
        }
    }

    /// One timed execution of `sql` (`name` for messages) in its transaction. The
    /// transaction's `BEGIN` and its `COMMIT`/`ROLLBACK` are messages of their own, sent
    /// before and after and never joined to the DBA's text (a trailing `-- note` cannot
    /// swallow them). What is timed is the statement's own round trip alone — from sending it
    /// to its last result — the same window under every combination and every mode.
    pub(crate) async fn timed(
        &mut self,
        ctx: &RunCtx,
        name: &str,
        sql: &str,
        mode: TxMode,
    ) -> Result<Executed, RunError> {
        if let Some(begin) = mode.begin() {
            self.control(ctx, begin).await?;
        }
        let r = self.run(ctx, sql.to_string()).await;
        let ok = matches!(&r, Ok(r) if r.error.is_none());
        let closed = self.close(mode.end(), ok).await;
        let r = r?;
        if let Some(e) = r.error {
            return Err(self.failed(ctx, name, e));
        }
        closed?;
        Ok(Executed {
            seconds: r.seconds,
            rows: if r.rows > 0 { r.rows } else { r.affected },
        })
    }

    /// The text `explain` (an EXPLAIN of the DBA's statement) gave, run in a transaction that
    /// `begin` opens and that is always rolled back, each a message of its own; the session
    /// verified out of any transaction on every path.
    pub(crate) async fn explain(
        &mut self,
        ctx: &RunCtx,
        name: &str,
        begin: &str,
        explain: String,
    ) -> Result<Option<String>, RunError> {
        self.control(ctx, begin).await?;
        let r = self.run(ctx, explain).await;
        let closed = self.close(Some("ROLLBACK"), true).await;
        let r = r?;
        if let Some(e) = r.error {
            return Err(self.failed(ctx, name, e));
        }
        closed?;
        Ok(r.first)
    }

    /// The swept settings as `SHOW` reports them in this session.
    /// The session's backend pid (None if it cannot be read): what the host reading needs to
    /// tell the server's CPU from other processes'.
    pub(crate) async fn backend_pid(&mut self, ctx: &RunCtx) -> Option<i32> {
        self.exec(ctx, "SELECT pg_catalog.pg_backend_pid()")
            .await
            .ok()
            .flatten()
            .and_then(|p| p.parse().ok())
    }

    pub(crate) async fn shown(
        &mut self,
        ctx: &RunCtx,
        names: &[String],
    ) -> Result<std::collections::BTreeMap<String, String>, RunError> {
        if names.is_empty() {
            return Ok(Default::default());
        }
        let list: Vec<String> = names
            .iter()
            .map(|n| crate::sql::quote::literal(n))
            .collect();
        let sql = format!(
            "SELECT json_object_agg(n, current_setting(n))::text FROM unnest(ARRAY[{}]::text[]) AS n",
            list.join(", ")
        );
        let text = self.exec(ctx, &sql).await?.unwrap_or_default();
        serde_json::from_str(&text)
            .map_err(|e| RunError::failed(format!("reading the session's settings: {e}")))
    }
}

/// A statement's error as a sentence naming the statement: a write refused by a read-only
/// transaction says how to measure DML; a timeout names the limit.
pub(crate) fn word(ctx: &RunCtx, name: &str, code: Option<&str>, msg: &str) -> RunError {
    if code == Some("25006") {
        return RunError::failed(format!("{name}: {}", guard::read_only_sentence(msg)));
    }
    if code == Some("57014") && msg.contains("statement timeout") {
        let limit = ctx
            .opts
            .statement_timeout
            .map(|d| crate::measure::units::format_seconds(d.as_secs_f64()))
            .unwrap_or_else(|| "the server's statement_timeout".into());
        return RunError::failed(format!(
            "{name}: ran past the statement timeout ({limit}): raise it with --statement-timeout, or measure a smaller case"
        ));
    }
    let sentence = format!("{name}: {}", crate::server::libpq::describe(code, msg));
    match code {
        Some(code) => RunError::Server {
            sqlstate: code.to_string(),
            sentence,
        },
        None => RunError::Failed(sentence),
    }
}
