//! The transaction the DBA's statements run in, and what they may not do. On any server that
//! is not pglab's sandbox every execution is a `READ ONLY` transaction (and the session's
//! default is read-only too), so the server itself refuses a write; `--writes rollback` runs
//! each execution in a transaction that is always rolled back. pglab owns the transaction:
//! statements that end or change it are refused before anything runs, and the server's own
//! parser checks that each statement is one command (see [`check_on_server`]).

use super::spec::Writes;
use super::sqltext::{first_keyword, words};
use crate::experiment::sql::SessionSettings;
use crate::server::error::sqlstate;

/// How each execution is wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxMode {
    /// As written, autocommit (pglab's sandbox, `writes = auto`).
    Plain,
    /// `BEGIN READ ONLY; … COMMIT`, in a session whose default is read-only.
    ReadOnly,
    /// `BEGIN; … ROLLBACK`.
    Rollback,
}

/// What a rollback does not undo, said wherever `--writes rollback` is.
pub const ROLLBACK_CAVEAT: &str = "a rollback does not undo sequence increments (nextval), work done outside the database (dblink, COPY TO PROGRAM, notifications are dropped) or the buffers and statistics the statement touched";

impl TxMode {
    pub fn of(writes: Writes, on_sandbox: bool) -> TxMode {
        match (writes, on_sandbox) {
            (Writes::Auto, true) => TxMode::Plain,
            (Writes::Auto, false) | (Writes::ReadOnly, _) => TxMode::ReadOnly,
            (Writes::Rollback, _) => TxMode::Rollback,
        }
    }

    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            TxMode::Plain => "as written (autocommit)",
            TxMode::ReadOnly => "READ ONLY transactions (the server refuses writes)",
            TxMode::Rollback => "transactions rolled back after each execution",
        }
    }

    /// Settings of a measuring session for this mode, added to `s`.
    pub fn add_settings(self, s: &mut SessionSettings) {
        if self == TxMode::ReadOnly {
            s.set("default_transaction_read_only", "on");
        }
    }

    /// One execution of `sql` as the simple protocol sends it: one round trip.
    pub fn wrap(self, sql: &str) -> String {
        match self {
            TxMode::Plain => sql.to_string(),
            TxMode::ReadOnly => format!("BEGIN READ ONLY; {sql}; COMMIT"),
            TxMode::Rollback => format!("BEGIN; {sql}; ROLLBACK"),
        }
    }

    /// The untimed EXPLAIN ANALYZE of `sql`: always in a transaction that is rolled back, so
    /// a write is never made once more for the plan.
    pub fn explain(self, sql: &str) -> String {
        let begin = if self == TxMode::ReadOnly {
            "BEGIN READ ONLY"
        } else {
            "BEGIN"
        };
        format!("{begin}; EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}; ROLLBACK")
    }

    /// A script transaction's frame: what goes before and after its commands.
    pub fn script_frame(self) -> Option<(&'static str, &'static str)> {
        match self {
            TxMode::Rollback => Some(("BEGIN", "ROLLBACK")),
            _ => None,
        }
    }
}

/// Statements that end or change the transaction pglab runs them in.
const TX_CONTROL: [&str; 8] = [
    "BEGIN",
    "START",
    "COMMIT",
    "END",
    "ROLLBACK",
    "ABORT",
    "SAVEPOINT",
    "RELEASE",
];

/// Whether EXPLAIN takes the statement.
pub fn explainable(sql: &str) -> bool {
    matches!(
        first_keyword(sql).as_str(),
        "SELECT" | "WITH" | "VALUES" | "TABLE" | "INSERT" | "UPDATE" | "DELETE" | "MERGE"
    )
}

