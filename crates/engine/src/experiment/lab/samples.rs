//! The settings of a run and the raw trial values measured at each, read from the stored
//! trial records (never from a run's summary, whose shape may change): what a comparison of
//! two runs matches (`history::compare`) and a headline reads. Each kind reads its own
//! (`KindReport::samples`, in its `samples.rs`):
//!
//! - index-build: per (order, workers, maintenance_work_mem), the seconds of every timed
//!   build (warm-ups left out); lower is better.
//! - ingest: per configuration (method, batch, clients, synchronous_commit), the rows/s of
//!   every trial at it, however many repeats there were; higher is better.
//! - growth: per (design, step) the seconds of each write of one version, and of each read
//!   of one version; lower is better. Projected steps are not measurements and are left out.
//!   Records from before reads were kept one by one have only their median: one trial.
//! - query: per (statement or client count, combination) the seconds of every timed
//!   execution, or the transactions/s of every throughput trial.

use std::collections::BTreeMap;

use crate::measure::verdict::Better;

/// What is measured at a setting, and which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// e.g. "seconds", "rows/s", "write seconds".
    pub name: &'static str,
    pub better: Better,
}

pub(crate) const BUILD_SECONDS: Metric = Metric {
    name: "seconds",
    better: Better::Lower,
};
pub(crate) const ROWS_PER_S: Metric = Metric {
    name: "rows/s",
    better: Better::Higher,
};
pub(crate) const WRITE_SECONDS: Metric = Metric {
    name: "write seconds",
    better: Better::Lower,
};
pub(crate) const READ_SECONDS: Metric = Metric {
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

pub(crate) const TPS: Metric = Metric {
    name: "transactions/s",
    better: Better::Higher,
};

/// Swept server settings (`--set`) as part of a setting's key and label: trials under other
/// server settings are other settings, never pooled.
pub(crate) fn shown(settings: &BTreeMap<String, String>) -> String {
    settings
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `label`, then the swept settings when there are any.
pub(crate) fn with_settings(label: String, settings: &str) -> String {
    if settings.is_empty() {
        label
    } else {
        format!("{label} · {settings}")
    }
}
