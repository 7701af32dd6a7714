//! Running the DBA's statement on the measuring session: one timed execution (the plain
//! statement in its transaction, one round trip of the simple protocol, as psql sends it;
//! wall time at the client from sending to the last reply; rows returned, or affected by
//! DML), and the untimed `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of a combination (or a
//! plain `EXPLAIN` under a hypothetical index). Cancelling the run cancels the statement on
//! the server.

use std::future::Future;
use std::pin::pin;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::guard::{self, TxMode};
use super::plan::{self, PlanFacts};
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::error::{describe_query_error, sqlstate};

/// One timed execution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Executed {
    pub seconds: f64,
    /// Rows returned; for a statement that returns none, the rows it affected.
    pub rows: u64,
}

/// Run `fut` on `client` so that cancelling the run cancels it on the server; the query's own
/// error comes back as it is (the caller words it).
pub async fn cancellable<T>(
    ctx: &RunCtx,
    client: &Client,
    fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<Result<T, tokio_postgres::Error>, RunError> {
    ctx.check()?;
    let token = client.cancel_token();
    let mut fut = pin!(fut);
    tokio::select! {
        r = &mut fut => Ok(r),
        _ = ctx.cancel.cancelled() => {
            ctx.target.cancel_query(&token).await;
            match tokio::time::timeout(Duration::from_secs(10), &mut fut).await {
                Ok(_) => Err(RunError::Cancelled),
                Err(_) => Err(RunError::failed("the server did not acknowledge the cancel within 10 s")),
            }
        }
    }
}

/// A statement's error as a sentence naming the statement: a write refused by a read-only
/// transaction says how to measure DML; a timeout names the limit.
pub fn word_error(ctx: &RunCtx, name: &str, e: &tokio_postgres::Error) -> RunError {
    if ctx.cancel.is_cancelled() {
        return RunError::Cancelled;
    }
    let msg = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| describe_query_error(e));
    if guard::is_read_only_refusal(e) {
        return RunError::failed(format!("{name}: {}", guard::read_only_sentence(&msg)));
    }
    if sqlstate(e) == Some("57014") && msg.contains("statement timeout") {
        let limit = ctx
            .opts
            .statement_timeout
            .map(|d| crate::measure::units::format_seconds(d.as_secs_f64()))
            .unwrap_or_else(|| "the server's statement_timeout".into());
        return RunError::failed(format!(
            "{name}: ran past the statement timeout ({limit}): raise it with --statement-timeout, or measure a smaller case"
        ));
    }
    RunError::failed(format!("{name}: {}", describe_query_error(e)))
}

/// After a failed or cancelled execution inside `BEGIN`, leave the session clean.
async fn clean_up(client: &Client, mode: TxMode) {
    if mode != TxMode::Plain {
        let _ = client.batch_execute("ROLLBACK").await;
    }
}

/// Drain a simple-protocol reply: (rows returned, largest count a command reported).
async fn drain(client: &Client, sql: &str) -> Result<(u64, u64), tokio_postgres::Error> {
    let stream = client.simple_query_raw(sql).await?;
    let mut stream = pin!(stream);
    let (mut rows, mut affected) = (0u64, 0u64);
    while let Some(m) = stream.next().await {
        match m? {
            SimpleQueryMessage::Row(_) => rows += 1,
            SimpleQueryMessage::CommandComplete(n) => affected = affected.max(n),
            _ => {}
        }
    }
    Ok((rows, affected))
}

/// One timed execution of `sql` (`name` for messages) in its transaction.
pub async fn timed(
    ctx: &RunCtx,
    client: &Client,
    name: &str,
    sql: &str,
    mode: TxMode,
) -> Result<Executed, RunError> {
    let wrapped = mode.wrap(sql);
    let t0 = Instant::now();
    let r = cancellable(ctx, client, drain(client, &wrapped)).await;
    let seconds = t0.elapsed().as_secs_f64();
    match r {
        Ok(Ok((rows, affected))) => Ok(Executed {
            seconds,
            rows: if rows > 0 { rows } else { affected },
        }),
        Ok(Err(e)) => {
            clean_up(client, mode).await;
            Err(word_error(ctx, name, &e))
        }
        Err(e) => {
            clean_up(client, mode).await;
            Err(e)
        }
    }
}

/// The first value of the first row a simple query returned.
async fn first_value(client: &Client, sql: &str) -> Result<Option<String>, tokio_postgres::Error> {
    for m in client.simple_query(sql).await? {
        if let SimpleQueryMessage::Row(r) = m {
            return Ok(r.get(0).map(str::to_string));
        }
    }
    Ok(None)
}

fn facts_of(text: Option<String>, block: u64) -> Result<(serde_json::Value, PlanFacts), String> {
    let text = text.ok_or("EXPLAIN returned nothing")?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("EXPLAIN's JSON did not parse: {e}"))?;
    let facts = plan::read(&json, block)?;
    Ok((json, facts))
}

/// The untimed `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of `sql`, rolled back.
pub async fn explain_analyze(
    ctx: &RunCtx,
    client: &Client,
    name: &str,
    sql: &str,
    mode: TxMode,
    block: u64,
) -> Result<(serde_json::Value, PlanFacts), RunError> {
    let r = cancellable(ctx, client, first_value(client, &mode.explain(sql))).await;
    let text = match r {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            let _ = client.batch_execute("ROLLBACK").await;
            return Err(word_error(ctx, name, &e));
        }
        Err(e) => {
            let _ = client.batch_execute("ROLLBACK").await;
            return Err(e);
        }
    };
    facts_of(text, block).map_err(|e| RunError::failed(format!("{name}: {e}")))
}

/// The planner's plan of `sql` with a hypothetical index (HypoPG) made from `candidate`:
/// a plain EXPLAIN (nothing runs), the index gone again after.
pub async fn explain_hypothetical(
    ctx: &RunCtx,
    client: &Client,
    name: &str,
    sql: &str,
    candidate: &str,
    block: u64,
) -> Result<(serde_json::Value, PlanFacts), RunError> {
    let q = |e: tokio_postgres::Error| word_error(ctx, name, &e);
    client
        .query(
            "SELECT indexrelid FROM hypopg_create_index($1)",
            &[&candidate],
        )
        .await
        .map_err(q)?;
    let explain = format!("BEGIN READ ONLY; EXPLAIN (FORMAT JSON) {sql}; ROLLBACK");
    let r = cancellable(ctx, client, first_value(client, &explain)).await;
    let reset = client.batch_execute("SELECT hypopg_reset()").await;
    let text = match r {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            let _ = client.batch_execute("ROLLBACK").await;
            return Err(q(e));
        }
        Err(e) => return Err(e),
    };
    reset.map_err(q)?;
    facts_of(text, block).map_err(|e| RunError::failed(format!("{name}: {e}")))
}
