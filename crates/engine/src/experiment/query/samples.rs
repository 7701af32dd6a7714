//! A query run's units and combinations with their timed values (the lab's `samples`).

use super::QueryReport;
use crate::experiment::lab::samples::{BUILD_SECONDS, Sample, TPS};

/// query: per (statement or client count, combination) the seconds of every timed
/// execution, or the transactions/s of every throughput trial. A combination is its label
/// (the swept settings as listed, the candidate index by its text).
pub(super) fn samples(b: &QueryReport) -> Vec<Sample> {
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
