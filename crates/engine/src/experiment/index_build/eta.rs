//! How long an index-build run will take, by the pace of past ones (the lab's `eta`).

use crate::experiment::ReportBody;
use crate::experiment::RunReport;
use crate::experiment::lab::eta::{Eta, ranged};

use super::IndexBuildSpec;

/// Two paces of past index-build runs (the same key type first): seconds per row built,
/// over their timed builds, and the rest of the run (dataset, CHECKPOINTs, warm-ups,
/// connecting) per trial. One pace for the whole run made a small run's fixed costs scale
/// with the rows: a 100k-row run's pace put a 400k-row one at three times its time.
pub(super) fn by_pace(s: &IndexBuildSpec, recent: &[&RunReport]) -> Option<Eta> {
    let paces = |same_key: bool| -> Vec<f64> {
        recent
            .iter()
            .filter_map(|r| match &r.body {
                ReportBody::IndexBuild(b) => Some((*r, b)),
                _ => None,
            })
            .filter(|(_, b)| !same_key || b.params.key == s.key)
            .filter_map(|(r, b)| {
                let timed: Vec<&_> = b.trials.iter().filter(|t| !t.warmup).collect();
                let rows: f64 = timed.iter().map(|t| t.rows as f64).sum();
                let build: f64 = timed.iter().map(|t| t.seconds).sum();
                let per_row = (rows > 0.0).then(|| build / rows)?;
                let rest = (r.seconds() - build).max(0.0) / b.trials.len().max(1) as f64;
                let trials = s.trials() as f64;
                Some(per_row * trials * s.rows as f64 + rest * trials)
            })
            .collect()
    };
    let mut times = paces(true);
    if times.is_empty() {
        times = paces(false);
    }
    ranged(&times, 1.0, "index-build")
}
