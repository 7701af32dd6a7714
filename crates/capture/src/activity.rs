//! Sampling `pg_stat_activity`: the statements sessions of this database run, with their
//! literal values (a session's `query` is its current statement, or its last one while idle;
//! `query_id` matches `pg_stat_statements` from PostgreSQL 14 when query ids are computed).
//! Each execution counts once however many samples see it (a session's `query_start` tells
//! executions apart). Every sample is a transaction of its own: within one, the server would
//! show the same snapshot again. pglab's own sessions (`application_name` `pglab…`: the TUI's
//! target pane, a run on the same server) are not the DBA's workload and are left out.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

/// How often the sessions are looked at.
pub(crate) const INTERVAL: Duration = Duration::from_millis(100);

/// One execution seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub query_id: Option<i64>,
    /// The literal text.
    pub query: String,
}

/// What the samples saw.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// Distinct executions, in the order first seen.
    pub executions: Vec<Seen>,
    pub samples: u64,
    pub seconds: f64,
}

fn sample_sql(version_num: i32) -> String {
    let id = if version_num >= 140_000 {
        "query_id"
    } else {
        "NULL::bigint"
    };
    format!(
        "/* pglab capture */ SELECT pid, coalesce(query_start::text, ''), {id}, query \
         FROM pg_stat_activity \
         WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' \
         AND datname = current_database() AND coalesce(query, '') <> '' \
         AND query NOT LIKE '/* pglab capture */%' \
         AND coalesce(application_name, '') NOT LIKE 'pglab%'"
    )
}

/// Sample for `duration` (or until `stop`), `progress` told the executions seen so far.
pub async fn sample(
    client: &Client,
    version_num: i32,
    duration: Duration,
    stop: &CancellationToken,
    progress: &mut (dyn FnMut(usize, Duration) + Send),
) -> Result<Sampled, String> {
    let sql = sample_sql(version_num);
    let started = Instant::now();
    let mut seen: HashMap<(i32, String), usize> = HashMap::new();
    let mut out = Sampled::default();
    while started.elapsed() < duration && !stop.is_cancelled() {
        let rows = client
            .query(sql.as_str(), &[])
            .await
            .map_err(|e| format!("reading pg_stat_activity: {e}"))?;
        out.samples += 1;
        for r in rows {
            let key: (i32, String) = (r.get(0), r.get(1));
            if seen.contains_key(&key) {
                continue;
            }
            seen.insert(key, out.executions.len());
            out.executions.push(Seen {
                query_id: r.get(2),
                query: r.get(3),
            });
        }
        progress(out.executions.len(), started.elapsed());
        tokio::select! {
            _ = tokio::time::sleep(INTERVAL) => {}
            _ = stop.cancelled() => {}
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}
