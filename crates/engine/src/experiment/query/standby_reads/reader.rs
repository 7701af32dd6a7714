//! The statements on the standby during a trial: each reader session runs them in turn until
//! the trial's time is up, timing every execution. A statement the standby cancels for a
//! recovery conflict (SQLSTATE 40001, "canceling statement due to conflict with recovery") is
//! counted and the reader goes on — on a new session when the standby ended its own.

use std::time::Instant;

use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::experiment::lab::{RunCtx, RunError};
use crate::server::Target;
use crate::sql::settings::SessionSettings;

/// What one reader (or all of them, merged) got during a trial.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Reads {
    /// Per statement: the seconds of each execution that returned.
    pub seconds: Vec<Vec<f64>>,
    /// Per statement: the rows its last execution returned.
    pub rows: Vec<u64>,
    /// Per statement: executions the standby cancelled for a recovery conflict.
    pub cancelled: Vec<u64>,
    /// Sessions the standby ended for a conflict (each also counted as cancelled).
    pub terminated: u64,
}

impl Reads {
    fn new(n: usize) -> Reads {
        Reads {
            seconds: vec![Vec::new(); n],
            rows: vec![0; n],
            cancelled: vec![0; n],
            terminated: 0,
        }
    }

    #[cfg(test)]
    /// Several readers' reads as one.
    pub(crate) fn merge(all: Vec<Reads>, n: usize) -> Reads {
        let mut out = Reads::new(n);
        for r in all {
            for s in 0..n {
                out.seconds[s].extend(&r.seconds[s]);
                out.rows[s] = out.rows[s].max(r.rows[s]);
                out.cancelled[s] += r.cancelled[s];
            }
            out.terminated += r.terminated;
        }
        out
    }

    pub(crate) fn cancelled_total(&self) -> u64 {
        self.cancelled.iter().sum()
    }
}

/// A statement cancelled, or a session ended, because of a conflict with recovery.
pub(crate) fn is_conflict(code: Option<&SqlState>, message: &str) -> bool {
    code.is_some_and(|c| {
        crate::experiment::query::loadgen::recovery::recovery_conflict(c.code(), message)
    })
}

/// A session on the standby set up like every experiment session (search path, timeouts,
/// the combination's session settings).
pub(crate) async fn open(
    ctx: &RunCtx,
    target: &Target,
    settings: &SessionSettings,
) -> Result<Client, RunError> {
    let c = target
        .connect()
        .await
        .map_err(|e| RunError::Failed(format!("the standby: {e}")))?;
    settings.apply(&c).await.map_err(|e| ctx.error(e))?;
    Ok(c)
}

/// One reader: `statements` (name, SQL) in turn on `target` until `until`; the statement
/// running then finishes. `flush`: its conflict counts are flushed to the standby's
/// statistics at the end (PostgreSQL 15+), so the trial reads them at once.
pub(crate) async fn read_until(
    ctx: &RunCtx,
    target: &Target,
    statements: &[(String, String)],
    until: Instant,
    flush: bool,
) -> Result<Reads, RunError> {
    let settings = ctx.session_settings();
    let mut client = open(ctx, target, &settings).await?;
    let mut out = Reads::new(statements.len());
    let mut i = 0;
    while Instant::now() < until {
        ctx.check()?;
        let s = i % statements.len();
        i += 1;
        let (name, sql) = &statements[s];
        let t = Instant::now();
        let token = client.cancel_token();
        let r = tokio::select! {
            r = client.simple_query(sql) => r,
            _ = ctx.cancel.cancelled() => {
                target.cancel_query(&token).await;
                return Err(RunError::Cancelled);
            }
        };
        match r {
            Ok(msgs) => {
                out.seconds[s].push(t.elapsed().as_secs_f64());
                out.rows[s] = msgs
                    .iter()
                    .filter(|m| matches!(m, SimpleQueryMessage::Row(_)))
                    .count() as u64;
            }
            Err(e) => {
                let (code, msg) = e.as_db_error().map_or((None, String::new()), |d| {
                    (Some(d.code()), d.message().to_string())
                });
                if !is_conflict(code, &msg) {
                    return Err(ctx.error(e).within(format!("{name} on the standby")));
                }
                out.cancelled[s] += 1;
                if client.is_closed() {
                    out.terminated += 1;
                    client = open(ctx, target, &settings).await?;
                }
            }
        }
    }
    if flush {
        let _ = client
            .batch_execute("SELECT pg_catalog.pg_stat_force_next_flush()")
            .await;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recovery_conflicts_count() {
        let serial = Some(&SqlState::T_R_SERIALIZATION_FAILURE);
        assert!(is_conflict(
            serial,
            "canceling statement due to conflict with recovery"
        ));
        assert!(is_conflict(
            serial,
            "terminating connection due to conflict with recovery"
        ));
        // A serialization failure of SERIALIZABLE is the workload's own, not the standby's.
        assert!(!is_conflict(
            serial,
            "could not serialize access due to concurrent update"
        ));
        assert!(!is_conflict(
            Some(&SqlState::QUERY_CANCELED),
            "canceling statement due to user request"
        ));
        assert!(!is_conflict(None, ""));
    }

    #[test]
    fn readers_merge() {
        let mut a = Reads::new(2);
        a.seconds[0] = vec![0.1];
        a.cancelled[1] = 2;
        a.rows[0] = 5;
        let mut b = Reads::new(2);
        b.seconds[0] = vec![0.2];
        b.cancelled[1] = 1;
        b.terminated = 1;
        let m = Reads::merge(vec![a, b], 2);
        assert_eq!(m.seconds[0], [0.1, 0.2]);
        assert_eq!(m.cancelled_total(), 3);
        assert_eq!(m.terminated, 1);
        assert_eq!(m.rows[0], 5);
    }
}
