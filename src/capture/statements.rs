//! What `pg_stat_statements` knows about this database's statements: each normalised text
//! (`$1` for constants) with its calls, time, rows and blocks, summed over the roles that ran
//! it, ordered by total execution time. Only top-level statements count (a function's inner
//! statements are part of its call). When the extension is missing or not loaded, a
//! sentence says how to enable it.

use tokio_postgres::Client;

/// One statement as production ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub query_id: i64,
    /// The normalised text.
    pub query: String,
    pub calls: f64,
    /// Total execution time, ms.
    pub total_ms: f64,
    pub mean_ms: f64,
    pub stddev_ms: f64,
    pub rows: f64,
    pub shared_hit: f64,
    pub shared_read: f64,
    /// Temp blocks read and written.
    pub temp: f64,
}

/// Every statement of this database, and their total time (ms).
#[derive(Debug, Clone, Default)]
pub struct Statements {
    pub rows: Vec<Baseline>,
    pub total_ms: f64,
    /// Rows whose text this role may not see (`<insufficient privilege>`).
    pub hidden: usize,
}

/// How to get `pg_stat_statements`, in one sentence.
pub const ENABLE: &str = "pg_stat_statements is not available on this server: add shared_preload_libraries = 'pg_stat_statements' to postgresql.conf (a restart of the server is needed), then run CREATE EXTENSION pg_stat_statements in this database";

/// The schema `pg_stat_statements` is installed in here (None: not installed).
async fn schema(client: &Client) -> Result<Option<String>, String> {
    let row = client
        .query_opt(
            "/* pglab capture */ SELECT quote_ident(n.nspname) FROM pg_extension e \
             JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'",
            &[],
        )
        .await
        .map_err(|e| format!("reading pg_extension: {e}"))?;
    Ok(row.map(|r| r.get(0)))
}

fn read_sql(schema: &str, toplevel: bool) -> String {
    let top = if toplevel { "AND toplevel" } else { "" };
    format!(
        "/* pglab capture */ SELECT queryid, min(query), sum(calls)::float8, \
         sum(total_exec_time)::float8, sum(rows)::float8, sum(shared_blks_hit)::float8, \
         sum(shared_blks_read)::float8, sum(temp_blks_read + temp_blks_written)::float8, \
         sum(calls * (stddev_exec_time ^ 2 + mean_exec_time ^ 2))::float8 \
         FROM {schema}.pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND queryid IS NOT NULL {top} \
         GROUP BY queryid ORDER BY 4 DESC"
    )
}

/// The comment every statement of pglab capture starts with.
pub const OWN: &str = "/* pglab capture */";

/// Read the statements (Err(None): not available here, see [`ENABLE`]).
pub async fn read(client: &Client, version_num: i32) -> Result<Statements, Option<String>> {
    let Some(schema) = schema(client).await.map_err(Some)? else {
        return Err(None);
    };
    if version_num < 130_000 {
        return Err(Some(
            "pglab capture reads pg_stat_statements of PostgreSQL 13 and later (total_exec_time)"
                .into(),
        ));
    }
    let rows = match client
        .query(&read_sql(&schema, version_num >= 140_000), &[])
        .await
    {
        Ok(r) => r,
        Err(e) if e.to_string().contains("shared_preload_libraries") => return Err(None),
        Err(e) => return Err(Some(format!("reading pg_stat_statements: {e}"))),
    };
    let mut out = Statements::default();
    for r in rows {
        let total_ms: f64 = r.get(3);
        let query: String = r.get(1);
        // pglab capture's own reads are no part of the workload, nor of its total.
        if query.starts_with(OWN) {
            continue;
        }
        out.total_ms += total_ms;
        if query.starts_with("<insufficient privilege>") {
            out.hidden += 1;
            continue;
        }
        let calls: f64 = r.get(2);
        let mean_ms = if calls > 0.0 { total_ms / calls } else { 0.0 };
        let sq: f64 = r.get(8);
        let var = if calls > 0.0 {
            sq / calls - mean_ms * mean_ms
        } else {
            0.0
        };
        out.rows.push(Baseline {
            query_id: r.get(0),
            query,
            calls,
            total_ms,
            mean_ms,
            stddev_ms: var.max(0.0).sqrt(),
            rows: r.get(4),
            shared_hit: r.get(5),
            shared_read: r.get(6),
            temp: r.get(7),
        });
    }
    Ok(out)
}
