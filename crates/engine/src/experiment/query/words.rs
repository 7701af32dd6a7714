//! How a statement's plans differ across the combinations, said in words: the plan changes
//! ("from random_page_cost=4 on, Seq Scan on t replaces Index Scan using t_v_idx on t"), the
//! spill per combination and the nodes that spilled, JIT's time, what a hypothetical index
//! does to the planner's estimate, and which nodes of a plan are not in every combination's.

use std::collections::BTreeSet;

use super::plan::only_in;
use super::report::{ComboPlan, QueryReport};
use super::summary::format_time;
use crate::measure::units::format_bytes;

/// "A, B and C".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The plans of statement `s`, in combination order.
pub(crate) fn plans_of(report: &QueryReport, s: usize) -> Vec<&ComboPlan> {
    let mut v: Vec<&ComboPlan> = report.plans.iter().filter(|p| p.statement == s).collect();
    v.sort_by_key(|p| p.combo);
    v
}

/// The node keys of statement `s` that are not in every combination's plan: what the plan
/// view and the report mark as changed.
pub fn changed_keys(report: &QueryReport, s: usize) -> BTreeSet<String> {
    let plans = plans_of(report, s);
    let mut all: BTreeSet<String> = BTreeSet::new();
    for p in &plans {
        all.extend(p.facts.lines.iter().map(|l| l.key.clone()));
    }
    all.into_iter()
        .filter(|k| {
            !plans
                .iter()
                .all(|p| p.facts.lines.iter().any(|l| &l.key == k))
        })
        .collect()
}

/// Combination labels `a..b` of a run of combinations.
fn span(report: &QueryReport, run: &[&ComboPlan]) -> String {
    match run {
        [] => String::new(),
        [one] => report.combo_label(one.combo),
        [first, .., last] => format!(
            "{}..{}",
            report.combo_label(first.combo),
            report.combo_label(last.combo)
        ),
    }
}

/// How statement `s`'s plan changes across the combinations, in words (None: one plan).
pub(crate) fn plan_change(report: &QueryReport, s: usize, name: &str) -> Option<String> {
    let plans = plans_of(report, s);
    let mut runs: Vec<Vec<&ComboPlan>> = Vec::new();
    for p in plans {
        match runs.last_mut() {
            Some(r) if r[0].facts.fingerprint == p.facts.fingerprint => r.push(p),
            _ => runs.push(vec![p]),
        }
    }
    if runs.len() < 2 {
        return None;
    }
    let mut parts = Vec::new();
    for k in 1..runs.len() {
        let (prev, cur) = (&runs[k - 1][0].facts.lines, &runs[k][0].facts.lines);
        let added: Vec<&str> = only_in(cur, prev);
        let removed: Vec<&str> = only_in(prev, cur);
        let what = match (added.is_empty(), removed.is_empty()) {
            (false, false) => format!("{} replaces {}", added.join(" + "), removed.join(" + ")),
            (false, true) => format!("{} is added", added.join(" + ")),
            (true, false) => format!("{} is gone", removed.join(" + ")),
            (true, true) => "the join order changes".to_string(),
        };
        let estimate = if runs[k][0].estimate_only {
            " (planner estimate, not measured)"
        } else {
            ""
        };
        let at = if k + 1 == runs.len() && runs.len() == 2 {
            format!("from {} on", report.combo_label(runs[k][0].combo))
        } else {
            format!("at {}", span(report, &runs[k]))
        };
        parts.push(format!("{at}, {what}{estimate}"));
    }
    Some(format!(
        "{name}: the plan changes — {}; at {} it is {}",
        parts.join("; "),
        span(report, &runs[0]),
        runs[0][0].facts.fingerprint
    ))
}

/// Statement `s`'s spill per combination, in words (None: no plan spilled).
pub(crate) fn spill(report: &QueryReport, s: usize, name: &str) -> Option<String> {
    let plans: Vec<&ComboPlan> = plans_of(report, s)
        .into_iter()
        .filter(|p| !p.estimate_only)
        .collect();
    if plans.iter().all(|p| p.facts.temp_bytes == 0) {
        return None;
    }
    let mut spilled = Vec::new();
    let mut dry: Vec<&ComboPlan> = Vec::new();
    for p in &plans {
        if p.facts.temp_bytes > 0 {
            let nodes = if p.facts.spilled_nodes.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.facts.spilled_nodes.join(", "))
            };
            spilled.push(format!(
                "{} at {}{nodes}",
                format_bytes(p.facts.temp_bytes),
                report.combo_label(p.combo)
            ));
        } else {
            dry.push(p);
        }
    }
    let none = if dry.is_empty() {
        String::new()
    } else {
        let labels: Vec<String> = dry.iter().map(|p| report.combo_label(p.combo)).collect();
        format!("; no spill at {}", and_list(&labels))
    };
    Some(format!("{name}: spills {}{none}", spilled.join(", ")))
}

/// JIT time per combination, when some plan used JIT.
pub(crate) fn jit(report: &QueryReport, s: usize, name: &str) -> Option<String> {
    let plans = plans_of(report, s);
    if plans.iter().all(|p| p.facts.jit_ms.is_none()) {
        return None;
    }
    let each: Vec<String> = plans
        .iter()
        .filter(|p| !p.estimate_only)
        .map(|p| match p.facts.jit_ms {
            Some(ms) => format!(
                "{} at {}",
                format_time(ms / 1000.0),
                report.combo_label(p.combo)
            ),
            None => format!("none at {}", report.combo_label(p.combo)),
        })
        .collect();
    Some(format!("{name}: JIT took {}", each.join(", ")))
}

/// What a hypothetical index does to the planner's estimate of statement `s`, its plan named
/// by its real nodes (see [`super::estimate`]).
pub(crate) fn estimates(report: &QueryReport, s: usize, _name: &str) -> Vec<String> {
    super::estimate::of_statement(report, s)
        .iter()
        .map(super::estimate::Estimate::sentence)
        .collect()
}
