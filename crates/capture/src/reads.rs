//! One read of `pg_stat_statements` for this database: every entry as the server keeps it
//! (per role, top level only), the entries this role may not see (`<insufficient
//! privilege>`, no query id) summed apart, and the extension's own counters (when its
//! statistics were last reset, how many entries it evicted). A window is the difference of
//! two reads ([`super::window`]); the cumulative view is one read.

use std::collections::BTreeMap;

use tokio_postgres::Client;

use super::error::CaptureError;

/// The sums of one statement (or of the hidden ones), additive across roles and reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sums {
    pub calls: f64,
    /// Total execution time, ms.
    pub total_ms: f64,
    /// Sum of the squares of each call's time, ms² (`calls · (stddev² + mean²)` per entry:
    /// `pg_stat_statements`' stddev is the population one).
    pub sum_sq: f64,
    pub rows: f64,
    pub shared_hit: f64,
    pub shared_read: f64,
    /// Temp blocks read and written.
    pub temp: f64,
}

impl Sums {
    pub fn add(&mut self, o: &Sums) {
        self.calls += o.calls;
        self.total_ms += o.total_ms;
        self.sum_sq += o.sum_sq;
        self.rows += o.rows;
        self.shared_hit += o.shared_hit;
        self.shared_read += o.shared_read;
        self.temp += o.temp;
    }

    /// `self − earlier`, field by field.
    pub fn minus(&self, earlier: &Sums) -> Sums {
        Sums {
            calls: self.calls - earlier.calls,
            total_ms: self.total_ms - earlier.total_ms,
            sum_sq: self.sum_sq - earlier.sum_sq,
            rows: self.rows - earlier.rows,
            shared_hit: self.shared_hit - earlier.shared_hit,
            shared_read: self.shared_read - earlier.shared_read,
            temp: self.temp - earlier.temp,
        }
    }

    /// Mean and sample standard deviation of a call's time, ms.
    pub fn mean_sd(&self) -> (f64, f64) {
        if self.calls <= 0.0 {
            return (0.0, 0.0);
        }
        let mean = self.total_ms / self.calls;
        if self.calls < 2.0 {
            return (mean, 0.0);
        }
        let ss = (self.sum_sq - self.calls * mean * mean).max(0.0);
        (mean, (ss / (self.calls - 1.0)).sqrt())
    }
}

/// A statement this role may see: its normalised text and its sums over the roles.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub query: String,
    pub sums: Sums,
}

/// One read.
#[derive(Debug, Clone, Default)]
pub struct Read {
    /// By query id.
    pub entries: BTreeMap<i64, Entry>,
    /// The entries hidden from this role: how many, and their sums.
    pub hidden: usize,
    pub hidden_sums: Sums,
    /// `pg_stat_statements_info.stats_reset` (PostgreSQL 14+), as text.
    pub stats_reset: Option<String>,
    /// `pg_stat_statements_info.dealloc`: entries evicted since the reset.
    pub dealloc: Option<i64>,
}

fn read_sql(schema: &str, toplevel: bool) -> String {
    let top = if toplevel { "AND toplevel" } else { "" };
    format!(
        "/* pglab capture */ SELECT queryid, query, calls::float8, total_exec_time::float8, \
         rows::float8, shared_blks_hit::float8, shared_blks_read::float8, \
         (temp_blks_read + temp_blks_written)::float8, \
         (calls * (stddev_exec_time ^ 2 + mean_exec_time ^ 2))::float8 \
         FROM {schema}.pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) {top}"
    )
}

fn info_sql(schema: &str) -> String {
    format!(
        "/* pglab capture */ SELECT stats_reset::text, dealloc FROM {schema}.pg_stat_statements_info"
    )
}

/// Read every entry of this database (Err(None): the library is not loaded).
pub async fn read(
    client: &Client,
    schema: &str,
    version_num: i32,
) -> Result<Read, Option<CaptureError>> {
    let rows = match client
        .query(&read_sql(schema, version_num >= 140_000), &[])
        .await
    {
        Ok(r) => r,
        Err(e) if crate::sql::error::sqlstate(&e) == Some("55000") => return Err(None),
        Err(e) => return Err(Some(CaptureError::query("reading pg_stat_statements", &e))),
    };
    let mut out = Read::default();
    for r in rows {
        let sums = Sums {
            calls: r.get(2),
            total_ms: r.get(3),
            rows: r.get(4),
            shared_hit: r.get(5),
            shared_read: r.get(6),
            temp: r.get(7),
            sum_sq: r.get(8),
        };
        let id: Option<i64> = r.get(0);
        let query: Option<String> = r.get(1);
        match (id, query) {
            (Some(id), Some(q)) if !q.starts_with("<insufficient privilege>") => {
                let e = out.entries.entry(id).or_insert_with(|| Entry {
                    query: q,
                    sums: Sums::default(),
                });
                e.sums.add(&sums);
            }
            _ => {
                out.hidden += 1;
                out.hidden_sums.add(&sums);
            }
        }
    }
    if version_num >= 140_000 {
        let r = client
            .query_one(&info_sql(schema), &[])
            .await
            .map_err(|e| Some(CaptureError::query("reading pg_stat_statements_info", &e)))?;
        out.stats_reset = r.get(0);
        out.dealloc = r.get(1);
    }
    Ok(out)
}
