//! A client reading on a standby goes on past a conflict with recovery: the standby cancels a
//! statement whose snapshot or lock its replay needs (SQLSTATE 40001, "canceling statement due
//! to conflict with recovery") or ends the whole session (FATAL, same code; 57P04 when the
//! database was dropped). The client counts it, rolls back what the cancel left aborted (a
//! script's `BEGIN` …), or opens a new session when the standby ended its own, and starts its
//! next transaction: the trial measures the reads that returned and counts the others, rather
//! than ending at the first cancel. A session lost without a word from the server counts as
//! ended by the standby too (one ended while idle may show only as a closed socket); a new
//! one that cannot be opened ends the client with both reasons.

use std::sync::Arc;
use std::sync::mpsc::TryRecvError;

use super::client::Client;
use super::{Failure, Workload, connect};
use crate::experiment::query::protocol::Protocol;
use crate::server::libpq::PqResult;

/// SQLSTATE of a prepared statement the session does not have (invalid_sql_statement_name).
const INVALID_SQL_STATEMENT_NAME: &str = "26000";
/// SQLSTATE of a write refused in a READ ONLY transaction (read_only_sql_transaction).
const READ_ONLY_SQL_TRANSACTION: &str = "25006";

/// SQLSTATE and message of a statement cancelled, or a session ended, by a standby for a
/// conflict with recovery. A serialization failure of SERIALIZABLE is the workload's own.
pub(crate) fn recovery_conflict(code: &str, message: &str) -> bool {
    (code == "40001" && message.contains("conflict with recovery")) || code == "57P04"
}

/// A failed result as a failure (None: it did not fail). A write refused by a `READ ONLY`
/// transaction (SQLSTATE 25006) is said with the way on (`--writes rollback`).
pub(super) fn failure(r: &PqResult) -> Option<Failure> {
    let text = r.check().err()?;
    let (code, message) = r.error();
    let text = match code.as_deref() {
        Some(READ_ONLY_SQL_TRANSACTION) => {
            crate::experiment::query::guard::read_only_sentence(&text)
        }
        _ => text,
    };
    Some(Failure {
        text,
        conflict: code
            .as_deref()
            .is_some_and(|c| recovery_conflict(c, &message)),
        forgotten: code.as_deref() == Some(INVALID_SQL_STATEMENT_NAME),
    })
}

/// How a client goes on after a conflict.
pub(super) enum Resume {
    /// With its next transaction, now.
    Now,
    /// Once the `ROLLBACK` it sent (the cancel left its transaction aborted) has ended.
    AfterRollback,
    /// Once its new session is open (the standby ended the old one).
    AfterReconnect,
}

impl Client {
    /// After a failed transaction: counted, and how the client goes on, when it was a conflict
    /// on a standby (`go_on_conflict`); else the failure's sentence, which ends the client.
    /// Nothing here blocks the thread's other clients: the `ROLLBACK` goes out as any command,
    /// and a new session is opened on a thread of its own.
    pub(super) fn go_on(&mut self, work: &Arc<Workload>, e: Failure) -> Result<Resume, String> {
        let lost = self.conn.is_bad();
        if e.forgotten && !lost && work.protocol == Protocol::Prepared {
            return self.prepare_again(e);
        }
        if !work.go_on_conflict || !(e.conflict || lost) {
            return Err(e.text);
        }
        self.conflicts.0 += 1;
        if lost {
            self.conflicts.1 += 1;
            let (tx, rx) = std::sync::mpsc::channel();
            let work = work.clone();
            std::thread::Builder::new()
                .name(format!("pglab-reconnect-{}", self.id + 1))
                .spawn(move || {
                    let _ = tx.send(connect(&work));
                })
                .map_err(|why| format!("{}; then a new session: {why}", e.text))?;
            self.reconnecting = Some((rx, e.text));
            return Ok(Resume::AfterReconnect);
        }
        if self.conn.transaction_idle() {
            return Ok(Resume::Now);
        }
        self.send(c"ROLLBACK", false).map_err(|f| f.text)?;
        self.rolling_back = true;
        Ok(Resume::AfterRollback)
    }

    /// The session forgot its prepared statements (a `DEALLOCATE ALL` or `DISCARD ALL` the
    /// client did not send, a pooler's new session): they are prepared again before the next
    /// statement, and the transaction the failure cut short starts again (after its
    /// `ROLLBACK` when it was in a transaction block); it is not counted. Forgotten twice
    /// without a transaction ending in between, the client stops with the sentence.
    fn prepare_again(&mut self, e: Failure) -> Result<Resume, String> {
        self.forgotten_in_a_row += 1;
        if self.forgotten_in_a_row > 1 {
            return Err(format!(
                "{}: the session forgot its prepared statements again right after pglab prepared them (something deallocates them in every transaction): run with --protocol extended",
                e.text
            ));
        }
        self.prepared = false;
        self.reprepared += 1;
        if self.conn.transaction_idle() {
            return Ok(Resume::Now);
        }
        self.send(c"ROLLBACK", false).map_err(|f| f.text)?;
        self.rolling_back = true;
        Ok(Resume::AfterRollback)
    }

    /// The new session, if the thread opening it is done: `Some(Ok)` once it replaced the
    /// old one, `Some(Err)` with both reasons when it could not be opened.
    pub(super) fn reconnected(&mut self) -> Option<Result<(), String>> {
        let (rx, why) = self.reconnecting.as_ref()?;
        let opened = match rx.try_recv() {
            Ok(opened) => opened,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => Err("the connecting thread failed".into()),
        };
        let why = why.clone();
        self.reconnecting = None;
        Some(
            opened
                .and_then(|(conn, cancel)| self.replace_session(conn, cancel))
                .map_err(|e| format!("{why}; then a new session: {e}")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_recovery_conflicts_count() {
        assert!(recovery_conflict(
            "40001",
            "canceling statement due to conflict with recovery"
        ));
        assert!(recovery_conflict(
            "40001",
            "terminating connection due to conflict with recovery"
        ));
        assert!(recovery_conflict("57P04", "database \"x\" does not exist"));
        assert!(!recovery_conflict(
            "40001",
            "could not serialize access due to concurrent update"
        ));
        assert!(!recovery_conflict(
            "57014",
            "canceling statement due to user request"
        ));
    }
}
