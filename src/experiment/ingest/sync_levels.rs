//! An ingest run across `synchronous_commit` levels: per level, the commit latency
//! percentiles (median of the trials' p50, with its interval, then p99, p99.9 and max), the
//! seconds without a commit, the slowest second, and the standby's lag after the load — and
//! what durability each level buys, stated beside its cost so that no trade is silent.
//!
//! With method `insert` a batch is one row and its commit, so the batch latency is the commit
//! latency.

use super::kinds::SyncCommit;
use super::report::IngestTrial;
use crate::experiment::lab::commit_cost::{LevelTrial, buys, by_level, level_line, synchronous};

/// Trials of one configuration but the level: same method, batch, clients, settings.
fn key(t: &IngestTrial) -> (super::kinds::Method, u64, u32, usize) {
    (t.method, t.batch, t.clients, t.combo)
}

/// One finding per configuration run at two levels or more, then what each level buys.
pub fn findings(trials: &[IngestTrial], confidence: f64) -> Vec<String> {
    let mut keys = Vec::new();
    for t in trials {
        if !keys.contains(&key(t)) {
            keys.push(key(t));
        }
    }
    let mut out = Vec::new();
    let mut levels_seen: Vec<SyncCommit> = Vec::new();
    let mut sync_standby = false;
    for k in keys {
        let of: Vec<&IngestTrial> = trials.iter().filter(|t| key(t) == k).collect();
        let mut levels: Vec<SyncCommit> = Vec::new();
        for t in &of {
            if !levels.contains(&t.synchronous_commit) {
                levels.push(t.synchronous_commit);
            }
        }
        if levels.len() < 2 {
            continue;
        }
        sync_standby |= of.iter().any(|t| synchronous(&t.replicas));
        let parts: Vec<String> = levels
            .iter()
            .filter_map(|l| {
                let ts: Vec<LevelTrial> = of
                    .iter()
                    .filter(|t| t.synchronous_commit == *l)
                    .map(|t| LevelTrial {
                        latency: t.latency_ms,
                        stall_seconds: t.stall_seconds,
                        worst_second: t.worst_second,
                        replicas: &t.replicas,
                    })
                    .collect();
                level_line(*l, &ts, "rows/s", confidence)
            })
            .collect();
        for l in &levels {
            if !levels_seen.contains(l) {
                levels_seen.push(*l);
            }
        }
        let settings = of[0].settings_label();
        out.push(by_level(
            &of[0].subject(),
            &settings,
            "commit latency",
            &parts,
        ));
    }
    if !out.is_empty() {
        out.push(buys(levels_seen, sync_standby));
    }
    out
}
