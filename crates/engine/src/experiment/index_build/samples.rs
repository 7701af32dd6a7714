//! An index-build run's settings and the seconds of every timed build at each (the lab's
//! `samples`).

use std::collections::BTreeMap;

use super::IndexBuildReport;
use crate::experiment::lab::samples::{BUILD_SECONDS, Sample, shown, with_settings};

/// An index-build setting in sort order: the order's rank in the spec, its name, workers,
/// maintenance_work_mem in bytes, the swept server settings as SHOW reported them.
type BuildSetting = (usize, String, u32, u64, String);

pub(super) fn samples(b: &IndexBuildReport) -> Vec<Sample> {
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
