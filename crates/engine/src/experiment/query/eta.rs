//! How long a query run will take, by the pace of past runs of the same statements (the
//! lab's `eta`).

use crate::experiment::ReportBody;
use crate::experiment::RunReport;
use crate::experiment::lab::eta::{Eta, ranged};

use super::QuerySpec;

/// Past runs of the same statements (or script) in the same mode: the seconds per timed
/// trial, and the rest of the run (setup, plans, warm-ups, restarts) per combination, the
/// DBA's own statements having no pace but their own. One pace per trial, setup included, put
/// a 12-trial run at 1.6 times its time after a 5-trial one.
pub(super) fn by_pace(s: &QuerySpec, recent: &[&RunReport]) -> Option<Eta> {
    let digest = super::statements_digest(s);
    let combos = s.combo_count().max(1) as f64;
    let times: Vec<f64> = recent
        .iter()
        .filter_map(|r| match &r.body {
            ReportBody::Query(b) => Some((*r, b)),
            _ => None,
        })
        .filter(|(_, b)| b.statements_digest == digest && b.params.throughput() == s.throughput())
        .filter(|(_, b)| !b.trials.is_empty())
        .map(|(r, b)| {
            // A statement trial's seconds are per execution, of a batch of them.
            let timed: f64 = b
                .trials
                .iter()
                .map(|t| t.seconds * t.executions.max(1) as f64)
                .sum();
            let per_trial = timed / b.trials.len() as f64;
            let past_combos = b.combos.len().max(1) as f64;
            let rest = (r.seconds() - timed).max(0.0) / past_combos;
            per_trial * s.trials() as f64 + rest * combos
        })
        .collect();
    ranged(&times, 1.0, "query")
}
