//! One trial on the standby: the readers for the trial's time on the standby, the churn and
//! an xmin watch on the primary meanwhile, and around them what the trial cost — the
//! standby's `pg_stat_database_conflicts` by kind, the churned tables' dead tuples and size
//! on the primary.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::churn::{self, Churned};
use super::clients::{Clients, Got};
use super::node::{Node, xmin_age};
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::query::Latency;

/// What a trial on the standby measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StandbyReadTrial {
    pub combo: usize,
    pub repeat: u32,
    /// The swept settings as the standby's (or the primary's) sessions showed them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The readers' time (the trial's length, and the statement that ran past it).
    pub seconds: f64,
    /// Executions that returned (with clients: transactions).
    pub executions: u64,
    /// The clients that read (`--clients`, `--script`; None: one session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Their transactions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// Statements the standby cancelled for a recovery conflict (40001), as the readers got
    /// them.
    pub cancelled: u64,
    /// Of those, sessions the standby ended.
    #[serde(default)]
    pub terminated: u64,
    /// `pg_stat_database_conflicts` on the standby over the trial, by kind (`snapshot`,
    /// `lock`, `bufferpin`, `deadlock`, `tablespace`); kinds that did not move are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub conflicts: BTreeMap<String, i64>,
    /// Latency of the statement executions that returned, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
    /// Rows the primary updated, and its VACUUMs of the churned tables.
    pub churned_rows: u64,
    pub vacuums: u32,
    /// The churned tables on the primary before and after: dead tuples (`n_dead_tup`, after
    /// the trial's last VACUUM: those it could not remove) and bytes with indexes and TOAST.
    pub dead_before: i64,
    pub dead_after: i64,
    pub bytes_before: i64,
    pub bytes_after: i64,
    /// The oldest xmin the standby's feedback held on the primary during the trial, in
    /// transactions (None: it held none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xmin_age_max: Option<i64>,
    /// Seconds the standby took after the trial to replay what the primary had written (replay
    /// waits for conflicting queries up to `max_standby_streaming_delay`).
    #[serde(default)]
    pub caught_up_s: f64,
}

/// Everything a trial needs, fixed for the run.
pub(crate) struct Setup {
    pub node: Node,
    pub tables: Vec<Churned>,
    /// (name, SQL) of each measured statement.
    pub statements: Vec<(String, String)>,
    /// Clients running the workload (None: one session runs the statements in turn).
    pub clients: Option<Clients>,
    pub duration: Duration,
    pub churn_rows_s: u64,
    pub vacuum_every: Option<Duration>,
    /// PostgreSQL 15+: `pg_stat_force_next_flush` exists.
    pub flush: bool,
}

/// The counters of `pg_stat_database_conflicts` on the standby, by kind.
async fn conflicts(standby: &Client) -> Result<BTreeMap<String, i64>, tokio_postgres::Error> {
    let r = standby
        .query_one(
            "SELECT confl_snapshot, confl_lock, confl_bufferpin, confl_deadlock, confl_tablespace \
             FROM pg_catalog.pg_stat_database_conflicts WHERE datname = current_database()",
            &[],
        )
        .await?;
    Ok(["snapshot", "lock", "bufferpin", "deadlock", "tablespace"]
        .iter()
        .enumerate()
        .map(|(i, k)| (k.to_string(), r.get::<_, i64>(i)))
        .collect())
}

/// What the trial is measured by before and after: the standby's conflict counters, the
/// churned tables' dead tuples and bytes on the primary.
async fn cost(
    standby: &Client,
    primary: &Client,
    tables: &[Churned],
) -> Result<(BTreeMap<String, i64>, i64, i64), tokio_postgres::Error> {
    let c = conflicts(standby).await?;
    let (dead, bytes) = table_cost(primary, tables).await?;
    Ok((c, dead, bytes))
}

/// Dead tuples and bytes of the churned tables on the primary.
async fn table_cost(
    primary: &Client,
    tables: &[Churned],
) -> Result<(i64, i64), tokio_postgres::Error> {
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    let r = primary
        .query_one(
            "SELECT coalesce(sum(s.n_dead_tup), 0)::int8, \
                    coalesce(sum(pg_catalog.pg_total_relation_size(s.relid)), 0)::int8 \
             FROM unnest($1::text[]) AS t(n) \
             JOIN pg_catalog.pg_stat_user_tables s ON s.relid = pg_catalog.to_regclass(t.n)",
            &[&names],
        )
        .await?;
    Ok((r.get(0), r.get(1)))
}

