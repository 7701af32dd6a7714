//! `pglab sandbox import`: copy tables of a real server (whole or sampled) into the sandbox,
//! so every experiment — what-ifs that reload or restart included — runs on the DBA's own
//! data without touching production.
//!
//! The source is read in one `REPEATABLE READ READ ONLY` transaction and sees reads only
//! ([`source`]). Each table is recreated in a staging schema of the sandbox from its catalog
//! ([`catalog`], [`types`], [`plan`], [`ddl`]), its rows streamed with COPY from one server
//! into the other ([`copy`]), its keys and indexes built after the load, then everything is
//! moved under its own schema and name at once. All of it is one sandbox transaction: a
//! cancel, a failure or a killed pglab leaves the sandbox as it was, and a re-import replaces
//! a table only when it completes. Each table carries a record of where it came from
//! ([`ImportRecord`], in `sql::imported`).
//!
//! [`session`] is the one way in for a front end: it opens the source, runs the import on the
//! sandbox and says how it ended; `pglab sandbox import` and the TUI's import dialog only show
//! it.

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as import;
#[allow(unused_imports)]
use pglab_host as host;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_server as server;
#[allow(unused_imports)]
use pglab_sql as sql;

pub mod catalog;
pub mod copy;
pub mod ddl;
pub mod plan;
mod plan_sandbox;
mod plan_types;
mod run;
pub mod session;
pub mod source;
pub mod source_guard;
pub mod types;

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use crate::sql::imported::{ImportRecord, imported_tables, record_of};
pub use crate::sql::names::TableName;
pub use source::SourceInfo;

use crate::server::Target;

/// Which rows of each table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sample {
    All,
    /// `TABLESAMPLE BERNOULLI (PCT)`: each row with this probability.
    Percent(f64),
    /// About this many rows: BERNOULLI at N over the table's row estimate.
    Rows(u64),
}

impl Sample {
    /// `--sample PCT` / `--rows N` as given (at most one).
    pub fn parse(percent: Option<&str>, rows: Option<&str>) -> Result<Sample, String> {
        match (percent, rows) {
            (Some(_), Some(_)) => {
                Err("--sample and --rows both choose rows: give one of them".into())
            }
            (Some(p), None) => {
                let t = p.trim().trim_end_matches('%');
                let v: f64 = t
                    .parse()
                    .map_err(|_| format!("--sample '{p}': give a percentage, e.g. 10 or 2.5%"))?;
                if !(v > 0.0 && v <= 100.0) {
                    return Err(format!(
                        "--sample '{p}': a percentage above 0 and at most 100"
                    ));
                }
                Ok(if v >= 100.0 {
                    Sample::All
                } else {
                    Sample::Percent(v)
                })
            }
            (None, Some(n)) => {
                let v = crate::measure::units::parse_count(n)
                    .map_err(|e| format!("--rows '{n}': {}", e.0))?;
                if v == 0 {
                    return Err("--rows: at least 1".into());
                }
                Ok(Sample::Rows(v))
            }
            (None, None) => Ok(Sample::All),
        }
    }
}

/// What to import.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSpec {
    pub tables: Vec<TableName>,
    pub sample: Sample,
    /// The `REPEATABLE` seed of the sample (same seed, same rows).
    pub seed: u64,
    /// Recreate the tables' indexes (keys and unique constraints always come along).
    pub indexes: bool,
}

/// Why an import did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// Bad input the user can fix (unknown table, no permission, a type pglab cannot make,
    /// not enough disk): nothing was written.
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
    #[error("cancelled")]
    Cancelled,
}

/// How far the copy of one table is.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportProgress {
    pub table: TableName,
    /// 1-based, of `tables`.
    pub index: usize,
    pub tables: usize,
    pub rows: u64,
    /// What the source's estimate (× the sample) says will come.
    pub rows_expected: Option<u64>,
    pub bytes: u64,
    pub seconds: f64,
}

impl ImportProgress {
    /// Stream bytes per second.
    pub(crate) fn bytes_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Share done, by rows against the estimate.
    pub fn fraction(&self) -> Option<f64> {
        self.rows_expected
            .filter(|e| *e > 0)
            .map(|e| (self.rows as f64 / e as f64).min(1.0))
    }

