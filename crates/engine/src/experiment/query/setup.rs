//! The run's setup: the DBA's SQL run once before the trials, with the lab schema first on
//! the `search_path`, so what it creates is the lab's. The relations it creates are marked
//! as the run's (dropped at the end like every lab table) or, with `keep-setup`, as a dataset
//! of this setup's text (kept, and reused by the next run with the same setup); the tables
//! get `VACUUM (ANALYZE)` so the planner knows them. The setup runs in one transaction. On a
//! server pglab did not start it runs elsewhere: see [`super::setup_foreign`].

use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::session::user_search_path;
use super::sqltext;
use crate::experiment::lab::{RunCtx, RunError};
use crate::sql::lab::MARK;
use crate::sql::quote::literal;
use crate::sql::settings::SessionSettings;

/// What the setup did, kept in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetupInfo {
    /// A digest of the setup's text (runs with the same setup compare).
    pub digest: String,
    pub seconds: f64,
    /// The relations it made in the lab schema, `kind name` (`table t`, `view v`).
    pub objects: Vec<String>,
    /// A kept setup of an earlier run was reused (the setup did not run).
    pub reused: bool,
    /// Kept for the next run (`keep-setup`).
    pub kept: bool,
}

/// The mark of a kept setup's relations.
pub(crate) fn kept_mark(digest: &str) -> String {
    format!("{MARK}dataset query-setup={digest}")
}

fn kind_word(relkind: i8) -> &'static str {
    match relkind as u8 {
        b'v' => "view",
        b'm' => "materialized view",
        b'S' => "sequence",
        b'f' => "foreign table",
        _ => "table",
    }
}