/// Refuse what must not run as a measured statement (`script`: a command of a pgbench-style
/// script, which may hold its own transaction unless every run is rolled back).
pub fn check_statement(sql: &str, mode: TxMode, script: bool) -> Result<(), String> {
    let w = words(sql, 4);
    let first = w.first().map(String::as_str).unwrap_or("");
    let lower = sql.to_ascii_lowercase();
    let read_write = lower.contains("read write");
    if TX_CONTROL.contains(&first)
        || (first == "PREPARE" && w.get(1).is_some_and(|x| x == "TRANSACTION"))
    {
        if !script || mode == TxMode::Rollback {
            return Err(format!(
                "{first} is pglab's to give: each execution runs in a transaction of its own{}",
                if mode == TxMode::Rollback {
                    " that is rolled back"
                } else {
                    ""
                }
            ));
        }
        if mode == TxMode::ReadOnly && read_write {
            return Err(format!(
                "{first} … READ WRITE: on a server pglab did not start every transaction is READ ONLY (use --writes rollback for DML)"
            ));
        }
    }
    if matches!(first, "SET" | "RESET" | "DISCARD") {
        if !script {
            return Err(format!(
                "{first} does not belong among the measured statements: sweep settings with --set, prepare state with --setup"
            ));
        }
        let touches_mode = lower.contains("transaction_read_only")
            || lower.contains("session characteristics")
            || (first == "SET" && w.get(1).is_some_and(|x| x == "TRANSACTION"))
            || (first == "RESET" && w.get(1).is_some_and(|x| x == "ALL"))
            || first == "DISCARD";
        if mode != TxMode::Plain && touches_mode {
            return Err(format!(
                "{first}: this changes the transaction pglab runs the script in ({})",
                mode.describe()
            ));
        }
    }
    if mode != TxMode::Plain && lower.contains("set_config") {
        return Err(format!(
            "set_config() could change the transaction pglab runs statements in ({}): leave it out",
            mode.describe()
        ));
    }
    Ok(())
}

/// Whether an error is the server refusing a write in a read-only transaction.
pub fn is_read_only_refusal(e: &tokio_postgres::Error) -> bool {
    sqlstate(e) == Some("25006")
}

/// The sentence for a write refused in a `READ ONLY` transaction.
pub fn read_only_sentence(server_message: &str) -> String {
    format!(
        "the server refused a write ({server_message}): on a server pglab did not start, statements run in READ ONLY transactions; use --writes rollback to measure DML in a transaction that is rolled back ({ROLLBACK_CAVEAT})"
    )
}

/// Whether a parse error could be one the setup fixes (the object it names does not exist
/// yet): such statements are checked again after the setup has run.
pub fn may_depend_on_setup(e: &tokio_postgres::Error) -> bool {
    matches!(
        sqlstate(e),
        Some("42P01" | "42703" | "42883" | "42704" | "3F000" | "42P02")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_each_execution_in_its_transaction() {
        assert_eq!(TxMode::of(Writes::Auto, true), TxMode::Plain);
        assert_eq!(TxMode::of(Writes::Auto, false), TxMode::ReadOnly);
        assert_eq!(TxMode::of(Writes::Rollback, true), TxMode::Rollback);
        assert_eq!(
            TxMode::ReadOnly.wrap("SELECT 1"),
            "BEGIN READ ONLY; SELECT 1; COMMIT"
        );
        assert_eq!(
            TxMode::Rollback.wrap("DELETE FROM t"),
            "BEGIN; DELETE FROM t; ROLLBACK"
        );
        assert!(
            TxMode::Plain
                .explain("DELETE FROM t")
                .ends_with("; ROLLBACK")
        );
        assert!(explainable("with x as (select 1) select * from x"));
        assert!(!explainable("CALL p()"));
    }

    #[test]
    fn transaction_control_is_pglabs() {
        for sql in [
            "COMMIT",
            "begin read write",
            "SAVEPOINT a",
            "prepare transaction 'x'",
        ] {
            assert!(
                check_statement(sql, TxMode::ReadOnly, false).is_err(),
                "{sql}"
            );
        }
        assert!(
            check_statement("SET work_mem = '1GB'", TxMode::Plain, false)
                .unwrap_err()
                .contains("--set")
        );
        // A script may hold its own transaction, but not turn read-only off.
        assert!(check_statement("BEGIN", TxMode::ReadOnly, true).is_ok());
        assert!(check_statement("BEGIN READ WRITE", TxMode::ReadOnly, true).is_err());
        assert!(
            check_statement(
                "SET default_transaction_read_only = off",
                TxMode::ReadOnly,
                true
            )
            .is_err()
        );
        assert!(check_statement("RESET ALL", TxMode::ReadOnly, true).is_err());
        assert!(check_statement("SET work_mem = '64MB'", TxMode::ReadOnly, true).is_ok());
        assert!(check_statement("BEGIN", TxMode::Rollback, true).is_err());
        assert!(
            check_statement(
                "SELECT set_config('transaction_read_only', 'off', true)",
                TxMode::ReadOnly,
                false
            )
            .is_err()
        );
        assert!(check_statement("SELECT count(*) FROM t", TxMode::ReadOnly, false).is_ok());
    }
}
