//! The transaction the DBA's statements run in, and what they may not do. On any server that
//! is not pglab's sandbox every execution is a `READ ONLY` transaction (and the session's
//! default is read-only too), so the server itself refuses a write; `--writes rollback` runs
//! each execution in a transaction that is always rolled back. The frame's `BEGIN` and
//! `COMMIT`/`ROLLBACK` are protocol messages of their own, never joined to the DBA's text.
//! What may run is decided on PostgreSQL's own parse tree ([`crate::sql::classify`]):
//! statements that end or change pglab's transaction are refused everywhere, and on a server
//! pglab did not start only the allow-list of reads runs.

use super::spec::Writes;
use crate::server::error::sqlstate;
use crate::sql::settings::SessionSettings;
use crate::sql::{Frame, Place, Rules};

/// How each execution is wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxMode {
    /// As written, autocommit (pglab's sandbox, `writes = auto`).
    Plain,
    /// `BEGIN READ ONLY; … COMMIT`, in a session whose default is read-only.
    ReadOnly,
    /// `BEGIN; … ROLLBACK`.
    Rollback,
}

/// What a rollback does not undo, said wherever `--writes rollback` is.
pub(crate) const ROLLBACK_CAVEAT: &str = "a rollback does not undo sequence increments (nextval), work done outside the database (dblink, COPY TO PROGRAM, notifications are dropped) or the buffers and statistics the statement touched";

impl TxMode {
    pub(crate) fn of(writes: Writes, on_sandbox: bool) -> TxMode {
        match (writes, on_sandbox) {
            (Writes::Auto, true) => TxMode::Plain,
            (Writes::Auto, false) | (Writes::ReadOnly, _) => TxMode::ReadOnly,
            (Writes::Rollback, _) => TxMode::Rollback,
        }
    }

    /// How the report names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            TxMode::Plain => "as written (autocommit)",
            TxMode::ReadOnly => "READ ONLY transactions (the server refuses writes)",
            TxMode::Rollback => "transactions rolled back after each execution",
        }
    }

    /// Settings of a measuring session for this mode, added to `s`.
    pub(crate) fn add_settings(self, s: &mut SessionSettings) {
        if self == TxMode::ReadOnly {
            s.set("default_transaction_read_only", "on");
        }
    }

    /// What opens an execution's transaction, sent as a message of its own before it (None:
    /// the statement runs as written). Never joined to the DBA's text, so no comment in it
    /// can swallow pglab's transaction control.
    pub(crate) fn begin(self) -> Option<&'static str> {
        match self {
            TxMode::Plain => None,
            TxMode::ReadOnly => Some("BEGIN READ ONLY"),
            TxMode::Rollback => Some("BEGIN"),
        }
    }

    /// What closes it, a message of its own after the statement.
    pub(crate) fn end(self) -> Option<&'static str> {
        match self {
            TxMode::Plain => None,
            TxMode::ReadOnly => Some("COMMIT"),
            TxMode::Rollback => Some("ROLLBACK"),
        }
    }

    /// What opens the untimed EXPLAIN ANALYZE's transaction, always rolled back after it, so
    /// a write is never made once more for the plan.
    pub(crate) fn explain_begin(self) -> &'static str {
        if self == TxMode::ReadOnly {
            "BEGIN READ ONLY"
        } else {
            "BEGIN"
        }
    }

    /// A script transaction's frame: what goes before and after its commands.
    pub(crate) fn script_frame(self) -> Option<(&'static str, &'static str)> {
        match self {
            TxMode::Rollback => Some(("BEGIN", "ROLLBACK")),
            _ => None,
        }
    }

    /// The classifier's name for this frame.
    pub(crate) fn frame(self) -> Frame {
        match self {
            TxMode::Plain => Frame::Autocommit,
            TxMode::ReadOnly => Frame::ReadOnly,
            TxMode::Rollback => Frame::Rollback,
        }
    }
}

