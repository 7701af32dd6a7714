//! What a tune optimises: one number per pass of the workload under one configuration.
//! A workload may itself run several configurations (ingest's methods × batches, index-build's
//! orders): a pass is all of them once, and its measure is
//!
//! - ingest: rows/s over the whole pass (all rows ÷ all loading seconds), higher is better;
//! - index-build: seconds of all the builds of the pass, lower is better;
//! - growth: seconds of the measured writes and reads of the pass, lower is better (the
//!   fill that grows the table between steps is preparation, not the workload);
//! - query: seconds of the timed statements of the pass, each counted as often as its
//!   `-- weight:` says (a captured workload's calls: the pass stands for production's time),
//!   lower is better; with clients or a script, transactions/s, higher is better.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::{ExperimentSpec, ReportBody, RunReport};
use crate::measure::verdict::Better;

/// The measure a tune compares configurations by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Objective {
    pub better: Better,
    /// The unit a value is in: `rows/s` or `s`.
    pub unit: &'static str,
    /// What one value is, in words.
    pub what: &'static str,
}

impl Objective {
    /// The objective of a workload: its experiment's measure (a query workload in throughput
    /// mode — clients, or a script — counts transactions/s).
    pub fn of(spec: &ExperimentSpec) -> Objective {
        let m = spec.pass_measure();
        Objective {
            better: m.better,
            unit: m.unit,
            what: m.what,
        }
    }

    /// A value with its unit: `12.3k rows/s`, `1.52 s`.
    pub fn format(&self, v: f64) -> String {
        match self.unit {
            "s" => crate::measure::units::format_seconds(v),
            u => format!("{} {u}", crate::measure::units::format_count(v)),
        }
    }
}

/// The pass measure of every combination of the run's settings sweep (by combination index),
/// from a run with one trial per configuration and combination.
pub(crate) fn per_combo(report: &RunReport) -> BTreeMap<usize, f64> {
    report.body.facts().per_combo()
}

/// Each statement's seconds per execution in every combination of a timed query workload
/// (by combination index; the mean when a statement ran more than once there). Empty for
/// other workloads and for throughput mode, where a trial is not one statement's.
pub(crate) fn per_statement(report: &RunReport) -> BTreeMap<usize, Vec<(String, f64)>> {
    let mut out: BTreeMap<usize, Vec<(String, f64)>> = BTreeMap::new();
    let ReportBody::Query(r) = &report.body else {
        return out;
    };
    if r.trials.iter().any(|t| t.transactions.is_some()) {
        return out;
    }
    let mut acc: BTreeMap<(usize, usize), (String, f64, u32)> = BTreeMap::new();
    for t in &r.trials {
        let e = acc
            .entry((t.combo, t.statement))
            .or_insert_with(|| (t.name.clone(), 0.0, 0));
        e.1 += t.seconds;
        e.2 += 1;
    }
    for ((combo, _), (name, secs, n)) in acc {
        out.entry(combo).or_default().push((name, secs / n as f64));
    }
    out
}

/// Seconds of the run's own timed trials (warm-ups and projected steps aside): the work the
/// budget's pace counts per pass, apart from settings, restarts and preparation.
pub(crate) fn work_seconds(report: &RunReport) -> f64 {
    report.body.facts().work_seconds()
}

/// Trials (timed configurations) the run holds: what the budget's pace is counted in.
pub(crate) fn trial_count(report: &RunReport) -> usize {
    report.body.facts().trial_count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::QueryTrial;

    fn query(pairs: &[(&str, &str)]) -> ExperimentSpec {
        ExperimentSpec::Query(Box::new(crate::experiment::query::test_spec(pairs)))
    }

    /// A query's pass is every statement once: its seconds summed per combination (lower is
    /// better); with clients or a script, transactions over seconds (higher is better).
    #[test]
    fn a_query_pass_is_its_statements_or_its_transactions() {
        let timed = query(&[("sql", "SELECT 1; SELECT 2"), ("set", "work_mem=1MB,64MB")]);
        assert_eq!(Objective::of(&timed).better, Better::Lower);
        assert!(
            Objective::of(&timed).what.contains("one execution of each"),
            "{}",
            Objective::of(&timed).what
        );
        let scripted = query(&[("sql", "SELECT 1"), ("clients", "4")]);
        assert_eq!(Objective::of(&scripted).better, Better::Higher);
        assert_eq!(Objective::of(&scripted).unit, "tx/s");
        let ExperimentSpec::Query(q) = &timed else {
            unreachable!()
        };
        let mut r = crate::experiment::query::QueryReport::new(q);
        for (statement, combo, s) in [(0, 0, 1.0), (1, 0, 2.0), (0, 1, 0.5), (1, 1, 0.25)] {
            let mut t = QueryTrial::test(combo, s, 1);
            t.statement = statement;
            r.trials.push(t);
        }
        let report = crate::report::example::with_body(ReportBody::Query(Box::new(r.clone())));
        let m = per_combo(&report);
        assert_eq!((m[&0], m[&1]), (3.0, 0.75));
        // Weighted statements (a captured workload) count as often as their weight.
        let mut weighted = r.clone();
        weighted.params.statements[1].weight = Some(10);
        let report = crate::report::example::with_body(ReportBody::Query(Box::new(weighted)));
        let m = per_combo(&report);
        assert_eq!((m[&0], m[&1]), (21.0, 3.0));
        // Its objective says it is weighted, not the pass's wall clock.
        let mut w = timed.clone();
        if let ExperimentSpec::Query(q) = &mut w {
            q.statements[1].weight = Some(10);
        }
        let what = Objective::of(&w).what;
        assert!(
            what.contains("× its weight") && what.contains("not the wall clock"),
            "{what}"
        );
        assert_eq!(trial_count(&report), 4);
        assert_eq!(work_seconds(&report), 3.75);
        for t in &mut r.trials {
            t.transactions = Some(100);
        }
        let report = crate::report::example::with_body(ReportBody::Query(Box::new(r)));
        let m = per_combo(&report);
        assert!((m[&0] - 200.0 / 3.0).abs() < 1e-9, "{m:?}");
    }
}
