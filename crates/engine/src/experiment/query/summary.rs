//! The query summary. Per measured unit (a statement, or a client count in throughput mode)
//! every combination that ran is one setting of a sweep, ranked cheapest first (no candidate
//! index before one, the swept settings' first values before later ones), and the statistics
//! core decides it ([`crate::measure::finding::decide`]). Beside the verdicts, in words: how
//! each statement's plan changes across the combinations, where it spills, what JIT cost, and
//! what a hypothetical index would do to the planner's estimate.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::report::{ComboInfo, QueryReport};
pub use super::words::changed_keys;
use super::words::{estimates, jit, plan_change, spill};
use crate::measure::finding::{Finding, SettingTrials, decide};
use crate::measure::stats::Summary;
use crate::measure::units::{format_rate, format_seconds};
use crate::measure::verdict::Better;

/// One measured unit's verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitSummary {
    /// The statement's name, or `N clients`.
    pub name: String,
    pub finding: Finding,
    /// The combination of each of `finding.settings`, in order.
    pub combos: Vec<usize>,
    /// Combinations left out of the verdicts because the standby cancelled every read (see
    /// [`super::all_cancelled`]): worse than every one in `combos`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub all_cancelled: Vec<usize>,
}

impl UnitSummary {
    /// The combination a label of the finding stands for.
    pub(crate) fn combo_of(&self, label: &str) -> Option<usize> {
        self.finding
            .settings
            .iter()
            .position(|s| s.label == label)
            .and_then(|i| self.combos.get(i).copied())
    }
}

/// What the query run found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuerySummary {
    pub units: Vec<UnitSummary>,
    /// Per statement: how its plan changes across the combinations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_changes: Vec<String>,
    /// Per statement: the spill per combination.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spills: Vec<String>,
    /// Every finding as a sentence: verdicts, plan changes, spills, JIT, estimates.
    pub findings: Vec<String>,
    pub confounders: Vec<String>,
}

/// A duration for findings, fine enough for fast statements: `0.412 ms`, `4.12 ms`, `1.2 s`.
pub(crate) fn format_time(secs: f64) -> String {
    if !secs.is_finite() {
        return "–".into();
    }
    if secs < 0.001 {
        format!("{:.3} ms", secs * 1000.0)
    } else if secs < 0.1 {
        format!("{:.2} ms", secs * 1000.0)
    } else {
        format_seconds(secs)
    }
}

/// Transactions per second for findings: `1.23k tps`.
pub(crate) fn format_tps(v: f64) -> String {
    format!("{} tps", format_rate(v))
}

impl QueryReport {
    /// The trials of unit `u` under combination `c` (statement mode: statement `u`;
    /// throughput: the `u`-th client count).
    pub(crate) fn values(&self, u: usize, c: usize) -> Vec<f64> {
        let counts = self.params.client_counts();
        self.trials
            .iter()
            .filter(|t| t.combo == c)
            .filter(|t| match t.clients {
                Some(n) => counts.get(u) == Some(&n),
                None => t.statement == u,
            })
            .map(|t| t.value())
            .collect()
    }

    /// Which way the measure is better.
    pub(crate) fn better(&self) -> Better {
        if self.params.throughput() {
            Better::Higher
        } else {
            Better::Lower
        }
    }

    /// Unit `u`'s sweep: every combination with trials, cheapest first, and the
    /// combinations they stand for. Combinations whose every read the standby cancelled are
    /// not in it (said apart, see [`super::all_cancelled`]).
    pub(crate) fn sweep_of(&self, u: usize) -> (Vec<SettingTrials>, Vec<usize>) {
        let mut trials = Vec::new();
        let mut combos = Vec::new();
        let cancelled: Vec<usize> = self.all_cancelled(u).iter().map(|c| c.combo).collect();
        for c in &self.combos {
            let values = self.values(u, c.combo);
            if values.is_empty() || cancelled.contains(&c.combo) {
                continue;
            }
            trials.push(SettingTrials {
                label: c.label.clone(),
                cost_rank: c.combo,
                values,
                coords: self.coords_of(c),
            });
            combos.push(c.combo);
        }
        (trials, combos)
    }