/// The largest xmin age the standby held on the primary until `stop`.
async fn watch_xmin(
    primary: &Client,
    name: &str,
    stop: CancellationToken,
) -> Result<Option<i64>, tokio_postgres::Error> {
    let mut max: Option<i64> = None;
    loop {
        if let Some(a) = xmin_age(primary, name).await? {
            max = Some(max.map_or(a, |m| m.max(a)));
        }
        tokio::select! {
            _ = stop.cancelled() => return Ok(max),
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Latency percentiles of `seconds`, in ms (None when nothing returned).
pub(crate) fn latency(seconds: &[f64]) -> Option<Latency> {
    let mut ms: Vec<f64> = seconds.iter().map(|s| s * 1000.0).collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| crate::measure::stats::quantile_sorted(&ms, p);
    Some(Latency {
        p50: q(0.5)?,
        p95: q(0.95)?,
        p99: q(0.99)?,
    })
}

fn conflict_delta(
    before: &BTreeMap<String, i64>,
    after: &BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, d)| *d != 0)
        .collect()
}

/// The trial's load: the readers on the standby until the trial's time is up, the churn and
/// the xmin watch on the primary until the readers are done (however they ended). What the
/// readers got, what the churn did, the oldest xmin the standby held and the seconds it all
/// took.
async fn load(
    ctx: &RunCtx,
    setup: &Setup,
    (primary, churner): (&Client, &Client),
    (n, tref): (u32, &TrialRef),
) -> Result<(Got, churn::ChurnDone, Option<i64>, f64), RunError> {
    let stop = CancellationToken::new();
    let started = Instant::now();
    let until = started + setup.duration;
    let readers = async {
        let got = super::clients::read(ctx, setup, n, (until, tref)).await;
        stop.cancel();
        got
    };
    let churn = churn::run(
        churner,
        &setup.tables,
        setup.churn_rows_s,
        setup.vacuum_every,
        setup.flush,
        stop.clone(),
    );
    let name = setup.node.name();
    let xmin = watch_xmin(primary, &name, stop.clone());
    let (reads, churned, xmin) = tokio::join!(readers, churn, xmin);
    let seconds = started.elapsed().as_secs_f64();
    let reads = reads?;
    let churned = churned.map_err(|e| ctx.error(e).within("the churn on the primary"))?;
    Ok((reads, churned, xmin.map_err(|e| ctx.error(e))?, seconds))
}

/// Run one trial: the readers (`n` clients, when there are clients) on the standby for the
/// trial's time while the primary churns.
pub(crate) async fn run(
    ctx: &RunCtx,
    setup: &Setup,
    n: u32,
    tref: &TrialRef,
) -> Result<(StandbyReadTrial, Got), RunError> {
    let err = |e| ctx.error(e);
    let primary = ctx.session().await?;
    let churner = ctx.session().await?;
    let standby = setup
        .node
        .target
        .connect()
        .await
        .map_err(|e| RunError::Failed(format!("{}: {e}", setup.node.name())))?;
    let (conflicts_before, dead_before, bytes_before) =
        cost(&standby, &primary, &setup.tables).await.map_err(err)?;
    let (got, churned, xmin_age_max, seconds) =
        load(ctx, setup, (&primary, &churner), (n, tref)).await?;
    // Replay held back by conflicts catches up before anything else reads on the standby:
    // the next trial starts level, and no statement of pglab's own meets a late conflict.
    let behind = Instant::now();
    setup.node.wait_replayed(ctx, &primary).await?;
    let caught_up_s = behind.elapsed().as_secs_f64();
    let (cancelled, terminated) = got.conflicts();
    settle(&standby, &conflicts_before, cancelled).await;
    let (conflicts_after, dead_after, bytes_after) =
        cost(&standby, &primary, &setup.tables).await.map_err(err)?;
    let trial = StandbyReadTrial {
        seconds,
        executions: got.executions(),
        clients: got.throughput().map(|t| t.0),
        tps: got.throughput().map(|t| t.1),
        cancelled,
        terminated,
        conflicts: conflict_delta(&conflicts_before, &conflicts_after),
        latency_ms: got.latency(),
        churned_rows: churned.rows,
        vacuums: churned.vacuums,
        dead_before,
        dead_after,
        bytes_before,
        bytes_after,
        xmin_age_max,
        caught_up_s,
        ..StandbyReadTrial::default()
    };
    Ok((trial, got))
}

/// Wait (2 s at the most) until the standby's conflict counters have counted the `cancelled`
/// statements the readers got since `before`: a client's session that ended reports its own
/// count as it exits, a moment after the trial.
async fn settle(standby: &Client, before: &BTreeMap<String, i64>, cancelled: u64) {
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let Ok(now) = conflicts(standby).await else {
            return;
        };
        let counted: i64 = conflict_delta(before, &now).values().sum();
        if counted >= cancelled as i64 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_deltas() {
        assert_eq!(latency(&[]), None);
        let l = latency(&[0.001, 0.002, 0.003]).unwrap();
        assert!((l.p50 - 2.0).abs() < 1e-9, "{l:?}");
        assert!(l.p99 <= 3.0 + 1e-9 && l.p99 >= l.p95);
        let b = BTreeMap::from([("snapshot".to_string(), 3), ("lock".to_string(), 1)]);
        let a = BTreeMap::from([("snapshot".to_string(), 10), ("lock".to_string(), 1)]);
        assert_eq!(
            conflict_delta(&b, &a),
            BTreeMap::from([("snapshot".to_string(), 7)])
        );
    }
}
