//! What an ingest run that sweeps server settings (`--set`) states besides its verdicts: the
//! WAL each row cost and the checkpoints inside the load, per settings combination. These are
//! near-deterministic counts, stated with their range, not compared.

use super::kinds::{Method, SyncCommit};
use super::report::IngestTrial;
use crate::measure::units::format_change;

/// With swept server settings: the WAL each row cost under each combination, per
/// configuration (medians; WAL volume is near-deterministic for the same rows, so the figures
/// are stated, not tested).
pub(crate) fn wal_by_settings(trials: &[IngestTrial], labels: &[String]) -> Vec<String> {
    let mut keys: Vec<(Method, u64, u32, SyncCommit)> = Vec::new();
    for t in trials {
        let k = (t.method, t.batch, t.clients, t.synchronous_commit);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (method, batch, clients, sync) in keys {
        let mut parts = Vec::new();
        let mut first: Option<f64> = None;
        for (i, label) in labels.iter().enumerate() {
            let v: Vec<f64> = trials
                .iter()
                .filter(|t| {
                    t.combo == i
                        && t.method == method
                        && t.batch == batch
                        && t.clients == clients
                        && t.synchronous_commit == sync
                })
                .map(|t| t.wal_bytes_per_row)
                .collect();
            let Some(m) = crate::measure::stats::median(&v) else {
                continue;
            };
            let (lo, hi) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                    (l.min(*x), h.max(*x))
                });
            let range = if (hi - lo) < 0.5 {
                String::new()
            } else {
                format!(" [{lo:.0}–{hi:.0}]")
            };
            let vs = match first {
                Some(f) if f > 0.0 => format!(", {}", format_change(m / f)),
                _ => String::new(),
            };
            first.get_or_insert(m);
            parts.push(format!("{label} {m:.0} B{range}{vs}"));
        }
        if parts.len() >= 2 {
            out.push(format!(
                "{} batch {batch} ×{clients} sync={}: WAL per row, median [min–max] of the trials and against the first setting listed: {}",
                method.as_str(),
                sync.as_str(),
                parts.join(", ")
            ));
        }
    }
    out
}

/// With swept server settings: how many checkpoints fell inside the trials of each
/// combination (a count, no verdict): what `max_wal_size` or `checkpoint_timeout` changes.
pub(crate) fn checkpoints_by_settings(trials: &[IngestTrial], labels: &[String]) -> Option<String> {
    let mut parts = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        let counts: Vec<f64> = trials
            .iter()
            .filter(|t| t.combo == i)
            .filter_map(|t| t.checkpoints_during.map(|c| c as f64))
            .collect();
        let (Some(lo), Some(hi)) = (
            counts.iter().copied().reduce(f64::min),
            counts.iter().copied().reduce(f64::max),
        ) else {
            continue;
        };
        let range = if lo == hi {
            format!("{lo:.0}")
        } else {
            format!("{lo:.0}–{hi:.0}")
        };
        parts.push(format!("{label}: {range}"));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "checkpoints during each trial (the load's own, not the one before it): {}",
            parts.join("; ")
        )
    })
}
