//! A client reading on a standby goes on past a conflict with recovery: the standby cancels a
//! statement whose snapshot or lock its replay needs (SQLSTATE 40001, "canceling statement due
//! to conflict with recovery") or ends the whole session (FATAL, same code; 57P04 when the
//! database was dropped). The client counts it, rolls back what the cancel left aborted (a
//! script's `BEGIN` …), or opens a new session when the standby ended its own, and starts its
//! next transaction: the trial measures the reads that returned and counts the others, rather
//! than ending at the first cancel. A session lost without a word from the server counts as
//! ended by the standby too (one ended while idle may show only as a closed socket); a new
//! one that cannot be opened ends the client with both reasons.

use super::client::Client;
use super::{Failure, Workload, connect};
use crate::server::libpq::PqResult;

/// SQLSTATE and message of a statement cancelled, or a session ended, by a standby for a
/// conflict with recovery. A serialization failure of SERIALIZABLE is the workload's own.
pub fn recovery_conflict(code: &str, message: &str) -> bool {
    (code == "40001" && message.contains("conflict with recovery")) || code == "57P04"
}

/// A failed result as a failure (None: it did not fail).
pub(super) fn failure(r: &PqResult) -> Option<Failure> {
    let text = r.check().err()?;
    let (code, message) = r.error();
    Some(Failure {
        text,
        conflict: code.is_some_and(|c| recovery_conflict(&c, &message)),
    })
}

impl Client {
    /// After a failed transaction: counted and ready for the next one when it was a conflict
    /// on a standby (`go_on_conflict`); else the failure's sentence, which ends the client.
    /// The `ROLLBACK` and the new session are blocking calls: the thread's other clients wait
    /// for them, which only a standby's conflicts cause.
    pub(super) fn go_on(&mut self, work: &Workload, e: Failure) -> Result<(), String> {
        let lost = self.conn.is_bad();
        if !work.go_on_conflict || !(e.conflict || lost) {
            return Err(e.text);
        }
        self.conflicts.0 += 1;
        if lost {
            self.conflicts.1 += 1;
            let (conn, cancel) =
                connect(work).map_err(|why| format!("{}; then a new session: {why}", e.text))?;
            self.replace_session(conn, cancel)?;
        } else if !self.conn.transaction_idle() {
            self.conn.exec("ROLLBACK")?;
        }
        Ok(())
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
