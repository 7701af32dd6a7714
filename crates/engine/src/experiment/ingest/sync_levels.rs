//! An ingest run across `synchronous_commit` levels: per level, the commit latency
//! percentiles (median of the trials' p50, with its interval, then p99, p99.9 and max), the
//! seconds without a commit, the slowest second, and the standby's lag after the load — and
//! what durability each level buys, stated beside its cost so that no trade is silent.
//!
//! With method `insert` a batch is one row and its commit, so the batch latency is the commit
//! latency.

use super::report::IngestTrial;
use crate::experiment::lab::commit_cost::{LevelRow, LevelTrial, LevelWords, level_findings};

/// One finding per configuration (method, batch, clients, settings) run at two levels or
/// more, then what each level buys.
pub(crate) fn findings(trials: &[IngestTrial], confidence: f64) -> Vec<String> {
    let rows: Vec<LevelRow> = trials
        .iter()
        .map(|t| LevelRow {
            subject: t.subject(),
            settings: t.settings_label(),
            level: t.synchronous_commit,
            trial: LevelTrial {
                latency: t.latency_ms,
                stall_seconds: t.stall_seconds,
                worst_second: t.worst_second,
                replicas: &t.replicas,
            },
        })
        .collect();
    let words = LevelWords {
        what: "commit latency",
        unit: "rows/s",
        per: "trial",
    };
    level_findings(&rows, words, confidence)
}
