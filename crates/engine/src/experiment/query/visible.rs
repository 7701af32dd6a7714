//! Candidate indexes interleaved. Built one at a time with their trials in a block, the
//! candidates were measured minutes apart, and drift between blocks (a host slower for a
//! while, caches warming) could pick the winner of a close pair. On pglab's sandbox every
//! candidate is built once, before the first trial, and then each combination sees only its
//! own: the others are hidden from the planner by `pg_index.indisvalid = false` (what its
//! superuser may set; the planner skips an index that is not valid, while every write keeps
//! it up to date — `indisready` is left alone), and the "no index" combinations hide them all.
//! The combinations then run round by round like the settings' and are decided together.
//!
//! Re-planning: the measured statements go as simple-protocol queries (`PQsendQuery`), planned
//! anew at every execution, and the update of `pg_index` sends the index's relcache
//! invalidation, which every session reads before its next statement. A plan cached inside a
//! function the statement calls (PL/pgSQL keeps its plans) depends on the table, not on the
//! index, so the index's invalidation would not reach it: after every toggle the measuring
//! session runs `DISCARD PLANS`. No plan made under another combination's index survives.
//!
//! Put back on every path: the run makes every candidate valid again and drops it after its
//! trials, after an error, a cancel or a panic; a pglab killed outright leaves marked
//! candidates that the next build on the table, or `pglab clean`, drops.

use tokio_postgres::Client;

use super::indexes::qualified;
use super::report::{IndexCandidate, QueryReport};
use super::spec::QuerySpec;
use crate::experiment::lab::{RunCtx, RunError};

/// The toggle of the built candidates' visibility, on a session of the lab's.
pub(crate) struct Visible {
    client: Option<Client>,
    /// Each candidate's index OID, by index value − 1.
    oids: Vec<u32>,
    /// The index value the planner sees now (0: none); None: unknown.
    shown: Option<usize>,
}

const TOGGLE: &str = "UPDATE pg_catalog.pg_index SET indisvalid = (indexrelid = $1)
                       WHERE indexrelid = ANY($2) AND indisvalid IS DISTINCT FROM (indexrelid = $1)";

/// Whether the sandbox's role may toggle `pg_index` (a superuser): None when it may, else why not.
pub(crate) async fn refused(client: &Client) -> Option<String> {
    match client
        .query_one(
            "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user",
            &[],
        )
        .await
    {
        Ok(r) if r.get::<_, bool>(0) => None,
        Ok(_) => Some(
            "pglab's role here is not a superuser, so it cannot hide an index from the planner"
                .into(),
        ),
        Err(e) => Some(crate::server::error::describe_query_error(&e)),
    }
}

/// The OIDs of built candidates, by index value − 1.
async fn oids(client: &Client, candidates: &[IndexCandidate]) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for c in candidates {
        let oid: Option<u32> = client
            .query_one("SELECT pg_catalog.to_regclass($1)::oid", &[&qualified(c)])
            .await
            .map_err(|e| crate::server::error::describe_query_error(&e))?
            .get(0);
        out.push(oid.ok_or_else(|| format!("index {} is not there after its build", c.value))?);
    }
    Ok(out)
}

impl Visible {
    /// Every candidate built: find them and hide them all (the first combinations have none).
    pub(crate) async fn start(
        ctx: &RunCtx,
        candidates: &[IndexCandidate],
    ) -> Result<Visible, RunError> {
        let client = ctx.session().await?;
        let oids = oids(&client, candidates).await.map_err(RunError::Failed)?;
        let mut v = Visible {
            client: Some(client),
            oids,
            shown: None,
        };
        v.show(ctx, 0).await?;
        Ok(v)
    }

    /// Make index value `v`'s candidate the only one the planner sees (0: none). True when
    /// that changed what the planner sees.
    pub(crate) async fn show(&mut self, ctx: &RunCtx, v: usize) -> Result<bool, RunError> {
        if self.shown == Some(v) {
            return Ok(false);
        }
        let keep = if v == 0 { 0 } else { self.oids[v - 1] };
        // A restart (a swept setting, a cold trial) ends the session: one fresh try.
        let first = match &self.client {
            Some(c) => c.execute(TOGGLE, &[&keep, &self.oids]).await.is_ok(),
            None => false,
        };
        if !first {
            let client = ctx.session().await?;
            client
                .execute(TOGGLE, &[&keep, &self.oids])
                .await
                .map_err(|e| ctx.error(e))?;
            self.client = Some(client);
        }
        self.shown = Some(v);
        Ok(true)
    }
}

/// Make every built candidate of `candidates` valid again (on a fresh session: the run's may
/// be gone). True when it was done or there was nothing to do.
pub(crate) async fn restore(ctx: &RunCtx, candidates: &[IndexCandidate]) -> bool {
    let built: Vec<&IndexCandidate> = candidates
        .iter()
        .filter(|c| c.build_seconds.is_some() && !c.dropped)
        .collect();
    if built.is_empty() {
        return true;
    }
    let Ok(client) = ctx.target.connect().await else {
        return false;
    };
    let names: Vec<String> = built.iter().map(|c| qualified(c)).collect();
    client
        .execute(
            "UPDATE pg_catalog.pg_index SET indisvalid = true
              WHERE indexrelid = ANY (SELECT pg_catalog.to_regclass(n)::oid FROM unnest($1::text[]) AS n)
                AND NOT indisvalid",
            &[&names],
        )
        .await
        .is_ok()
}

/// Whether the built candidates interleave (all built once, one visible per combination):
/// on the sandbox, when every statement only reads and pglab may hide an index. Otherwise
/// they run in blocks, and the confounder says why.
pub(crate) async fn interleaves(
    ctx: &RunCtx,
    spec: &QuerySpec,
    report: &QueryReport,
    confounders: &mut Vec<String>,
) -> bool {
    if !report.indexes.iter().any(|c| !c.hypothetical()) {
        return false;
    }
    let writer = super::bench::plan_statements(spec)
        .into_iter()
        .find(|(_, sql)| !super::guard::is_read(sql));
    let why = match writer {
        Some((name, _)) => Some(format!(
            "{name} writes, and a candidate hidden from the planner would still be kept up to date by its writes"
        )),
        None => match ctx.session().await {
            Ok(c) => refused(&c).await,
            Err(e) => Some(e.to_string()),
        },
    };
    match why {
        None => true,
        Some(why) => {
            confounders.push(format!("candidate indexes run in blocks (each built once, its trials together), so drift between blocks is not spread by interleaving as it is between settings: {why}"));
            false
        }
    }
}

/// Every built candidate valid again, then dropped; said once.
pub(crate) async fn put_back(ctx: &RunCtx, report: &mut QueryReport) {
    if !restore(ctx, &report.indexes).await {
        ctx.note("making the candidate indexes valid again failed; they are dropped next, or by `pglab clean`").await;
    }
    let mut dropped = Vec::new();
    for c in report.indexes.iter_mut() {
        if c.build_seconds.is_some() && !c.dropped && super::indexes::drop(ctx, c).await {
            dropped.push(format!("{} ({})", c.name, c.table));
        }
    }
    if !dropped.is_empty() {
        ctx.note(format!("cleaned up: dropped index {}", dropped.join(", ")))
            .await;
    }
}
