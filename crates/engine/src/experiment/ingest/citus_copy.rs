//! COPY into a distributed table in small batches: a confounder Citus brings.
//!
//! Citus sends a COPY into a hash-distributed table over one connection per shard placement,
//! up to `citus.max_adaptive_executor_pool_size` (default 16) per worker, and when the
//! transaction ends it keeps only `citus.max_cached_conns_per_worker` (default 1) of each
//! worker's connections. A load of many small COPYs therefore sets up most of those
//! connections again for every batch, and connection setup, not rows, becomes what is
//! measured: on pglab's 2-worker sandbox (32 shards) COPY of 256-row batches ran at about
//! 700 rows/s by default and 14k rows/s with `citus.max_adaptive_executor_pool_size = 1`
//! (every shard of a worker over one connection, which stays cached). The finding names the
//! settings in effect and how to measure the remedy; the preflight note warns before a run.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::kinds::Method;
use super::report::IngestTrial;
use crate::measure::stats::median;

pub(crate) const POOL: &str = "citus.max_adaptive_executor_pool_size";
pub(crate) const CACHED: &str = "citus.max_cached_conns_per_worker";

/// Citus' defaults, for a note before the run knows the server's values.
const DEFAULT_POOL: u32 = 16;
const DEFAULT_CACHED: u32 = 1;

/// Below this many rows per shard and COPY, connection setup outweighs the rows.
const ROWS_PER_SHARD: u64 = 1000;

/// The two settings as the run's sessions had them (before any `--set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitusConnections {
    /// `citus.max_adaptive_executor_pool_size`.
    pub pool_size: u32,
    /// `citus.max_cached_conns_per_worker`.
    pub cached_per_worker: u32,
}

/// Read both settings on a session of the run (None off Citus or when they cannot be read).
pub(crate) async fn read(client: &Client) -> Option<CitusConnections> {
    let show = |name: &'static str| async move {
        client
            .query_one(&format!("SHOW {name}"), &[])
            .await
            .ok()
            .and_then(|r| r.get::<_, String>(0).parse::<u32>().ok())
    };
    Some(CitusConnections {
        pool_size: show(POOL).await?,
        cached_per_worker: show(CACHED).await?,
    })
}

/// New connections each COPY sets up: per worker, the shards it holds (up to the pool size)
/// less those kept from the last COPY.
fn new_per_copy(shards: u32, workers: u32, c: CitusConnections) -> u32 {
    let workers = workers.max(1);
    let per_worker = shards.div_ceil(workers).min(c.pool_size.max(1));
    workers * per_worker.saturating_sub(c.cached_per_worker)
}

/// The settings a trial ran with: a swept value where `--set` swept it, else the run's.
fn of_trial(t: &IngestTrial, run: CitusConnections) -> CitusConnections {
    let get = |name: &str, default: u32| {
        t.settings
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    CitusConnections {
        pool_size: get(POOL, run.pool_size),
        cached_per_worker: get(CACHED, run.cached_per_worker),
    }
}

/// The confounder, when some COPY trial into a distributed table sent few rows per shard
/// while setting up connections for every batch.
pub(crate) fn confounder(trials: &[IngestTrial], run: Option<CitusConnections>) -> Option<String> {
    let run = run?;
    let hit: Vec<(&IngestTrial, CitusConnections, u32)> = trials
        .iter()
        .filter(|t| t.method == Method::Copy && t.distribution.column.is_some())
        .filter(|t| t.distribution.shards > 0)
        .filter_map(|t| {
            let c = of_trial(t, run);
            let workers = t.distribution.nodes.saturating_sub(1);
            let fresh = new_per_copy(t.distribution.shards, workers, c);
            (fresh > 0 && t.batch < ROWS_PER_SHARD * t.distribution.shards as u64)
                .then_some((t, c, fresh))
        })
        .collect();
    let &(t, c, fresh) = hit
        .iter()
        .max_by_key(|(t, _, f)| (*f, std::cmp::Reverse(t.batch)))?;
    let same: Vec<f64> = hit
        .iter()
        .filter(|(o, oc, _)| o.batch == t.batch && *oc == c)
        .map(|(o, _, _)| o.latency_ms.p50)
        .collect();
    let shards = t.distribution.shards;
    let workers = t.distribution.nodes.saturating_sub(1).max(1);
    let per_worker = shards.div_ceil(workers).min(c.pool_size.max(1));
    Some(format!(
        "copy into a table distributed over {shards} shards on {workers} worker{}: each COPY opens a connection per shard, up to {POOL} = {} per worker, and only {CACHED} = {} per worker stays open after it, so each COPY of {} rows (about {} a shard) sets up about {fresh} connections{}: connection setup, not rows, is what these trials measure. SET {POOL} = 1 sends all of a worker's shards over one connection that stays cached; raising {CACHED} to {per_worker} keeps them instead; larger batches spread the cost. Measure the remedy with --set {POOL}={},1",
        if workers == 1 { "" } else { "s" },
        c.pool_size,
        c.cached_per_worker,
        t.batch,
        t.batch.div_ceil(shards as u64),
        median(&same)
            .map(|m| format!(" (a batch took {m:.0} ms at the median)"))
            .unwrap_or_default(),
        c.pool_size
    ))
}

/// Before a run: how many COPY statements would each set up Citus' default connections, when
/// the table is distributed and the batches small (None otherwise).
pub(crate) fn preflight_note(
    copy_batches: &[(u64, u64)],
    shards: u32,
    workers: u32,
) -> Option<String> {
    let d = CitusConnections {
        pool_size: DEFAULT_POOL,
        cached_per_worker: DEFAULT_CACHED,
    };
    let fresh = new_per_copy(shards, workers, d);
    let small: Vec<&(u64, u64)> = copy_batches
        .iter()
        .filter(|(b, _)| *b < ROWS_PER_SHARD * shards as u64)
        .collect();
    if fresh == 0 || small.is_empty() {
        return None;
    }
    let copies: u64 = small.iter().map(|(_, n)| n).sum();
    let smallest = small.iter().map(|(b, _)| *b).min()?;
    Some(format!(
        "copy into a distributed table ({shards} shards on {workers} worker{}) in batches from {smallest} rows: with Citus' defaults ({POOL} = {DEFAULT_POOL}, {CACHED} = {DEFAULT_CACHED}) each of the run's up to {copies} COPY statements sets up about {fresh} connections, so these trials run far slower than on a plain table and take long; --set {POOL}=16,1 measures the remedy",
        if workers == 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_set_up_per_copy_follow_citus_rules() {
        let d = CitusConnections {
            pool_size: 16,
            cached_per_worker: 1,
        };
        // 32 shards on 2 workers: 16 each, the pool's limit, one kept: 30 new per COPY.
        assert_eq!(new_per_copy(32, 2, d), 30);
        // One connection per worker, kept: none new.
        let one = CitusConnections {
            pool_size: 1,
            cached_per_worker: 1,
        };
        assert_eq!(new_per_copy(32, 2, one), 0);
        // Enough kept: none new.
        let kept = CitusConnections {
            pool_size: 16,
            cached_per_worker: 16,
        };
        assert_eq!(new_per_copy(32, 2, kept), 0);
        // 8 shards on 4 workers: 2 each, one kept.
        assert_eq!(new_per_copy(8, 4, d), 4);
        assert!(
            preflight_note(&[(256, 160)], 32, 2).unwrap().contains(
                "each of the run's up to 160 COPY statements sets up about 30 connections"
            )
        );
        // Batches large enough that every shard gets 1000 rows: no note.
        assert_eq!(preflight_note(&[(32_000, 4)], 32, 2), None);
    }
}
