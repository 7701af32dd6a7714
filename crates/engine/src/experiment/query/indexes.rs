//! Candidate indexes during a run. On pglab's sandbox, and on tables of the lab schema
//! anywhere, a candidate is built for real (timed, under a name of pglab's own, marked with a
//! `pglab:` comment) before its combinations' trials and dropped after them. On a real
//! server's own tables it is only imagined, through HypoPG: a plain `EXPLAIN` with the
//! hypothetical index gives the plan and the planner's cost — an estimate, not a measurement,
//! and marked so everywhere.

use std::time::Instant;

use tokio_postgres::Client;

use super::candidate::Candidate;
use super::precheck::{candidate_table, hypopg};
use super::report::IndexCandidate;
use super::session::user_search_path;
use crate::experiment::lab::leftovers;
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::{format_bytes, format_seconds};
use crate::sql::lab::MARK;
use crate::sql::lab::plain_name;
use crate::sql::quote::{ident, literal};
use crate::sql::settings::SessionSettings;

/// Find each candidate's table and decide how it is tried; a sentence when it cannot be.
pub(crate) async fn resolve(
    ctx: &RunCtx,
    client: &Client,
    candidates: &[String],
    on_sandbox: bool,
) -> Result<Vec<IndexCandidate>, RunError> {
    let mut out = Vec::new();
    for (i, sql) in candidates.iter().enumerate() {
        let value = i + 1;
        let c = Candidate::parse(sql).map_err(RunError::Failed)?;
        let (schema, table) = candidate_table(client, &c)
            .await
            .map_err(RunError::Failed)?
            .ok_or_else(|| {
                RunError::failed(format!("index {value}: there is no table {} here", c.table))
            })?;
        // On a server pglab did not start nothing is built: a query run writes nothing there.
        let real = on_sandbox;
        if !real && let Err(why) = hypopg(client).await {
            return Err(RunError::failed(format!(
                "index {value} on {schema}.{table}: on a server pglab did not start, a candidate on the server's own tables is tried only hypothetically through HypoPG, and {why}"
            )));
        }
        out.push(IndexCandidate {
            value,
            sql: sql.clone(),
            table: format!("{schema}.{table}"),
            how: if real { "built" } else { "hypothetical" }.into(),
            name: if real {
                format!("pglab_q_{}_{value}", plain_name(&ctx.run_id))
            } else {
                String::new()
            },
            build_seconds: None,
            index_bytes: None,
            dropped: false,
        });
    }
    Ok(out)
}

/// The schema a built candidate lives in (its table's).
fn schema_of(c: &IndexCandidate) -> &str {
    c.table.split_once('.').map_or("", |(s, _)| s)
}

/// `"schema"."name"` of a built candidate.
pub(crate) fn qualified(c: &IndexCandidate) -> String {
    format!("{}.{}", ident(schema_of(c)), ident(&c.name))
}

/// The comment a built candidate carries: `pglab:run=<run id> query index candidate`.
fn candidate_mark(run_id: &str) -> String {
    format!("{MARK}run={run_id} query index candidate")
}

/// Drop the candidate indexes that runs no longer alive (their advisory lock is free) left on
/// `c`'s table: a pglab killed between a build and its drop leaves one. The names dropped.
async fn drop_stale(client: &Client, c: &IndexCandidate) -> Vec<String> {
    let Ok(rows) = client
        .query(
            "SELECT i.relname::text, pg_catalog.obj_description(i.oid, 'pg_class')
               FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
               JOIN pg_catalog.pg_class t ON t.oid = x.indrelid
               JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
              WHERE n.nspname = $1 AND t.relname = $2
                AND pg_catalog.obj_description(i.oid, 'pg_class') LIKE 'pglab:run=% query index candidate'",
            &[&schema_of(c), &c.table.split_once('.').map_or("", |(_, t)| t)],
        )
        .await
    else {
        return Vec::new();
    };
    let mut dropped = Vec::new();
    for r in rows {
        let (name, comment): (String, String) = (r.get(0), r.get(1));
        let Some(run) = comment
            .strip_prefix(&format!("{MARK}run="))
            .and_then(|rest| rest.split_whitespace().next())
        else {
            continue;
        };
        if comment != candidate_mark(run) || leftovers::run_is_live(client, run).await {
            continue;
        }
        let sql = format!(
            "DROP INDEX IF EXISTS {}.{}",
            ident(schema_of(c)),
            ident(&name)
        );
        if client.batch_execute(&sql).await.is_ok() {
            dropped.push(name);
        }
    }
    dropped
}

/// Build candidate `c` for real, timed, on `client` (a session of the lab's, not the
/// measuring one: that may be read-only).
pub(crate) async fn build(
    ctx: &RunCtx,
    client: &Client,
    c: &mut IndexCandidate,
) -> Result<(), RunError> {
    let parsed = Candidate::parse(&c.sql).map_err(RunError::Failed)?;
    ctx.emit
        .phase(None, format!("building index {} on {}", c.value, c.table))
        .await;
    // The candidate names its table (and any function) as the statements do.
    let mut path = SessionSettings::new();
    path.set("search_path", user_search_path(&ctx.opts.schema));
    path.apply(client).await.map_err(|e| ctx.error(e))?;
    for name in drop_stale(client, c).await {
        ctx.note(format!(
            "dropped index {name} on {}: an interrupted query run left it",
            c.table
        ))
        .await;
    }
    let t0 = Instant::now();
    ctx.cancellable(client, client.batch_execute(&parsed.build_sql(&c.name)))
        .await
        .map_err(|e| e.within(format_args!("index {}", c.value)))?;
    let seconds = t0.elapsed().as_secs_f64();
    let mark = candidate_mark(&ctx.run_id);
    client
        .batch_execute(&format!(
            "COMMENT ON INDEX {} IS {}",
            qualified(c),
            literal(&mark)
        ))
        .await
        .map_err(|e| ctx.error(e))?;
    let bytes: i64 = client
        .query_one(
            "SELECT pg_catalog.pg_relation_size(pg_catalog.to_regclass($1))",
            &[&qualified(c)],
        )
        .await
        .map_err(|e| ctx.error(e))?
        .get(0);
    c.build_seconds = Some(seconds);
    c.index_bytes = Some(bytes);
    ctx.note(format!(
        "index {} built in {} ({}): {}",
        c.value,
        format_seconds(seconds),
        format_bytes(bytes.max(0) as u64),
        c.sql
    ))
    .await;
    Ok(())
}

/// Drop a built candidate (on a fresh session when the run's may be gone). True when it was
/// there to drop.
pub(crate) async fn drop(ctx: &RunCtx, c: &mut IndexCandidate) -> bool {
    if c.name.is_empty() || c.dropped {
        return false;
    }
    let Ok(client) = ctx.target.connect().await else {
        return false;
    };
    let ok = client
        .batch_execute(&format!("DROP INDEX IF EXISTS {}", qualified(c)))
        .await
        .is_ok();
    c.dropped = ok;
    ok
}