    /// Seconds left at the rate so far (None: no estimate yet).
    pub(crate) fn eta_s(&self) -> Option<f64> {
        let e = self.rows_expected? as f64;
        if self.rows == 0 || self.seconds <= 0.0 {
            return None;
        }
        Some(((e - self.rows as f64) / (self.rows as f64 / self.seconds)).max(0.0))
    }

    /// "public.orders 1/2: 412k of ≈1.0M rows · 38.2 MB/s · eta 12 s".
    pub fn line(&self) -> String {
        use crate::measure::units::{format_bytes, format_count, format_seconds};
        let of = self
            .rows_expected
            .map(|e| format!(" of ≈{}", format_count(e as f64)))
            .unwrap_or_default();
        let eta = self
            .eta_s()
            .map(|s| format!(" · eta {}", format_seconds(s)))
            .unwrap_or_default();
        format!(
            "{} {}/{}: {}{of} rows · {}/s{eta}",
            self.table,
            self.index,
            self.tables,
            format_count(self.rows as f64),
            format_bytes(self.bytes_per_s() as u64)
        )
    }
}

/// What a finished import did.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    pub records: Vec<ImportRecord>,
    pub notes: Vec<String>,
    pub seconds: f64,
}

/// The import's event stream (like an experiment's): phases, progress (may be dropped under
/// load), notes, then exactly one of finished, failed, cancelled.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportEvent {
    Phase(String),
    Progress(ImportProgress),
    Note(String),
    Finished(Box<ImportReport>),
    Failed { error: String, refused: bool },
    Cancelled,
}

/// A running import: its events (ending with exactly one of finished, failed, cancelled),
/// its cancel and its task.
pub struct ImportHandle {
    pub events: mpsc::Receiver<ImportEvent>,
    pub cancel: CancellationToken,
    pub task: tokio::task::JoinHandle<()>,
}

/// Where the import writes besides the sandbox's tables.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Free bytes on the sandbox's filesystem (None: unknown, not checked).
    pub free_bytes: Option<u64>,
    /// `imports.json` beside the sandbox, rewritten after an import.
    pub cache_file: Option<std::path::PathBuf>,
}

/// Start an import on its own task. `source` must already have been connected to once (so a
/// password typed at a prompt is known). A front end runs [`session::run`], which starts it
/// here.
pub fn spawn(
    source: Arc<Target>,
    sandbox: Arc<Target>,
    spec: ImportSpec,
    opts: ImportOptions,
) -> ImportHandle {
    let (tx, rx) = mpsc::channel(256);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let task = tokio::spawn(async move {
        let end = match run::run(&source, &sandbox, &spec, &opts, &tx, &c).await {
            Ok(r) => ImportEvent::Finished(Box::new(r)),
            Err(ImportError::Cancelled) => ImportEvent::Cancelled,
            Err(ImportError::Refused(e)) => ImportEvent::Failed {
                error: e,
                refused: true,
            },
            Err(ImportError::Failed(e)) => ImportEvent::Failed {
                error: e,
                refused: false,
            },
        };
        let _ = tx.send(end).await;
    });
    ImportHandle {
        events: rx,
        cancel,
        task,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_parse() {
        assert_eq!(Sample::parse(None, None).unwrap(), Sample::All);
        assert_eq!(
            Sample::parse(Some("2.5%"), None).unwrap(),
            Sample::Percent(2.5)
        );
        assert_eq!(Sample::parse(Some("100"), None).unwrap(), Sample::All);
        assert_eq!(
            Sample::parse(None, Some("10k")).unwrap(),
            Sample::Rows(10_000)
        );
        for (p, r) in [
            (Some("0"), None),
            (Some("101"), None),
            (Some("x"), None),
            (None, Some("0")),
            (Some("1"), Some("1")),
        ] {
            assert!(Sample::parse(p, r).is_err(), "{p:?} {r:?}");
        }
    }

    #[test]
    fn progress_says_rows_rate_and_eta() {
        let p = ImportProgress {
            table: TableName::new("public", "t"),
            index: 1,
            tables: 2,
            rows: 250,
            rows_expected: Some(1000),
            bytes: 10 * 1024 * 1024,
            seconds: 2.0,
        };
        assert_eq!(p.fraction(), Some(0.25));
        assert_eq!(p.eta_s(), Some(6.0));
        assert_eq!(
            p.line(),
            "public.t 1/2: 250 of ≈1000 rows · 5120 kB/s · eta 6.0 s"
        );
    }
}
