//! The settings of each experiment and the raw trial values measured at each, read from the
//! stored trial records (never from a run's summary, whose shape may change): what a
//! comparison matches across two runs.
//!
//! - index-build: per (order, workers, maintenance_work_mem), the seconds of every timed
//!   build (warm-ups left out); lower is better.
//! - ingest: per configuration (method, batch, clients, synchronous_commit), the rows/s of
//!   every trial at it, however many repeats there were; higher is better.
//! - growth: per (design, step) the seconds of each write of one version, and of each read
//!   of one version; lower is better. Projected steps are not measurements and are left out.
//!   Records from before reads were kept one by one have only their median: one trial.

use std::collections::BTreeMap;

use crate::experiment::growth::GrowthReport;
use crate::experiment::index_build::IndexBuildReport;
use crate::experiment::ingest::IngestReport;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::verdict::Better;

/// What is measured at a setting, and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// e.g. "seconds", "rows/s", "write seconds".
    pub name: &'static str,
    pub better: Better,
}

pub const BUILD_SECONDS: Metric = Metric {
    name: "seconds",
    better: Better::Lower,
};
pub const ROWS_PER_S: Metric = Metric {
    name: "rows/s",
    better: Better::Higher,
};
pub const WRITE_SECONDS: Metric = Metric {
    name: "write seconds",
    better: Better::Lower,
};
pub const READ_SECONDS: Metric = Metric {
    name: "read seconds",
    better: Better::Lower,
};

/// The trial values of one setting in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Matches the same setting in the other run (units normalised: 1GB = 1024MB).
    pub key: String,
    /// For people: "random · 0 workers · 16MB".
    pub label: String,
    pub metric: Metric,
    pub values: Vec<f64>,
}

/// Every setting of a run with its trial values, in a stable order (the order of the
/// setting's dimensions, not the order the trials ran in).
pub fn samples(report: &RunReport) -> Vec<Sample> {
    match &report.body {
        ReportBody::IndexBuild(b) => index_build(b),
        ReportBody::Ingest(b) => ingest(b),
        ReportBody::Growth(b) => growth(b),
        ReportBody::Query(b) => query(b),
    }
}

pub const TPS: Metric = Metric {
    name: "transactions/s",
    better: Better::Higher,
};

/// query: per (statement or client count, combination) the seconds of every timed
/// execution, or the transactions/s of every throughput trial. A combination is its label
/// (the swept settings as listed, the candidate index by its text).
fn query(b: &crate::experiment::query::QueryReport) -> Vec<Sample> {
    let metric = if b.params.throughput() {
        TPS
    } else {
        BUILD_SECONDS
    };
    let mut out = Vec::new();
    for (u, unit) in b.unit_names().iter().enumerate() {
        for c in &b.combos {
            let values = b.values(u, c.combo);
            if values.is_empty() {
                continue;
            }
            let index = match c.index_value {
                0 => String::new(),
                v => b.params.index.get(v - 1).cloned().unwrap_or_default(),
            };
            let set = crate::experiment::lab::whatif::combo_label(&c.settings);
            out.push(Sample {
                key: format!("{unit}|{set}|{index}"),
                label: format!("{unit} · {}", c.label),
                metric,
                values,
            });
        }
    }
    out
}

/// An index-build setting in sort order: the order's rank in the spec, its name, workers,
/// maintenance_work_mem in bytes, the swept server settings as SHOW reported them.
type BuildSetting = (usize, String, u32, u64, String);

