//! What runs on the measuring session besides the timed executions: the untimed
//! `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of a combination (rolled back, so a write is never
//! made once more for a plan), and a plain `EXPLAIN` under a hypothetical index (HypoPG).

use super::guard::TxMode;
use super::plan::{self, PlanFacts};
use super::pqsession::PqSession;
use crate::experiment::lab::{RunCtx, RunError};
use crate::sql::quote::{ident, literal};

/// One timed execution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Executed {
    pub seconds: f64,
    /// Rows returned; for a statement that returns none, the rows it affected.
    pub rows: u64,
}

fn facts_of(text: Option<String>, block: u64) -> Result<(serde_json::Value, PlanFacts), String> {
    let text = text.ok_or("EXPLAIN returned nothing")?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("EXPLAIN's JSON did not parse: {e}"))?;
    let facts = plan::read(&json, block)?;
    Ok((json, facts))
}

/// The untimed `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` of `sql`, rolled back.
pub(crate) async fn explain_analyze(
    ctx: &RunCtx,
    session: &mut PqSession,
    (name, sql): (&str, &str),
    (mode, settings): (TxMode, bool),
    block: u64,
) -> Result<(serde_json::Value, PlanFacts), RunError> {
    // SETTINGS (PostgreSQL 12+): the planner settings that differ from the defaults, in the
    // plan a tune reads.
    let with = if settings { ", SETTINGS" } else { "" };
    let explain = format!("EXPLAIN (ANALYZE, BUFFERS{with}, FORMAT JSON) {sql}");
    let text = session
        .explain(ctx, name, mode.explain_begin(), explain)
        .await?;
    facts_of(text, block).map_err(|e| RunError::failed(format!("{name}: {e}")))
}

/// The planner's plan of `sql`, nothing run: a plain `EXPLAIN (FORMAT JSON)`, rolled back;
/// with `settings` (PostgreSQL 12+) the settings in effect that differ from the defaults go
/// with it, so a tune's round records that its `SET`s reached the measuring session.
pub(crate) async fn explain_plain(
    ctx: &RunCtx,
    session: &mut PqSession,
    (name, sql): (&str, &str),
    settings: bool,
    block: u64,
) -> Result<(serde_json::Value, PlanFacts), RunError> {
    let with = if settings { "SETTINGS, " } else { "" };
    let explain = format!("EXPLAIN ({with}FORMAT JSON) {sql}");
    let text = session.explain(ctx, name, "BEGIN", explain).await?;
    facts_of(text, block).map_err(|e| RunError::failed(format!("{name}: {e}")))
}

/// The planner's plan of `sql` with a hypothetical index (HypoPG) made from `candidate`:
/// a plain EXPLAIN (nothing runs), the index gone again after.
pub(crate) async fn explain_hypothetical(
    ctx: &RunCtx,
    session: &mut PqSession,
    (name, sql): (&str, &str),
    candidate: &str,
    block: u64,
) -> Result<(serde_json::Value, PlanFacts), RunError> {
    // HypoPG's functions by the schema its extension was created in, wherever that is.
    let schema = session
        .exec(
            ctx,
            "SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'hypopg'",
        )
        .await?
        .ok_or_else(|| RunError::failed("HypoPG is no longer created in this database"))?;
    let hypopg = ident(&schema);
    session
        .exec(
            ctx,
            &format!(
                "SELECT indexrelid FROM {hypopg}.hypopg_create_index({})",
                literal(candidate)
            ),
        )
        .await?;
    let explain = format!("EXPLAIN (FORMAT JSON) {sql}");
    let text = session.explain(ctx, name, "BEGIN READ ONLY", explain).await;
    let reset = session
        .exec(ctx, &format!("SELECT {hypopg}.hypopg_reset()"))
        .await;
    let text = text?;
    reset?;
    facts_of(text, block).map_err(|e| RunError::failed(format!("{name}: {e}")))
}
