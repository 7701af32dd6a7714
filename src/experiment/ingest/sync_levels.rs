//! An ingest run across `synchronous_commit` levels: per level, the commit latency
//! percentiles (median of the trials' p50, with its interval, then p99, p99.9 and max), the
//! seconds without a commit, the slowest second, and the standby's lag after the load — and
//! what durability each level buys, stated beside its cost so that no trade is silent.
//!
//! With method `insert` a batch is one row and its commit, so the batch latency is the commit
//! latency.

use super::kinds::SyncCommit;
use super::report::IngestTrial;
use crate::measure::interval::estimate;

/// What a commit at `level` survives once it has returned, with a synchronous standby
/// (`synchronous_standby_names` naming a connected one) or without.
pub fn durability(level: SyncCommit, sync_standby: bool) -> &'static str {
    match (level, sync_standby) {
        (SyncCommit::Off, _) => {
            "off: returns before its WAL is on disk; a crash of the primary loses the last commits (up to 3 × wal_writer_delay, 600 ms by default), without corruption"
        }
        (SyncCommit::Local, _) => {
            "local: on the primary's disk; survives a crash of the primary, not the loss of its disk or a failover to a standby that had not received it"
        }
        (_, false) => {
            "on, remote_write, remote_apply without a synchronous standby: the same as local (on the primary's disk only)"
        }
        (SyncCommit::RemoteWrite, true) => {
            "remote_write: also written (not flushed) by the synchronous standby; survives losing the primary, not losing the primary together with a crash of the standby's OS"
        }
        (SyncCommit::On, true) => {
            "on: also flushed to the synchronous standby's disk; survives losing the primary, even with a crash of the standby"
        }
        (SyncCommit::RemoteApply, true) => {
            "remote_apply: also applied on the synchronous standby: a read there sees it (read-your-writes on the standby), with on's durability"
        }
    }
}

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
        sync_standby |= of.iter().any(|t| {
            t.replicas
                .iter()
                .any(|r| r.sync_state == "sync" || r.sync_state == "quorum")
        });
        let parts: Vec<String> = levels
            .iter()
            .filter_map(|l| level_part(&of, *l, confidence))
            .collect();
        for l in &levels {
            if !levels_seen.contains(l) {
                levels_seen.push(*l);
            }
        }
        let settings = of[0].settings_label();
        out.push(format!(
            "{} batch {} ×{}{}{settings}: commit latency by synchronous_commit (p50 median [interval] of the trials; p99 / p99.9 / max the worst trial's): {}",
            k.0.as_str(),
            k.1,
            k.2,
            if settings.is_empty() { "" } else { " " },
            parts.join("; ")
        ));
    }
    if !out.is_empty() {
        levels_seen.sort_by_key(|l| SyncCommit::ALL.iter().position(|a| a == l));
        let mut buys: Vec<&str> = levels_seen
            .iter()
            .map(|l| durability(*l, sync_standby))
            .collect();
        buys.dedup();
        out.push(format!("what each level buys: {}", buys.join("; ")));
    }
    out
}

/// "on p50 2.31 ms [2.28 … 2.40], p99 3.1, p99.9 4.0, max 6.2 ms, 0 stall s, worst second
/// 410 rows/s, lag replay 0.4 ms".
fn level_part(of: &[&IngestTrial], level: SyncCommit, confidence: f64) -> Option<String> {
    let ts: Vec<&&IngestTrial> = of
        .iter()
        .filter(|t| t.synchronous_commit == level)
        .collect();
    let p50 = estimate(
        &ts.iter().map(|t| t.latency_ms.p50).collect::<Vec<_>>(),
        confidence,
    )?;
    let worst = |f: fn(&IngestTrial) -> f64| ts.iter().map(|t| f(t)).fold(0.0, f64::max);
    let stalls: u32 = ts.iter().map(|t| t.stall_seconds).sum();
    let slowest = ts
        .iter()
        .filter_map(|t| t.worst_second)
        .reduce(f64::min)
        .map(|w| format!(", slowest second {w:.0} rows/s"))
        .unwrap_or_default();
    let lag = ts
        .iter()
        .flat_map(|t| t.replicas.iter())
        .filter_map(|r| r.replay_lag_ms)
        .reduce(f64::max)
        .map(|l| format!(", standby replay lag up to {l:.1} ms"))
        .unwrap_or_default();
    Some(format!(
        "{} p50 {:.2} ms [{:.2} … {:.2}], p99 {:.2}, p99.9 {:.2}, max {:.2} ms, {stalls} stall s{slowest}{lag}",
        level.as_str(),
        p50.median,
        p50.ci_low,
        p50.ci_high,
        worst(|t| t.latency_ms.p99),
        worst(|t| t.latency_ms.p999),
        worst(|t| t.latency_ms.max),
    ))
}