/// Swept server settings (`--set`) as part of a setting's key and label: trials under other
/// server settings are other settings, never pooled.
fn shown(settings: &BTreeMap<String, String>) -> String {
    settings
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn with_settings(label: String, settings: &str) -> String {
    if settings.is_empty() {
        label
    } else {
        format!("{label} · {settings}")
    }
}

fn index_build(b: &IndexBuildReport) -> Vec<Sample> {
    // setting → (label, seconds).
    let mut by: BTreeMap<BuildSetting, (String, Vec<f64>)> = BTreeMap::new();
    for t in b.trials.iter().filter(|t| !t.warmup) {
        let rank = b
            .params
            .orders
            .iter()
            .position(|o| *o == t.order)
            .unwrap_or(usize::MAX);
        let set = shown(&t.settings);
        let label = with_settings(
            format!(
                "{} · {} workers · {}",
                t.order.name(),
                t.workers_requested,
                t.maintenance_work_mem
            ),
            &set,
        );
        by.entry((
            rank,
            t.order.name(),
            t.workers_requested,
            t.maintenance_work_mem_bytes,
            set,
        ))
        .or_insert_with(|| (label, Vec::new()))
        .1
        .push(t.seconds);
    }
    by.into_iter()
        .map(
            |((_, order, workers, bytes, set), (label, values))| Sample {
                key: if set.is_empty() {
                    format!("{order}|{workers}|{bytes}")
                } else {
                    format!("{order}|{workers}|{bytes}|{set}")
                },
                label,
                metric: BUILD_SECONDS,
                values,
            },
        )
        .collect()
}

fn ingest(b: &IngestReport) -> Vec<Sample> {
    let mut by: BTreeMap<_, Vec<f64>> = BTreeMap::new();
    for t in &b.trials {
        by.entry((
            t.method,
            t.batch,
            t.clients,
            t.synchronous_commit,
            shown(&t.settings),
        ))
        .or_default()
        .push(t.rows_per_s);
    }
    by.into_iter()
        .map(|((method, batch, clients, sync, set), values)| Sample {
            key: if set.is_empty() {
                format!("{}|{batch}|{clients}|{}", method.as_str(), sync.as_str())
            } else {
                format!(
                    "{}|{batch}|{clients}|{}|{set}",
                    method.as_str(),
                    sync.as_str()
                )
            },
            label: with_settings(
                format!(
                    "{} · batch {batch} · {clients} client{} · sync {}",
                    method.as_str(),
                    if clients == 1 { "" } else { "s" },
                    sync.as_str()
                ),
                &set,
            ),
            metric: ROWS_PER_S,
            values,
        })
        .collect()
}

fn growth(b: &GrowthReport) -> Vec<Sample> {
    let mut steps: Vec<_> = b.steps.iter().filter(|s| !s.projected).collect();
    steps.sort_by_key(|s| (s.design, s.versions, s.combo));
    let mut out = Vec::new();
    for s in steps {
        let set = shown(&s.settings);
        let at = with_settings(
            format!("{} · {} versions", s.design.as_str(), s.versions),
            &set,
        );
        let each = |all: &Vec<f64>, median: Option<f64>| -> Vec<f64> {
            if all.is_empty() {
                median.into_iter().collect()
            } else {
                all.clone()
            }
        };
        let writes = each(&s.write_repeats, s.write_seconds);
        let reads = each(&s.read_repeats, s.read_seconds);
        let key = if set.is_empty() {
            format!("{}|{}", s.design.as_str(), s.versions)
        } else {
            format!("{}|{}|{set}", s.design.as_str(), s.versions)
        };
        for (metric, values) in [(WRITE_SECONDS, writes), (READ_SECONDS, reads)] {
            if values.is_empty() {
                continue;
            }
            out.push(Sample {
                key: format!("{key}|{}", metric.name),
                label: format!("{at} · {}", metric.name.trim_end_matches(" seconds")),
                metric,
                values,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index_build::Order;

    #[test]
    fn trials_under_other_server_settings_are_other_settings() {
        let mut r = crate::report::example::index_build(
            "r1",
            1000,
            &[(Order::Random, 0, "64MB", &[1.0, 1.1, 1.2, 1.3])],
        );
        let ReportBody::IndexBuild(b) = &mut r.body else {
            unreachable!()
        };
        // Two of the four builds ran with another shared_buffers (a what-if sweep).
        for (i, t) in b.trials.iter_mut().enumerate() {
            let sb = if i % 2 == 0 { "128MB" } else { "256MB" };
            t.settings.insert("shared_buffers".into(), sb.into());
        }
        let s = samples(&r);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s.iter().all(|x| x.values.len() == 2));
        assert!(
            s[0].label.ends_with("· shared_buffers=128MB"),
            "{}",
            s[0].label
        );
        assert_ne!(s[0].key, s[1].key);
    }
}
