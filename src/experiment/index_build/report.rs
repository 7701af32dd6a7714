//! index-build results: one record per trial, the datasets they ran on, and the summary a
//! DBA reads first (best setting per order, how much slower the most generous one is).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::spec::{IndexBuildSpec, Order};
use crate::measure::stats::Summary;
use crate::measure::units::format_seconds;

/// A dataset the trials ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub table: String,
    pub order: Order,
    pub rows: u64,
    pub key_type: String,
    pub heap_bytes: i64,
    /// `pg_stats.correlation` of the key column: ≈1 sorted, ≈−1 reverse, ≈0 random.
    pub correlation: Option<f64>,
    /// True when an existing table with the same spec was reused.
    pub reused: bool,
    /// Seconds spent generating (0 when reused).
    pub generate_seconds: f64,
}

/// One timed `CREATE INDEX`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexTrial {
    pub order: Order,
    pub rows: u64,
    pub key_type: String,
    /// As given, e.g. "64MB".
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    pub workers_requested: u32,
    /// Parallel workers the server actually launched.
    pub workers_launched: u32,
    /// 1-based repeat number (0 for a warm-up).
    pub repeat: u32,
    pub warmup: bool,
    pub seconds: f64,
    /// Seconds per `pg_stat_progress_create_index` phase.
    pub phase_seconds: BTreeMap<String, f64>,
    pub index_bytes: i64,
    /// Temporary file bytes written during the build (`pg_stat_database.temp_bytes` delta).
    pub temp_bytes: i64,
    pub checkpoint: bool,
    /// How the sort went, from `trace_sort` (e.g. "external sort, 14 runs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
}

/// Per memory setting, over the repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MwmStat {
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
    /// Spread (max−min)/median above 10%.
    pub noisy: bool,
}

/// One line of the summary: an order at a worker count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub order: Order,
    pub workers: u32,
    pub by_mwm: Vec<MwmStat>,
    pub best_mwm: String,
    pub best_seconds: f64,
    pub most_generous_mwm: String,
    pub most_generous_seconds: f64,
    /// How much slower the most generous setting is than the best, in percent.
    pub most_generous_slower_pct: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexSummary {
    pub groups: Vec<GroupSummary>,
    /// Things that may have skewed the numbers.
    pub confounders: Vec<String>,
    /// One sentence per group, e.g. "random: 16MB fastest (11.6 s, median of 3); 1GB is 12% slower".
    pub findings: Vec<String>,
}

/// The index-build part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexBuildReport {
    pub params: IndexBuildSpec,
    pub datasets: Vec<DatasetInfo>,
    pub trials: Vec<IndexTrial>,
    pub summary: IndexSummary,
}

impl IndexBuildReport {
    pub fn new(spec: &IndexBuildSpec) -> Self {
        IndexBuildReport {
            params: spec.clone(),
            datasets: vec![],
            trials: vec![],
            summary: IndexSummary::default(),
        }
    }

    /// Recompute the summary from the trials so far (also for partial, cancelled runs).
    pub fn summarize(&mut self, extra_confounders: &[String]) {
        let mut groups = Vec::new();
        let mut findings = Vec::new();
        let mut confounders: Vec<String> = extra_confounders.to_vec();
        for order in &self.params.orders {
            for &workers in &self.params.workers {
                let mut by_mwm = Vec::new();
                for m in &self.params.mwm {
                    let secs: Vec<f64> = self
                        .trials
                        .iter()
                        .filter(|t| {
                            !t.warmup
                                && t.order == *order
                                && t.workers_requested == workers
                                && t.maintenance_work_mem_bytes == m.bytes
                        })
                        .map(|t| t.seconds)
                        .collect();
                    if let Some(s) = Summary::of(&secs) {
                        by_mwm.push(MwmStat {
                            maintenance_work_mem: m.text.clone(),
                            maintenance_work_mem_bytes: m.bytes,
                            median: s.median,
                            min: s.min,
                            max: s.max,
                            n: s.n,
                            noisy: s.is_noisy(),
                        });
                    }
                }
                let Some(best) = by_mwm
                    .iter()
                    .min_by(|a, b| a.median.total_cmp(&b.median))
                    .cloned()
                else {
                    continue;
                };
                let Some(generous) = by_mwm
                    .iter()
                    .max_by_key(|m| m.maintenance_work_mem_bytes)
                    .cloned()
                else {
                    continue;
                };
                let slower = if best.median > 0.0 {
                    (generous.median / best.median - 1.0) * 100.0
                } else {
                    0.0
                };
                let wtxt = if self.params.workers.len() > 1 || workers > 0 {
                    format!(" ({workers} workers)")
                } else {
                    String::new()
                };
                let mut f = format!(
                    "{}{wtxt}: {} fastest ({}, median of {})",
                    order.name(),
                    best.maintenance_work_mem,
                    format_seconds(best.median),
                    best.n
                );
                if generous.maintenance_work_mem_bytes != best.maintenance_work_mem_bytes {
                    f.push_str(&format!(
                        "; {} is {:.0}% slower",
                        generous.maintenance_work_mem, slower
                    ));
                }
                findings.push(f);
                for m in by_mwm.iter().filter(|m| m.noisy) {
                    confounders.push(format!(
                        "{}{wtxt} at {}: repeats spread {:.0}% (noisy)",
                        order.name(),
                        m.maintenance_work_mem,
                        (m.max - m.min) / m.median * 100.0
                    ));
                }
                groups.push(GroupSummary {
                    order: *order,
                    workers,
                    best_mwm: best.maintenance_work_mem.clone(),
                    best_seconds: best.median,
                    most_generous_mwm: generous.maintenance_work_mem.clone(),
                    most_generous_seconds: generous.median,
                    most_generous_slower_pct: slower,
                    by_mwm,
                });
            }
        }
        let fewer: Vec<String> = self
            .trials
            .iter()
            .filter(|t| t.workers_launched < t.workers_requested)
            .map(|t| {
                format!(
                    "{} workers at {}",
                    t.workers_requested, t.maintenance_work_mem
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !fewer.is_empty() {
            confounders.push(format!(
                "fewer parallel workers launched than asked for: {} (the server sizes the worker count from the table's size, gives each participant at least 32MB of maintenance_work_mem, and launches fewer when worker slots are busy)",
                fewer.join(", ")
            ));
        }
        confounders.dedup();
        self.summary = IndexSummary {
            groups,
            confounders,
            findings,
        };
    }
}
