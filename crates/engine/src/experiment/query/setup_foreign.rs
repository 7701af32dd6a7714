//! The setup on a server pglab did not start: run on pglab's measuring session itself, in one
//! transaction, where it may only create and fill temporary tables (`pg_temp`, gone when the
//! session ends; nothing of the lab schema, nothing kept). Before that transaction may commit,
//! the server is asked what it wrote: rows of any other table, a relation made, changed or
//! dropped outside `pg_temp` — any of that, and it is rolled back. "Rolled back" is said only
//! when the server confirmed it (libpq's transaction status is idle after the ROLLBACK).
//! The classifier has refused transaction control and everything but temporary `CREATE`s,
//! DML and reads before any of this runs (`guard::check_setup`).

use std::time::Instant;

use super::pqsession::PqSession;
use super::setup::SetupInfo;
use super::sqltext;
use crate::experiment::lab::{RunCtx, RunError};

/// Relations outside `pg_temp` and the system's: count and oid checksum (a created or
/// dropped one changes it).
const OUTSIDE: &str = "SELECT count(*)::text || '/' || coalesce(sum(c.oid::int8), 0)::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'";

/// Inside the setup's transaction: rows written outside `pg_temp`, and relations whose
/// catalog row this transaction wrote outside it.
const WROTE: &str = "SELECT string_agg(w, ', ') FROM (
  SELECT 'rows of ' || schemaname || '.' || relname AS w FROM pg_catalog.pg_stat_xact_all_tables
   WHERE schemaname NOT IN ('pg_catalog', 'information_schema') AND schemaname NOT LIKE 'pg_toast%'
     AND schemaname NOT LIKE 'pg_temp%' AND n_tup_ins + n_tup_upd + n_tup_del > 0
  UNION ALL
  SELECT 'the definition of ' || n.nspname || '.' || c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
     AND c.xmin::text::int8 = pg_catalog.pg_current_xact_id_if_assigned()::text::int8 % 4294967296) s";

/// The temporary relations of this session: `kind name`, and the tables among them.
const MADE: &str = "SELECT string_agg(CASE c.relkind WHEN 'v' THEN 'view ' WHEN 'S' THEN 'sequence ' ELSE 'table ' END || c.relname, ', ' ORDER BY c.relname)
  FROM pg_catalog.pg_class c WHERE c.relnamespace = pg_catalog.pg_my_temp_schema() AND c.relkind IN ('r', 'p', 'v', 'S')";

/// The rollback's sentence: what the server confirmed.
fn rolled_back(confirmed: bool) -> &'static str {
    if confirmed {
        "its transaction was rolled back (the server confirmed it), nothing was kept"
    } else {
        "pglab could not confirm the rollback, so it closed the session, which ends the transaction without committing it"
    }
}

/// Run the setup's statements in one transaction on `session`; refused and rolled back when
/// it wrote outside `pg_temp`.
async fn execute(ctx: &RunCtx, session: &mut PqSession, setup_sql: &str) -> Result<(), RunError> {
    let statements =
        sqltext::split(setup_sql).map_err(|e| RunError::failed(format!("setup: {e}")))?;
    let before = session.exec(ctx, OUTSIDE).await?;
    session.begin(ctx).await?;
    for s in &statements {
        let name = format!("setup, line {} ({})", s.line, s.name);
        if let Err(e) = session.command(ctx, &name, &s.sql).await {
            let confirmed = session.finish(false).await;
            return Err(match e {
                RunError::Cancelled => RunError::Cancelled,
                e => RunError::failed(format!("{e}; {}", rolled_back(confirmed))),
            });
        }
    }
    let mut wrote: Vec<String> = session.exec(ctx, WROTE).await?.into_iter().collect();
    if session.exec(ctx, OUTSIDE).await? != before {
        wrote.push("relations created or dropped".into());
    }
    if !wrote.is_empty() {
        let confirmed = session.finish(false).await;
        return Err(RunError::failed(format!(
            "the setup wrote outside its temporary tables ({}): on a server pglab did not start it may create and fill only temporary tables; {}",
            wrote.join(", "),
            rolled_back(confirmed)
        )));
    }
    if !session.finish(true).await {
        return Err(RunError::failed(
            "the setup's COMMIT failed (its temporary tables are not there): see the server's log",
        ));
    }
    Ok(())
}

/// Run the setup on the measuring session; its temporary tables get `ANALYZE` (autovacuum
/// never analyzes a temporary table, and the planner would guess) — writes of pg_statistic
/// rows that `--writes rollback` allowed, said in a note.
pub(crate) async fn run(
    ctx: &RunCtx,
    session: &mut PqSession,
    setup_sql: &str,
) -> Result<Option<SetupInfo>, RunError> {
    if setup_sql.trim().is_empty() {
        return Ok(None);
    }
    ctx.emit.phase(None, "setup (temporary tables)").await;
    let t0 = Instant::now();
    execute(ctx, session, setup_sql).await?;
    let seconds = t0.elapsed().as_secs_f64();
    let made = session.exec(ctx, MADE).await?.unwrap_or_default();
    let objects: Vec<String> = made
        .split(", ")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    for t in objects.iter().filter_map(|o| o.strip_prefix("table ")) {
        let sql = format!("ANALYZE pg_temp.{}", crate::sql::quote::ident(t));
        session
            .command(ctx, "pglab's ANALYZE of the setup's tables", &sql)
            .await?;
    }
    ctx.note(format!(
        "setup took {} on pglab's measuring session: made {} as temporary tables (and ANALYZEd them), gone when the session ends; nothing else was written",
        crate::measure::units::format_seconds(seconds),
        if objects.is_empty() { "nothing".to_string() } else { objects.join(", ") }
    ))
    .await;
    Ok(Some(SetupInfo {
        digest: sqltext::digest(setup_sql),
        seconds,
        objects,
        reused: false,
        kept: false,
    }))
}
