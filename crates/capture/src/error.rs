//! What can stop a capture's reads of `pg_stat_statements`, typed: a query the server
//! refused (with its SQLSTATE), or a window that cannot stand for what ran in it.

/// Why a read or a window failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaptureError {
    /// The server refused a query: what was being read, its SQLSTATE and its sentence.
    #[error("{what}: {message}")]
    Query {
        what: &'static str,
        sqlstate: Option<String>,
        message: String,
    },
    /// The statistics were reset between the window's two reads.
    #[error(
        "pg_stat_statements was reset inside the window (its stats_reset moved from {before} to {after}): the difference of the two reads is not what ran in the window; capture again, or give --since-reset for the figures since that reset"
    )]
    ResetInside { before: String, after: String },
}

impl CaptureError {
    pub fn query(what: &'static str, e: &tokio_postgres::Error) -> CaptureError {
        CaptureError::Query {
            what,
            sqlstate: crate::sql::error::sqlstate(e).map(str::to_string),
            message: crate::sql::error::describe_query_error(e),
        }
    }
}
