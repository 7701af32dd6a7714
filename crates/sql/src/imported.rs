//! What an imported table is: where it came from (the source's fingerprint, never a
//! password), the snapshot it was read in, the sample, and what arrived. Kept in the sandbox
//! as the table's comment (`pglab:imported {json}`), so the record is swapped in with the
//! table, goes when the table goes, and any run on the sandbox can read which data it
//! measured. `sandbox status` lists them; `pglab clean` and leftover detection never count an
//! imported table as a leftover.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

#[cfg(test)]
use super::lab::MARK;
use super::names::TableName;

/// The comment prefix of an imported table.
pub const IMPORTED: &str = "pglab:imported ";

/// Where the data came from: enough to tell two sources apart, nothing secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceFingerprint {
    /// `user@host:port/db` as given (no password).
    pub target: String,
    /// `server_version`.
    pub version: String,
    /// `pg_control_system().system_identifier`, when the role may read it: the cluster itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_identifier: Option<String>,
    pub database: String,
}

/// How the rows were chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// `TABLESAMPLE BERNOULLI`: each row with this probability, in the table's physical order.
    pub method: String,
    pub percent: f64,
    pub seed: u64,
}

/// One imported table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportRecord {
    pub table: TableName,
    pub source: SourceFingerprint,
    /// When the source's snapshot was taken (its `now()` in the import's transaction).
    pub snapshot_at: DateTime<Utc>,
    pub imported_at: DateTime<Utc>,
    /// None: every row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<SampleRecord>,
    pub rows: u64,
    /// The source's row estimate (`reltuples`) at the snapshot.
    pub source_rows_estimate: f64,
    /// Bytes the COPY stream carried.
    pub stream_bytes: u64,
    /// Heap and indexes in the sandbox after the load.
    pub table_bytes: i64,
    pub index_bytes: i64,
    /// Binary or text COPY.
    pub format: String,
    pub seconds: f64,
}

impl ImportRecord {
    /// The comment that carries the record.
    pub fn comment(&self) -> String {
        format!(
            "{IMPORTED}{}",
            serde_json::to_string(self).unwrap_or_default()
        )
    }

    /// A record from a table comment (None: not an imported table's comment).
    pub(crate) fn from_comment(comment: &str) -> Option<ImportRecord> {
        serde_json::from_str(comment.strip_prefix(IMPORTED)?).ok()
    }

    /// "all rows" or "10% sample (BERNOULLI, seed 42)".
    pub fn sample_text(&self) -> String {
        match &self.sample {
            None => "all rows".into(),
            Some(s) => format!(
                "{}% sample ({}, seed {})",
                super::quote::percent(s.percent),
                s.method,
                s.seed
            ),
        }
    }

    /// One line for a report: which data a run measured.
    pub fn describe(&self) -> String {
        format!(
            "{} imported from {} (PostgreSQL {}) at {}, snapshot {}: {} rows, {}",
            self.table,
            self.source.target,
            self.source.version,
            self.imported_at.format("%Y-%m-%d %H:%M:%S UTC"),
            self.snapshot_at.format("%Y-%m-%d %H:%M:%S UTC"),
            self.rows,
            self.sample_text()
        )
    }
}

/// Every imported table in the sandbox `c` is connected to, by name.
pub async fn imported_tables(c: &Client) -> Result<Vec<ImportRecord>, String> {
    let rows = c
        .query(
            "SELECT obj_description(c.oid, 'pg_class') FROM pg_class c
              WHERE c.relkind IN ('r', 'p', 'u') AND obj_description(c.oid, 'pg_class') LIKE $1
              ORDER BY 1",
            &[&format!("{IMPORTED}%")],
        )
        .await
        .map_err(|e| super::error::describe_query_error(&e))?;
    let mut out: Vec<ImportRecord> = rows
        .iter()
        .filter_map(|r| ImportRecord::from_comment(&r.get::<_, String>(0)))
        .collect();
    out.sort_by(|a, b| a.table.cmp(&b.table));
    Ok(out)
}

/// The record of one table, when it was imported.
pub async fn record_of(c: &Client, t: &TableName) -> Result<Option<ImportRecord>, String> {
    let r = c
        .query_opt(
            "SELECT obj_description(c.oid, 'pg_class') FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
            &[&t.schema, &t.name],
        )
        .await
        .map_err(|e| super::error::describe_query_error(&e))?;
    Ok(r.and_then(|r| r.get::<_, Option<String>>(0))
        .and_then(|c| ImportRecord::from_comment(&c)))
}

/// The records as a file beside the sandbox (`imports.json`), written after each import, so
/// `sandbox status` can list them while the server is stopped.
pub fn save_cache(path: &std::path::Path, records: &[ImportRecord]) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(records).unwrap_or_else(|_| "[]".into());
    crate::paths::write_private(path, text.as_bytes())
}

pub fn load_cache(path: &std::path::Path) -> Vec<ImportRecord> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Imported tables are pglab's mark, but never leftovers: their comment starts with this.
#[cfg(test)]
pub(crate) fn is_imported_mark(comment: &str) -> bool {
    comment.starts_with(IMPORTED) && IMPORTED.starts_with(MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_travels_in_the_comment() {
        let r = ImportRecord {
            table: TableName::new("public", "orders"),
            source: SourceFingerprint {
                target: "me@db1:5432/sales".into(),
                version: "15.4".into(),
                system_identifier: Some("7312".into()),
                database: "sales".into(),
            },
            snapshot_at: Utc::now(),
            imported_at: Utc::now(),
            sample: Some(SampleRecord {
                method: "BERNOULLI".into(),
                percent: 2.5,
                seed: 42,
            }),
            rows: 10,
            source_rows_estimate: 400.0,
            stream_bytes: 1000,
            table_bytes: 8192,
            index_bytes: 16384,
            format: "binary".into(),
            seconds: 0.5,
        };
        let c = r.comment();
        assert!(c.starts_with("pglab:imported {"));
        assert!(is_imported_mark(&c));
        assert_eq!(ImportRecord::from_comment(&c), Some(r.clone()));
        assert_eq!(r.sample_text(), "2.5% sample (BERNOULLI, seed 42)");
        assert!(ImportRecord::from_comment("pglab:run=x").is_none());
    }
}
