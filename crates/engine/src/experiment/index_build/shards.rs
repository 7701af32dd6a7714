//! index-build on a Citus distributed dataset: `CREATE INDEX` runs on the coordinator and
//! builds one index per shard on the workers. The knobs reach those builds through `SET
//! LOCAL` in the build's transaction with `citus.propagate_set_commands = 'local'`; progress,
//! temp files and parallel workers are read on the workers themselves, over sessions pglab
//! opens with the target's credentials (none where a worker cannot be reached: the run then
//! shows a spinner).

use tokio_postgres::Client;

/// The builder session's setting that makes `SET LOCAL` reach the workers.
pub(crate) const PROPAGATE: (&str, &str) = ("citus.propagate_set_commands", "local");

/// The statements that open the build's transaction, each sent on its own: Citus replays a
/// `SET LOCAL` by its query text, so it must not share a query string with anything else —
/// and it must be a `SET LOCAL` statement (a `set_config` call is not propagated), so these
/// two stay SQL text; their values are numbers pglab formats itself.
pub(crate) fn begin_sql(mwm_kb: &str, workers: u32) -> [String; 3] {
    [
        "BEGIN".into(),
        format!("SET LOCAL maintenance_work_mem = '{mwm_kb}'"),
        format!("SET LOCAL max_parallel_maintenance_workers = {workers}"),
    ]
}

/// One reading of the shard builds on every reachable worker.
pub(crate) struct ShardProgress {
    /// "shards: 2 building index: scanning table, 1 building index: loading tuples in tree".
    pub phase: String,
    /// Parallel workers seen at once under a shard build's leader.
    pub workers: u32,
}

/// What the workers' `pg_stat_progress_create_index` say now (None: no build visible).
pub(crate) async fn poll(workers: &[Client]) -> Option<ShardProgress> {
    let mut phases: std::collections::BTreeMap<String, u32> = Default::default();
    let mut parallel = 0u32;
    for w in workers {
        let Ok(rows) = w
            .query(
                "SELECT p.phase, (SELECT count(*) FROM pg_stat_activity a WHERE a.leader_pid = p.pid)::int
                   FROM pg_stat_progress_create_index p WHERE p.datname = current_database()",
                &[],
            )
            .await
        else {
            continue;
        };
        for r in rows {
            *phases.entry(r.get::<_, String>(0)).or_default() += 1;
            parallel = parallel.max(r.get::<_, i32>(1).max(0) as u32);
        }
    }
    if phases.is_empty() {
        return None;
    }
    let parts: Vec<String> = phases.iter().map(|(p, n)| format!("{n} {p}")).collect();
    Some(ShardProgress {
        phase: format!("shards: {}", parts.join(", ")),
        workers: parallel,
    })
}

/// `pg_stat_database.temp_bytes` summed over the workers (None: a worker could not say).
pub(crate) async fn temp_bytes(workers: &[Client]) -> Option<i64> {
    let mut sum = 0i64;
    for w in workers {
        let _ = w.batch_execute("SELECT pg_stat_clear_snapshot()").await;
        sum += w
            .query_one(
                "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()",
                &[],
            )
            .await
            .ok()?
            .get::<_, i64>(0);
    }
    Some(sum)
}

/// `CHECKPOINT` on every worker, so dirty shard pages are not written during the build.
/// Returns false when a worker refused (a role without the right there).
pub(crate) async fn checkpoint(workers: &[Client]) -> bool {
    let mut all = true;
    for w in workers {
        all &= w.batch_execute("CHECKPOINT").await.is_ok();
    }
    all
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_knobs_travel_inside_the_transaction() {
        let s = super::begin_sql("65536kB", 2);
        assert_eq!(s[1], "SET LOCAL maintenance_work_mem = '65536kB'");
        assert!(s.iter().all(|q| !q.contains(';')));
    }
}
