//! What `pg_stat_statements` knows about this database's statements: each normalised text
//! (`$1` for constants) with its calls, time, rows and blocks, summed over the roles that ran
//! it, ordered by total execution time. Only top-level statements count (a function's inner
//! statements are part of its call). When the extension is missing or not loaded, a
//! sentence says how to enable it.

use tokio_postgres::Client;

use super::error::CaptureError;
use super::own::{self, Origin};
use super::reads::{Read, Sums};

/// One statement as production ran it (in the window, or since the last reset).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Baseline {
    pub query_id: i64,
    /// The normalised text.
    pub query: String,
    pub calls: f64,
    /// Total execution time, ms.
    pub total_ms: f64,
    pub mean_ms: f64,
    /// The sample standard deviation of a call's time, ms.
    pub stddev_ms: f64,
    pub rows: f64,
    pub shared_hit: f64,
    pub shared_read: f64,
    /// Temp blocks read and written.
    pub temp: f64,
}

impl Baseline {
    fn of(query_id: i64, query: String, s: &Sums) -> Baseline {
        let (mean_ms, stddev_ms) = s.mean_sd();
        Baseline {
            query_id,
            query,
            calls: s.calls,
            total_ms: s.total_ms,
            mean_ms,
            stddev_ms,
            rows: s.rows,
            shared_hit: s.shared_hit,
            shared_read: s.shared_read,
            temp: s.temp,
        }
    }
}

/// Statements left out of the workload for whose they are: how many, their time, a few
/// of their texts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LeftOut {
    pub count: usize,
    pub ms: f64,
    pub examples: Vec<String>,
}

impl LeftOut {
    fn add(&mut self, query: &str, ms: f64) {
        self.count += 1;
        self.ms += ms;
        if self.examples.len() < 3 {
            let one: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
            self.examples.push(one.chars().take(60).collect());
        }
    }
}

/// This database's application statements and their total time (ms), hidden ones included.
#[derive(Debug, Clone, Default)]
pub struct Statements {
    pub rows: Vec<Baseline>,
    pub total_ms: f64,
    /// Entries whose text this role may not see (`<insufficient privilege>`), and their time.
    pub hidden: usize,
    pub hidden_ms: f64,
    /// pglab's own statements (see `own`), left out of the rows and the total.
    pub own: LeftOut,
    /// Administration and monitoring calls, left out of the rows and the total.
    pub monitoring: LeftOut,
    /// Statements whose counters went back inside the window (reset or evicted).
    pub went_back: usize,
}

impl Statements {
    /// From one read (a window's difference, or the totals since the reset), most time first.
    pub fn from_read(r: &Read) -> Statements {
        let mut out = Statements {
            hidden: r.hidden,
            hidden_ms: r.hidden_sums.total_ms.max(0.0),
            ..Statements::default()
        };
        out.total_ms = out.hidden_ms;
        for (id, e) in &r.entries {
            match own::origin(&e.query) {
                Origin::Pglab => out.own.add(&e.query, e.sums.total_ms),
                Origin::Monitoring => out.monitoring.add(&e.query, e.sums.total_ms),
                Origin::Application => {
                    out.total_ms += e.sums.total_ms;
                    out.rows.push(Baseline::of(*id, e.query.clone(), &e.sums));
                }
            }
        }
        out.rows.sort_by(|a, b| {
            b.total_ms
                .total_cmp(&a.total_ms)
                .then(a.query_id.cmp(&b.query_id))
        });
        out
    }

    /// The share of the time hidden from this role.
    pub fn hidden_share(&self) -> f64 {
        if self.total_ms > 0.0 {
            self.hidden_ms / self.total_ms
        } else {
            0.0
        }
    }
}

/// How to get `pg_stat_statements`, in one sentence.
pub const ENABLE: &str = "pg_stat_statements is not available on this server: add shared_preload_libraries = 'pg_stat_statements' to postgresql.conf (a restart of the server is needed), then run CREATE EXTENSION pg_stat_statements in this database";

/// The schema `pg_stat_statements` is installed in here (None: not installed).
pub async fn schema(client: &Client) -> Result<Option<String>, CaptureError> {
    let row = client
        .query_opt(
            "/* pglab capture */ SELECT quote_ident(n.nspname) FROM pg_extension e \
             JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'",
            &[],
        )
        .await
        .map_err(|e| CaptureError::query("reading pg_extension", &e))?;
    Ok(row.map(|r| r.get(0)))
}

/// Where `pg_stat_statements` can be read: its schema (Err(None): not available here, see
/// [`ENABLE`]).
pub async fn available(client: &Client, version_num: i32) -> Result<String, Option<CaptureError>> {
    let Some(schema) = schema(client).await.map_err(Some)? else {
        return Err(None);
    };
    if version_num < 130_000 {
        return Err(Some(CaptureError::Query {
            what: "pglab capture reads pg_stat_statements of PostgreSQL 13 and later",
            sqlstate: None,
            message: "total_exec_time is missing before 13".into(),
        }));
    }
    Ok(schema)
}