    /// Where a combination sits on the grid of the sweep: the index of each swept setting's
    /// value (in `set` order), then the candidate index (0: none) — the core's `coords`, so
    /// the recommendation names only the dimensions shown to matter.
    pub(crate) fn coords_of(&self, c: &ComboInfo) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .params
            .set
            .items
            .iter()
            .map(|item| {
                c.settings
                    .iter()
                    .find(|(n, _)| *n == item.name)
                    .and_then(|(_, v)| item.values.iter().position(|x| x == v))
                    .unwrap_or(0)
            })
            .collect();
        out.push(c.index_value);
        out
    }

    /// Throughput mode with several client counts: per combination, how transactions/s went
    /// with the clients, decided by the core (fewer clients count as cheaper).
    fn scaling(
        &self,
        rules: &crate::measure::rules::Rules,
        fmt: &dyn Fn(f64) -> String,
    ) -> Vec<String> {
        let counts = self.params.client_counts();
        if !self.params.throughput() || counts.len() < 2 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for c in &self.combos {
            let trials: Vec<SettingTrials> = counts
                .iter()
                .enumerate()
                .map(|(u, n)| SettingTrials {
                    label: super::report::clients_name(*n),
                    cost_rank: *n as usize,
                    values: self.values(u, c.combo),
                    coords: Vec::new(),
                })
                .filter(|t| !t.values.is_empty())
                .collect();
            if trials.len() < 2 {
                continue;
            }
            let f = decide(&trials, Better::Higher, rules);
            out.push(format!("{}, by clients: {}", c.label, f.sentence_with(fmt)));
        }
        out
    }

    /// Unit `u`'s verdicts, its noisy combinations, and the combinations whose every read the
    /// standby cancelled, into `s`.
    fn summarize_unit(
        &self,
        u: usize,
        name: String,
        (rules, fmt): (&crate::measure::rules::Rules, &dyn Fn(f64) -> String),
        s: &mut QuerySummary,
    ) {
        let (trials, combos) = self.sweep_of(u);
        let cancelled = self.all_cancelled(u);
        let finished: Vec<String> = trials.iter().map(|t| t.label.clone()).collect();
        let said: Vec<String> = cancelled
            .iter()
            .map(|c| self.all_cancelled_sentence(&name, c, &finished))
            .collect();
        if trials.is_empty() {
            s.findings.extend(said);
            return;
        }
        for t in &trials {
            if let Some(x) = Summary::of(&t.values).filter(|x| x.is_noisy()) {
                s.confounders.push(format!(
                    "{name} at {}: repeats spread {:.0}% (noisy)",
                    t.label,
                    x.spread() * 100.0
                ));
            }
        }
        let finding = decide(&trials, self.better(), rules);
        // One combination finished beside cancelled ones: "nothing to compare" would mislead,
        // what they say is the comparison.
        if said.is_empty() || trials.len() > 1 {
            s.findings
                .push(format!("{name}: {}", finding.sentence_with(fmt)));
        }
        s.findings.extend(said);
        s.units.push(UnitSummary {
            name,
            finding,
            combos,
            all_cancelled: cancelled.iter().map(|c| c.combo).collect(),
        });
    }

    /// Recompute the summary from what ran (also for partial, cancelled runs).
    pub(crate) fn summarize(&mut self, extra_confounders: &[String]) {
        let rules = self.params.decision.rules_for(self.params.repeat);
        let better = self.better();
        let fmt: &dyn Fn(f64) -> String = if better == Better::Higher {
            &format_tps
        } else {
            &format_time
        };
        let mut s = QuerySummary {
            confounders: extra_confounders.to_vec(),
            ..QuerySummary::default()
        };
        for (u, name) in self.unit_names().into_iter().enumerate() {
            self.summarize_unit(u, name, (&rules, fmt), &mut s);
        }
        s.findings.extend(self.scaling(&rules, fmt));
        s.findings
            .extend(super::sync_levels::findings(self, rules.confidence));
        s.findings
            .extend(super::sync_levels::fault_findings(self, rules.confidence));
        s.findings
            .extend(super::production::beside_production(self));
        for (i, name) in self.plan_names().into_iter().enumerate() {
            if let Some(p) = plan_change(self, i, &name) {
                s.plan_changes.push(p);
            }
            if let Some(p) = spill(self, i, &name) {
                s.spills.push(p);
            }
            s.findings.extend(
                s.plan_changes
                    .iter()
                    .filter(|p| p.starts_with(&format!("{name}: ")))
                    .cloned(),
            );
            s.findings.extend(
                s.spills
                    .iter()
                    .filter(|p| p.starts_with(&format!("{name}: ")))
                    .cloned(),
            );
            s.findings.extend(jit(self, i, &name));
            s.findings
                .extend(super::same_plan::same_plan(self, i, &name));
            s.findings.extend(estimates(self, i, &name));
        }
        let mut seen = BTreeSet::new();
        s.findings.retain(|f| seen.insert(f.clone()));
        let hosts: Vec<_> = self.trials.iter().filter_map(|t| t.host).collect();
        s.confounders.extend(crate::host::load::confounded(&hosts));
        let mut seen = BTreeSet::new();
        s.confounders.retain(|c| seen.insert(c.clone()));
        self.summary = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::plan::{self, DEFAULT_BLOCK};
    use crate::experiment::query::report::{ComboInfo, ComboPlan, QueryTrial};
    use crate::measure::verdict::Verdict;
    use serde_json::json;

    fn report() -> QueryReport {
        let spec = crate::experiment::query::test_spec(&[
            ("sql", "-- name: q\nSELECT a, count(*) FROM t GROUP BY a"),
            ("set", "work_mem=1MB,4MB,64MB"),
        ]);
        let mut r = QueryReport::new(&spec);
        for (c, v) in ["1MB", "4MB", "64MB"].iter().enumerate() {
            r.combos.push(ComboInfo {
                combo: c,
                label: format!("work_mem={v}"),
                index_value: 0,
                settings: vec![("work_mem".into(), v.to_string())],
            });
        }
        r
    }

    fn sorted_plan(spill_blocks: u64) -> serde_json::Value {
        json!([{"Plan": {"Node Type": "Aggregate", "Strategy": "Sorted", "Actual Total Time": 1.0,
            "Temp Written Blocks": spill_blocks,
            "Plans": [{"Node Type": "Sort", "Sort Method": "external merge", "Sort Space Type": "Disk",
                "Actual Total Time": 1.0, "Temp Written Blocks": spill_blocks,
                "Plans": [{"Node Type": "Seq Scan", "Relation Name": "t", "Actual Total Time": 1.0}]}]}}])
    }

    fn hashed_plan() -> serde_json::Value {
        json!([{"Plan": {"Node Type": "Aggregate", "Strategy": "Hashed", "Actual Total Time": 1.0,
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "t", "Actual Total Time": 1.0}]}}])
    }

    fn add_plan(r: &mut QueryReport, combo: usize, json: serde_json::Value) {
        let facts = plan::read(&json, DEFAULT_BLOCK).unwrap();
        r.plans.push(ComboPlan {
            statement: 0,
            name: "q".into(),
            combo,
            estimate_only: false,
            facts,
            plan: json,
        });
    }

    fn add_trials(r: &mut QueryReport, combo: usize, base: f64) {
        for (i, k) in [1.0, 1.01, 0.99, 1.005, 0.995].iter().enumerate() {
            let mut t = QueryTrial::test(combo, base * k, i as u32 + 1);
            t.rows = 10;
            r.trials.push(t);
        }
    }

    #[test]
    fn plan_changes_and_spills_are_said_in_words() {
        let mut r = report();
        add_plan(&mut r, 0, sorted_plan(4864));
        add_plan(&mut r, 1, sorted_plan(1000));
        add_plan(&mut r, 2, hashed_plan());
        add_trials(&mut r, 0, 2.0);
        add_trials(&mut r, 1, 1.5);
        add_trials(&mut r, 2, 1.0);
        r.summarize(&[]);
        assert_eq!(
            r.summary.plan_changes,
            [
                "q: the plan changes — from work_mem=64MB on, HashAggregate replaces GroupAggregate + Sort; at work_mem=1MB..work_mem=4MB it is GroupAggregate(Sort(Seq Scan on t))"
            ]
        );
        assert_eq!(
            r.summary.spills,
            [
                "q: spills 38 MB at work_mem=1MB (Sort (external merge)), 8000 kB at work_mem=4MB (Sort (external merge)); no spill at work_mem=64MB"
            ]
        );
        let u = &r.summary.units[0];
        assert_eq!(u.finding.verdict, Some(Verdict::Faster));
        assert_eq!(u.finding.winner.as_deref(), Some("work_mem=64MB"));
        assert_eq!(u.combo_of("work_mem=64MB"), Some(2));
        assert!(
            r.summary.findings[0].starts_with("q: work_mem=64MB faster than every other setting")
        );
        let changed = changed_keys(&r, 0);
        assert!(
            changed.contains("HashAggregate(Seq Scan on t)"),
            "{changed:?}"
        );
        assert!(changed.contains("Sort(Seq Scan on t)"), "{changed:?}");
        assert!(!changed.contains("Seq Scan on t"));
    }

    #[test]
    fn one_plan_and_no_spill_say_nothing_extra() {
        let mut r = report();
        for c in 0..3 {
            add_plan(&mut r, c, hashed_plan());
            add_trials(&mut r, c, 1.0);
        }
        r.summarize(&[]);
        assert!(r.summary.plan_changes.is_empty() && r.summary.spills.is_empty());
        assert_eq!(
            r.summary.units[0].finding.verdict,
            Some(Verdict::NoSignificantDifference)
        );
        assert_eq!(format_time(0.000412), "0.412 ms");
        assert_eq!(format_time(0.0412), "41.20 ms");
        assert_eq!(format_tps(1234.0), "1.23k tps");
    }
}
