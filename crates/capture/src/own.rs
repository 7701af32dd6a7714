//! Whose statement a captured text is: the application's, pglab's own, or a DBA's
//! administration and monitoring call.
//!
//! - **pglab's own** carry a comment that starts `/* pglab` (every query capture, the target
//!   pane and `pglab probe` send; see [`MARK`]). `pg_stat_statements` keeps a statement's
//!   comments in the text it stores (only constants become `$n`), so the mark is there
//!   whichever role or session ran it. A statement pglab ran with the same query id as one the
//!   application ran first is stored under the application's text: it is the same statement,
//!   and its calls count with the application's.
//! - **Administration and monitoring**: a statement that reads only the system catalogs and
//!   statistics views (`pg_catalog`, `information_schema`, `pg_stat_*`, the extension's own
//!   views), or that reads no table and calls a `pg_*` function (`pg_stat_statements_reset()`,
//!   `pg_current_wal_lsn()`, `pg_reload_conf()`). Left out with a note: it is the DBA's tooling,
//!   not the workload, and a replay on the sandbox could not run many of them.

/// The comment every pglab query on a server starts with (followed by what sent it).
pub const MARK: &str = "/* pglab";

/// Where a statement comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Application,
    Pglab,
    Monitoring,
}

/// Schemas whose tables are the server's own.
const SYSTEM_SCHEMAS: [&str; 2] = ["pg_catalog", "information_schema"];

/// Whether a table name (as written, maybe schema-qualified) is one of the server's own.
fn system_table(name: &str) -> bool {
    let (schema, table) = name.rsplit_once('.').unwrap_or(("", name));
    SYSTEM_SCHEMAS.contains(&schema) || table.starts_with("pg_") || schema.starts_with("pg_")
}

/// Whether a function (as written) is one of the server's administration functions.
fn admin_function(name: &str) -> bool {
    let f = name.rsplit('.').next().unwrap_or(name);
    f.starts_with("pg_")
        || matches!(
            f,
            "current_setting" | "set_config" | "version" | "txid_current"
        )
}

/// The origin of a normalised text.
pub fn origin(query: &str) -> Origin {
    if query.contains(MARK) {
        return Origin::Pglab;
    }
    let Ok(parsed) = pg_query::parse(query, 0) else {
        return Origin::Application;
    };
    let tables = parsed.tables();
    if !tables.is_empty() {
        return if tables.iter().all(|t| system_table(t)) {
            Origin::Monitoring
        } else {
            Origin::Application
        };
    }
    let Ok(tree) = serde_json::to_value(&parsed.protobuf) else {
        return Origin::Application;
    };
    let calls = crate::sql::tree::function_calls(&tree);
    if !calls.is_empty() && calls.iter().all(|f| admin_function(f)) {
        Origin::Monitoring
    } else {
        Origin::Application
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pglab_the_dba_and_the_application_are_told_apart() {
        for own in [
            "/* pglab capture */ SELECT queryid FROM pg_stat_statements",
            "/* pglab target */ SELECT numbackends FROM pg_stat_database WHERE datname = $1",
            "SELECT count(*) FROM orders /* pglab run */",
        ] {
            assert_eq!(origin(own), Origin::Pglab, "{own}");
        }
        for dba in [
            "SELECT pg_stat_statements_reset()",
            "SELECT pg_current_wal_lsn()",
            "select pg_reload_conf()",
            "SELECT * FROM pg_stat_activity WHERE state = $1",
            "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace",
            "SELECT table_name FROM information_schema.tables",
            "SELECT current_setting($1)",
        ] {
            assert_eq!(origin(dba), Origin::Monitoring, "{dba}");
        }
        for app in [
            "SELECT abalance FROM acc WHERE aid = $1",
            "SELECT $1",
            "SELECT now()",
            "SELECT public.quiet_reload()",
            "SELECT o.id FROM orders o JOIN pg_class c ON c.relname = o.note",
            "UPDATE acc SET abalance = abalance + $1 WHERE aid = $2",
        ] {
            assert_eq!(origin(app), Origin::Application, "{app}");
        }
    }
}
