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

use super::exec::Executed;
use super::guard::{self, TxMode};
use super::session::measuring_settings;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::sql::SessionSettings;
use crate::server::libpq::{Outcome, PqCancel, PqConn};

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
}

/// A libpq session set up for measuring.
pub struct PqSession {
    /// None only while a blocking call has it.
    conn: Option<PqConn>,
    cancel: Arc<PqCancel>,
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
    if r.error.is_none() && conn.is_bad() {
        r.error = Some((None, conn.failure(&conn.error_message())));
    }
    r
}

impl PqSession {
    /// Connect and set the session up: the lab's session, the transaction mode's default,
    /// the combination in effect.
    pub async fn open(ctx: &RunCtx, mode: TxMode) -> Result<PqSession, RunError> {
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
        Ok(PqSession {
            conn: Some(conn),
            cancel,
        })
    }

    /// Run `sql` on the session (on a blocking thread); cancelling the run cancels it on the
    /// server.
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
        let done = tokio::select! {
            r = &mut task => r,
            _ = ctx.cancel.cancelled() => {
                let c = self.cancel.clone();
                let _ = tokio::task::spawn_blocking(move || c.cancel()).await;
                match tokio::time::timeout(Duration::from_secs(10), &mut task).await {
                    Ok(Ok((conn, _))) => {
                        self.conn = Some(conn);
                        return Err(RunError::Cancelled);
                    }
                    _ => return Err(RunError::failed("the server did not acknowledge the cancel within 10 s")),
                }
            }
        };
        let (conn, reply) =
            done.map_err(|e| RunError::failed(format!("the measuring thread failed: {e}")))?;
        self.conn = Some(conn);
        Ok(reply)
    }

    /// Leave a transaction a failed command left open.
    async fn roll_back(&mut self, ctx: &RunCtx, mode: TxMode) {
        if mode != TxMode::Plain {
            let _ = self.run(ctx, "ROLLBACK".into()).await;
        }
    }

    /// A statement's error as a sentence naming it (see [`word`]).
    fn failed(ctx: &RunCtx, name: &str, (code, msg): (Option<String>, String)) -> RunError {
        if ctx.cancel.is_cancelled() {
            return RunError::Cancelled;
        }
        word(ctx, name, code.as_deref(), &msg)
    }

    /// Apply session settings (the combination in effect) on the session.
    pub async fn apply(&mut self, ctx: &RunCtx, s: &SessionSettings) -> Result<(), RunError> {
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
    pub async fn exec(&mut self, ctx: &RunCtx, sql: &str) -> Result<Option<String>, RunError> {
        let r = self.run(ctx, sql.to_string()).await?;
        match r.error {
            Some(e) => Err(Self::failed(ctx, "pglab", e)),
            None => Ok(r.first),
        }
    }

    /// One timed execution of `sql` (`name` for messages) in its transaction.
    pub async fn timed(
        &mut self,
        ctx: &RunCtx,
        name: &str,
        sql: &str,
        mode: TxMode,
    ) -> Result<Executed, RunError> {
        let r = match self.run(ctx, mode.wrap(sql)).await {
            Ok(r) => r,
            Err(e) => {
                self.roll_back(ctx, mode).await;
                return Err(e);
            }
        };
        if let Some(e) = r.error {
            self.roll_back(ctx, mode).await;
            return Err(Self::failed(ctx, name, e));
        }
        Ok(Executed {
            seconds: r.seconds,
            rows: if r.rows > 0 { r.rows } else { r.affected },
        })
    }

    /// The text an EXPLAIN of `sql` gave (`explain`: the whole command string, e.g.
    /// [`TxMode::explain`]), the transaction left clean on every path.
    pub async fn explain(
        &mut self,
        ctx: &RunCtx,
        name: &str,
        explain: String,
    ) -> Result<Option<String>, RunError> {
        let r = self.run(ctx, explain).await;
        match r {
            Ok(r) if r.error.is_none() => Ok(r.first),
            Ok(r) => {
                let _ = self.run(ctx, "ROLLBACK".into()).await;
                Err(Self::failed(ctx, name, r.error.unwrap_or_default()))
            }
            Err(e) => {
                let _ = self.run(ctx, "ROLLBACK".into()).await;
                Err(e)
            }
        }
    }

    /// The swept settings as `SHOW` reports them in this session.
    pub async fn shown(
        &mut self,
        ctx: &RunCtx,
        names: &[String],
    ) -> Result<std::collections::BTreeMap<String, String>, RunError> {
        if names.is_empty() {
            return Ok(Default::default());
        }
        let list: Vec<String> = names
            .iter()
            .map(|n| crate::experiment::sql::literal(n))
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
pub fn word(ctx: &RunCtx, name: &str, code: Option<&str>, msg: &str) -> RunError {
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
    RunError::failed(format!(
        "{name}: {}",
        crate::server::libpq::describe(code, msg)
    ))
}
