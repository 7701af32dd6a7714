//! A sweep of settings that only the planner reads (`random_page_cost`, `enable_*`, …) in
//! which a statement got the same plan at every value: the settings cannot have changed how
//! it ran, so its time differences are noise and more trials would not tell the values
//! apart. Said instead of "too few trials", with the plan named.

use super::QueryReport;
use super::words::plans_of;

/// Settings the executor never reads: they can change a statement's time only by changing
/// its plan.
const PLANNER_ONLY: [&str; 16] = [
    "random_page_cost",
    "seq_page_cost",
    "cpu_tuple_cost",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "effective_cache_size",
    "min_parallel_table_scan_size",
    "min_parallel_index_scan_size",
    "from_collapse_limit",
    "join_collapse_limit",
    "geqo_threshold",
    "cursor_tuple_fraction",
    "constraint_exclusion",
    "plan_cache_mode",
];

fn planner_only(name: &str) -> bool {
    PLANNER_ONLY.contains(&name) || name.starts_with("enable_")
}

/// The sentence for statement `s` when every combination swept only planner settings and
/// measured the same plan (None otherwise: a candidate index, an executor setting, a plan
/// that changes, or too few plans to say).
pub(crate) fn same_plan(report: &QueryReport, s: usize, name: &str) -> Option<String> {
    if report.combos.len() < 2 || report.combos.iter().any(|c| c.index_value != 0) {
        return None;
    }
    let swept: Vec<&str> = report.combos[0]
        .settings
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    if swept.is_empty() || !swept.iter().all(|n| planner_only(n)) {
        return None;
    }
    let plans = plans_of(report, s);
    let measured: Vec<_> = plans.iter().filter(|p| !p.estimate_only).collect();
    if measured.len() != report.combos.len() {
        return None;
    }
    let first = &measured[0].facts.fingerprint;
    measured
        .iter()
        .all(|p| &p.facts.fingerprint == first)
        .then(|| {
            format!(
                "{name}: the same plan at every value of {} ({first}): these settings are read by the planner only, so they did not change how it ran here and its time differences are noise — more trials would not tell the values apart (the plan: e)",
                swept.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_planner_settings_qualify() {
        assert!(planner_only("random_page_cost") && planner_only("enable_seqscan"));
        assert!(!planner_only("work_mem") && !planner_only("shared_buffers"));
    }
}