/// Whether `sql` only reads: it is on the allow-list a server pglab did not start runs (no
/// DML, no row locks, no side-effecting built-in). Any other statement writes, or may.
pub(crate) fn is_read(sql: &str) -> bool {
    crate::sql::check(
        sql,
        Rules {
            place: Place::Measured,
            frame: Frame::ReadOnly,
            foreign: true,
        },
    )
    .is_ok()
}

/// Whether EXPLAIN takes the statement (by PostgreSQL's grammar).
pub(crate) fn explainable(sql: &str) -> bool {
    crate::sql::explainable(sql)
}

/// Refuse what must not run as a measured statement (`script`: a command of a pgbench-style
/// script, which may hold its own transaction unless every run is rolled back; `foreign`: on
/// a server pglab did not start, where only the allow-list runs). PostgreSQL's own grammar
/// decides (see [`crate::sql::classify`]).
pub(crate) fn check_statement(
    sql: &str,
    mode: TxMode,
    script: bool,
    foreign: bool,
) -> Result<(), String> {
    let place = if script {
        Place::Script
    } else {
        Place::Measured
    };
    crate::sql::check(
        sql,
        Rules {
            place,
            frame: mode.frame(),
            foreign,
        },
    )
}

/// Refuse a setup that must not run: checked whole, before any of it runs.
pub(crate) fn check_setup(sql: &str, mode: TxMode, foreign: bool) -> Result<(), String> {
    crate::sql::check(
        sql,
        Rules {
            place: Place::Setup,
            frame: mode.frame(),
            foreign,
        },
    )
    .map_err(|e| format!("setup: {e}"))
}

/// The sentence for a write refused in a `READ ONLY` transaction.
pub(crate) fn read_only_sentence(server_message: &str) -> String {
    format!(
        "the server refused a write ({server_message}): on a server pglab did not start, statements run in READ ONLY transactions; use --writes rollback to measure DML in a transaction that is rolled back ({ROLLBACK_CAVEAT})"
    )
}

/// Whether a parse error could be one the setup fixes (the object it names does not exist
/// yet): such statements are checked again after the setup has run.
pub(crate) fn may_depend_on_setup(e: &tokio_postgres::Error) -> bool {
    matches!(
        sqlstate(e),
        Some("42P01" | "42703" | "42883" | "42704" | "3F000" | "42P02")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_execution_has_its_frame_as_messages_of_their_own() {
        assert_eq!(TxMode::of(Writes::Auto, true), TxMode::Plain);
        assert_eq!(TxMode::of(Writes::Auto, false), TxMode::ReadOnly);
        assert_eq!(TxMode::of(Writes::Rollback, true), TxMode::Rollback);
        assert_eq!(TxMode::ReadOnly.begin(), Some("BEGIN READ ONLY"));
        assert_eq!(TxMode::ReadOnly.end(), Some("COMMIT"));
        assert_eq!(TxMode::Rollback.end(), Some("ROLLBACK"));
        assert_eq!(TxMode::Plain.begin(), None);
        assert!(explainable("with x as (select 1) select * from x"));
        assert!(!explainable("CALL p()"));
        assert!(is_read("SELECT * FROM o WHERE customer_id = 7"));
        assert!(!is_read("UPDATE o SET amount = 1 WHERE id = 7"));
        assert!(!is_read("SELECT * FROM o FOR UPDATE"));
        assert!(!is_read("SELECT nextval('s')"));
    }

    #[test]
    fn the_guard_is_the_classifier() {
        assert!(check_statement("COMMIT", TxMode::ReadOnly, false, true).is_err());
        assert!(check_statement("SELECT 1 /* x", TxMode::ReadOnly, false, true).is_err());
        assert!(check_statement("SELECT 1 -- x", TxMode::ReadOnly, false, true).is_ok());
        assert!(check_statement("REINDEX TABLE t", TxMode::ReadOnly, false, true).is_err());
        assert!(check_statement("REINDEX TABLE t", TxMode::Plain, false, false).is_ok());
        assert!(
            check_setup(
                "COMMIT; DELETE FROM t WHERE id < 50",
                TxMode::ReadOnly,
                true
            )
            .unwrap_err()
            .starts_with("setup: COMMIT")
        );
    }
}
