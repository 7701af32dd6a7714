//! The vocabulary of an ingest configuration: how rows reach the table (method), what a commit
//! waits for (`synchronous_commit`), what the payload column holds, and the limits these put on
//! a spec.

use serde::{Deserialize, Serialize};

pub use crate::experiment::lab::sync_commit::SyncCommit;

pub(crate) const METHODS: &[&str] = &["insert", "insert-tx", "values", "copy"];
pub(crate) const SYNC_VALUES: &[&str] = &["on", "off", "local", "remote_write", "remote_apply"];

/// How rows reach the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// One single-row INSERT per transaction (autocommit): a commit per row.
    Insert,
    /// B single-row INSERTs of a prepared statement inside one transaction.
    InsertTx,
    /// One multi-row `INSERT … VALUES` of B rows.
    Values,
    /// One binary `COPY … FROM STDIN` of B rows.
    Copy,
}

impl Method {
    pub(crate) const ALL: [Method; 4] = [
        Method::Insert,
        Method::InsertTx,
        Method::Values,
        Method::Copy,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Insert => "insert",
            Method::InsertTx => "insert-tx",
            Method::Values => "values",
            Method::Copy => "copy",
        }
    }

    pub fn parse(s: &str) -> Result<Method, String> {
        Method::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown method '{s}': use insert, insert-tx, values or copy"))
    }
}

/// What the payload column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PayloadType {
    Text,
    Json,
}

impl PayloadType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PayloadType::Text => "text",
            PayloadType::Json => "json",
        }
    }
    /// The column type.
    pub(crate) fn sql_type(self) -> &'static str {
        match self {
            PayloadType::Text => "text",
            PayloadType::Json => "jsonb",
        }
    }
}

/// Rows in one multi-row `INSERT … VALUES`: PostgreSQL takes at most 65535 parameters per
/// statement and each row binds two.
pub(crate) const VALUES_MAX_BATCH: u64 = 65535 / 2;
/// Payload bytes one `INSERT … VALUES` statement may carry (it is built in memory).
pub(crate) const VALUES_MAX_STATEMENT_BYTES: u64 = 256 * 1024 * 1024;
pub(crate) const PAYLOAD_MAX: u64 = 64 * 1024 * 1024;
pub(crate) const INDEXES_MAX: u64 = 8;
/// Heap overhead per row besides the payload: tuple header, line pointer, id, varlena header.
pub(crate) const ROW_OVERHEAD_BYTES: u64 = 40;
/// Approximate btree bytes per row of one secondary index.
pub(crate) const INDEX_BYTES_PER_ROW: u64 = 32;

/// Upper bound of each byte estimate (1 EiB): far beyond any disk, and four of them still add
/// up without overflow.
pub(super) const BYTES_CAP: u64 = 1 << 60;
