//! The standby a run reads on: chosen and refused with a sentence, waited for until it has
//! replayed the primary's data, and its feedback to the primary watched (the xmin it holds
//! there through its replication slot).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::Client;

use crate::experiment::lab::{RunCtx, RunError};
use crate::server::{Standby, Target, replication};

/// How long a standby gets to replay the setup, or to make its feedback felt on the primary.
const CATCH_UP: Duration = Duration::from_secs(60);

/// The standby the statements run on.
pub(crate) struct Node {
    pub standby: Standby,
    pub target: Arc<Target>,
}

impl Node {
    /// Standby `n` of the sandbox, running: refused on a server pglab did not start and on
    /// a sandbox without that standby running.
    pub(crate) fn pick(ctx: &RunCtx, n: u32) -> Result<Node, RunError> {
        let Some(sandbox) = ctx.opts.sandbox.clone().filter(|_| ctx.target.is_sandbox()) else {
            return Err(RunError::failed(
                "--on-standby: reads on a standby run on pglab's own sandbox with a standby (pglab sandbox start --standbys 1); on a server pglab did not start, point --db at the standby itself",
            ));
        };
        if ctx.server.citus.is_some() {
            return Err(RunError::failed(
                "--on-standby: the Citus sandbox has no standbys; use the single-server sandbox",
            ));
        }
        let running: Vec<Standby> = Standby::existing(&sandbox)
            .into_iter()
            .filter(Standby::running)
            .collect();
        let Some(standby) = running.iter().find(|s| s.index == n).cloned() else {
            let have = if running.is_empty() {
                "the sandbox has no standby running: start one with `pglab sandbox start --standbys 1`".to_string()
            } else {
                let names: Vec<String> = running.iter().map(|s| s.index.to_string()).collect();
                format!("the sandbox's running standbys are {}", names.join(", "))
            };
            return Err(RunError::Failed(format!("--on-standby {n}: {have}")));
        };
        let port = standby
            .node
            .live_postmaster()
            .map(|(_, p)| p)
            .ok_or_else(|| RunError::Failed(format!("{} is not running", standby.name())))?;
        let target = Target::new(standby.node.conn_params(port), true)
            .map_err(|e| RunError::Failed(e.to_string()))?;
        Ok(Node {
            standby,
            target: Arc::new(target),
        })
    }

    pub(crate) fn name(&self) -> String {
        self.standby.name()
    }

    /// Wait until the standby has replayed everything the primary wrote so far (the setup).
    pub(crate) async fn wait_replayed(
        &self,
        ctx: &RunCtx,
        primary: &Client,
    ) -> Result<(), RunError> {
        let lsn = replication::current_lsn(primary)
            .await
            .map_err(|e| ctx.error(e))?;
        let end = Instant::now() + CATCH_UP;
        loop {
            ctx.check()?;
            let at = replication::standby_at(primary, &self.name(), &lsn)
                .await
                .map_err(|e| ctx.error(e))?;
            if matches!(at, Some((_, true))) {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(RunError::Failed(format!(
                    "{} did not replay the primary's data within {} s ({})",
                    self.name(),
                    CATCH_UP.as_secs(),
                    at.map_or("not connected".into(), |(state, _)| state)
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Wait until the primary holds an xmin for this standby (`feedback` on) or none (off):
    /// the walreceiver sends its feedback a moment after a reload.
    pub(crate) async fn wait_feedback(
        &self,
        ctx: &RunCtx,
        primary: &Client,
        feedback: bool,
    ) -> Result<(), RunError> {
        let end = Instant::now() + CATCH_UP;
        loop {
            ctx.check()?;
            let held = xmin_age(primary, &self.name())
                .await
                .map_err(|e| ctx.error(e))?
                .is_some();
            if held == feedback {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(RunError::Failed(format!(
                    "the primary {} an xmin for {} {} s after hot_standby_feedback={}",
                    if feedback { "held no" } else { "still held" },
                    self.name(),
                    CATCH_UP.as_secs(),
                    if feedback { "on" } else { "off" }
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// How many transactions old the xmin is that standby `name`'s feedback holds on the primary:
/// its replication slot's (a standby with a slot, as pglab's) or its walsender's; None when
/// it holds none (`hot_standby_feedback` off).
pub(crate) async fn xmin_age(
    primary: &Client,
    name: &str,
) -> Result<Option<i64>, tokio_postgres::Error> {
    let r = primary
        .query_one(
            "SELECT greatest( \
               (SELECT max(pg_catalog.age(xmin)) FROM pg_catalog.pg_replication_slots WHERE slot_name = $1), \
               (SELECT max(pg_catalog.age(backend_xmin)) FROM pg_catalog.pg_stat_replication WHERE application_name = $1) \
             )::int8",
            &[&name],
        )
        .await?;
    Ok(r.get(0))
}
