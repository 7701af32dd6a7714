//! An ingest run's configurations and the rows/s of every trial at each (the lab's
//! `samples`).

use std::collections::BTreeMap;

use super::IngestReport;
use crate::experiment::lab::samples::{ROWS_PER_S, Sample, shown, with_settings};

pub(super) fn samples(b: &IngestReport) -> Vec<Sample> {
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