/// The lab schema's relations now: (oid, kind, name).
async fn lab_relations(ctx: &RunCtx, c: &Client) -> Result<Vec<(u32, i8, String)>, RunError> {
    let rows = c
        .query(
            "SELECT c.oid, c.relkind, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'u', 'v', 'm', 'S', 'f')",
            &[&ctx.opts.schema],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// Relations outside the lab schema (and the system's): how many, and a checksum of their
/// oids — a created or dropped one changes it.
async fn outside(ctx: &RunCtx, c: &Client) -> Result<(i64, i64), RunError> {
    let r = c
        .query_one(
            "SELECT count(*), coalesce(sum(c.oid::int8), 0)::int8 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname <> $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'",
            &[&ctx.opts.schema],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    Ok((r.get(0), r.get(1)))
}

/// When the lab schema holds what other setups kept: the way on for a name that is taken.
async fn kept_elsewhere(ctx: &RunCtx, c: &Client) -> String {
    let kept: Vec<String> = c
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND obj_description(c.oid, 'pg_class') LIKE $2 ORDER BY 1",
            &[&ctx.opts.schema, &format!("{MARK}dataset query-setup=%")],
        )
        .await
        .map(|rows| rows.iter().map(|r| r.get(0)).collect())
        .unwrap_or_default();
    if kept.is_empty() {
        return String::new();
    }
    format!(
        " ({} in {} was kept by an earlier run with another setup text: `pglab clean --datasets` drops kept setups)",
        kept.join(", "),
        ctx.opts.schema
    )
}

/// What an earlier run with the same setup kept (None: nothing, the setup runs).
async fn reuse(ctx: &RunCtx, c: &Client, mark: &str) -> Result<Option<Vec<String>>, RunError> {
    let kept: Vec<String> = c
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND obj_description(c.oid, 'pg_class') = $2 ORDER BY 1",
            &[&ctx.opts.schema, &mark],
        )
        .await
        .map_err(|e| ctx.error(e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    Ok((!kept.is_empty()).then_some(kept))
}

/// Run the setup's statements in one transaction, each a message of its own (the
/// classifier has refused transaction control in it, so none of them can end it): a failed
/// statement leaves nothing of the setup behind.
async fn execute(ctx: &RunCtx, client: &Client, setup_sql: &str) -> Result<(), RunError> {
    let statements =
        sqltext::split(setup_sql).map_err(|e| RunError::failed(format!("setup: {e}")))?;
    // The setup names tables as the statements do (the DBA's search path); pglab's own
    // queries after it resolve in the catalog and the lab schema only.
    let path = |p: String| {
        let mut s = SessionSettings::new();
        s.set("search_path", p);
        s
    };
    let (user, own) = (
        path(user_search_path(&ctx.opts.schema)),
        path(ctx.search_path()),
    );
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| ctx.error(e))?;
    user.apply(client).await.map_err(|e| ctx.error(e))?;
    for s in &statements {
        let r = ctx.cancellable(client, client.simple_query(&s.sql)).await;
        if let Err(e) = r {
            let _ = client.batch_execute("ROLLBACK").await;
            let _ = own.apply(client).await;
            // A table or object of that name is there already (duplicate_table,
            // duplicate_object): perhaps a setup kept by an earlier run.
            let hint = if matches!(e.sqlstate(), Some("42P07" | "42710")) {
                kept_elsewhere(ctx, client).await
            } else {
                String::new()
            };
            return Err(match e {
                RunError::Cancelled => RunError::Cancelled,
                e => RunError::failed(format!("setup, line {} ({}): {e}{hint}", s.line, s.name)),
            });
        }
    }
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| ctx.error(e))?;
    own.apply(client).await.map_err(|e| ctx.error(e))
}

/// Mark what the setup made as `mark` (the run's, or a kept dataset's) and `VACUUM
/// (ANALYZE)` its tables; the relations as `kind name`.
async fn adopt(
    ctx: &RunCtx,
    client: &Client,
    made: &[&(u32, i8, String)],
    mark: &str,
) -> Result<Vec<String>, RunError> {
    let mut objects = Vec::new();
    for (_, kind, name) in made {
        let what = match *kind as u8 {
            b'v' => "VIEW",
            b'm' => "MATERIALIZED VIEW",
            b'S' => "SEQUENCE",
            b'f' => "FOREIGN TABLE",
            _ => "TABLE",
        };
        client
            .batch_execute(&format!(
                "COMMENT ON {what} {} IS {}",
                ctx.table(name),
                literal(mark)
            ))
            .await
            .map_err(|e| ctx.error(e))?;
        objects.push(format!("{} {name}", kind_word(*kind)));
    }
    for (_, _, name) in made
        .iter()
        .filter(|(_, k, _)| matches!(*k as u8, b'r' | b'm' | b'p'))
    {
        ctx.emit
            .phase(None, format!("VACUUM (ANALYZE) {name}"))
            .await;
        let sql = format!("VACUUM (ANALYZE) {}", ctx.table(name));
        ctx.cancellable(client, client.batch_execute(&sql)).await?;
    }
    Ok(objects)
}

/// Run the setup on pglab's sandbox (or reuse a kept one). None when the spec has none. On
/// a server pglab did not start the setup runs on the measuring session instead
/// ([`super::setup_foreign`]).
pub(crate) async fn run(
    ctx: &RunCtx,
    setup_sql: &str,
    keep: bool,
) -> Result<Option<SetupInfo>, RunError> {
    if setup_sql.trim().is_empty() {
        return Ok(None);
    }
    let digest = sqltext::digest(setup_sql);
    let client = ctx.session().await?;
    let mark = if keep {
        kept_mark(&digest)
    } else {
        format!("{MARK}run={} query setup", ctx.run_id)
    };
    if keep && let Some(kept) = reuse(ctx, &client, &mark).await? {
        ctx.note(format!(
            "setup: reusing what an earlier run with the same setup kept ({})",
            kept.join(", ")
        ))
        .await;
        return Ok(Some(SetupInfo {
            digest,
            objects: kept,
            reused: true,
            kept: true,
            ..SetupInfo::default()
        }));
    }
    ctx.emit.phase(None, "setup").await;
    let before = lab_relations(ctx, &client).await?;
    let outside_before = outside(ctx, &client).await?;
    let t0 = Instant::now();
    execute(ctx, &client, setup_sql).await?;
    let seconds = t0.elapsed().as_secs_f64();
    let after = lab_relations(ctx, &client).await?;
    let made: Vec<&(u32, i8, String)> = after
        .iter()
        .filter(|(oid, _, _)| !before.iter().any(|(b, _, _)| b == oid))
        .collect();
    let objects = adopt(ctx, &client, &made, &mark).await?;
    if outside(ctx, &client).await? != outside_before {
        ctx.note(format!(
            "setup created or dropped relations outside the lab schema {}: pglab leaves those as they are",
            ctx.opts.schema
        ))
        .await;
    }
    let made_words = if objects.is_empty() {
        String::new()
    } else {
        format!(
            "; made {} in {} ({})",
            objects.join(", "),
            ctx.opts.schema,
            if keep {
                "kept for the next run with this setup"
            } else {
                "dropped at the end"
            }
        )
    };
    ctx.note(format!(
        "setup took {}{made_words}",
        crate::measure::units::format_seconds(seconds)
    ))
    .await;
    Ok(Some(SetupInfo {
        digest,
        seconds,
        objects,
        reused: false,
        kept: keep,
    }))
}
