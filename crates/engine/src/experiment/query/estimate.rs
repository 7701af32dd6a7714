//! What a hypothetical index (HypoPG) does to the planner's estimate of a statement, and the
//! advice that estimate supports. Nothing here is measured: a hypothetical index has no pages,
//! so only the planner's cost and plan exist, and every sentence says "planner's estimate,
//! not measured". The plan is named by its real nodes (`Bitmap Index Scan on <13543>btree_t_a`
//! under `Bitmap Heap Scan on t`), never by a kind it is not.

use super::report::{ComboPlan, QueryReport};

/// The planner must expect at least this factor lower a cost before an estimate alone
/// advises building the index (a plan cost is no time; a small difference may not be one).
pub(crate) const ADVISE_BELOW: f64 = 0.5;

/// The planner's estimate of one statement under one hypothetical candidate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Estimate {
    /// The statement's name.
    pub name: String,
    /// The combination's label (`idx 1`, `work_mem=64MB · idx 1`).
    pub label: String,
    /// The candidate as the DBA wrote it.
    pub sql: String,
    pub cost: f64,
    /// The cost with the same settings and no candidate.
    pub base_cost: Option<f64>,
    /// The plan's nodes that use the hypothetical index, as EXPLAIN names them.
    pub using: Vec<String>,
    /// The plan's top node and the scans under it, as EXPLAIN names them.
    pub plan: Vec<String>,
}

/// Whether an EXPLAIN label names a HypoPG index (`<13543>btree_t_a`).
fn names_hypothetical(label: &str) -> bool {
    label.split('<').skip(1).any(|rest| {
        rest.split_once('>')
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    })
}

impl Estimate {
    /// The estimate of plan `p` (an estimate-only plan), None for a measured one.
    pub(crate) fn of(report: &QueryReport, p: &ComboPlan) -> Option<Estimate> {
        if !p.estimate_only {
            return None;
        }
        let info = report.combos.get(p.combo)?;
        let base = report
            .combos
            .iter()
            .find(|c| c.index_value == 0 && c.settings == info.settings)
            .and_then(|c| report.plan(p.statement, c.combo));
        let sql = report
            .indexes
            .iter()
            .find(|c| c.value == info.index_value)
            .map(|c| c.sql.clone())
            .unwrap_or_else(|| format!("index {}", info.index_value));
        let lines = &p.facts.lines;
        Some(Estimate {
            name: p.name.clone(),
            label: info.label.clone(),
            sql,
            cost: p.facts.total_cost,
            base_cost: base.map(|b| b.facts.total_cost),
            using: lines
                .iter()
                .filter(|l| names_hypothetical(&l.label))
                .map(|l| l.label.clone())
                .collect(),
            plan: lines
                .iter()
                .filter(|l| l.depth == 0 || l.label.contains(" Scan"))
                .map(|l| l.label.clone())
                .collect(),
        })
    }

    /// "q at idx 1: planner cost 32 against 7481 without it (planner's estimate, not
    /// measured); the plan uses it: Bitmap Index Scan on <13543>btree_t_a (plan: Bitmap Heap
    /// Scan on t, Bitmap Index Scan on <13543>btree_t_a)".
    pub(crate) fn sentence(&self) -> String {
        let against = self
            .base_cost
            .map(|b| format!(" against {b:.0} without it"))
            .unwrap_or_default();
        let uses = if self.using.is_empty() {
            format!("the plan does not use the index ({})", self.plan.join(", "))
        } else {
            format!(
                "the plan uses it: {} (plan: {})",
                self.using.join(", "),
                self.plan.join(", ")
            )
        };
        format!(
            "{} at {}: planner cost {:.0}{against} (planner's estimate, not measured); {uses}",
            self.name, self.label, self.cost
        )
    }

    /// Whether the estimate alone advises building it: the plan uses it and the planner
    /// expects at most [`ADVISE_BELOW`] of the cost without it.
    pub(crate) fn advises(&self) -> bool {
        !self.using.is_empty()
            && self
                .base_cost
                .is_some_and(|b| self.cost <= b * ADVISE_BELOW)
    }

    /// The advice, labelled as an estimate.
    pub(crate) fn advice(&self) -> String {
        let base = self
            .base_cost
            .map(|b| format!("{b:.0}"))
            .unwrap_or_else(|| "unknown".into());
        if self.advises() {
            let factor = self.base_cost.unwrap_or(0.0) / self.cost.max(f64::MIN_POSITIVE);
            format!(
                "{}: by the planner's estimate (HypoPG; not measured), {} lowers the cost from {base} to {:.0} ({factor:.0}× lower) and the plan uses it ({}): build it; its time was not measured (measure it on a copy in pglab's sandbox to know what it saves).",
                self.name,
                self.sql,
                self.cost,
                self.using.join(", ")
            )
        } else if self.using.is_empty() {
            format!(
                "{}: by the planner's estimate (HypoPG; not measured), the plan does not use {} ({}): no recommendation to build it.",
                self.name,
                self.sql,
                self.plan.join(", ")
            )
        } else {
            format!(
                "{}: by the planner's estimate (HypoPG; not measured), the plan uses {} ({}) but its cost goes only from {base} to {:.0}: too close for an estimate to decide; measure it on a copy in pglab's sandbox.",
                self.name,
                self.sql,
                self.using.join(", "),
                self.cost
            )
        }
    }
}

/// The estimates of statement `s`, in combination order.
pub(crate) fn of_statement(report: &QueryReport, s: usize) -> Vec<Estimate> {
    super::words::plans_of(report, s)
        .into_iter()
        .filter_map(|p| Estimate::of(report, p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hypothetical_index_is_recognised_by_its_hypopg_name() {
        assert!(names_hypothetical("Bitmap Index Scan on <13543>btree_t_a"));
        assert!(names_hypothetical("Index Scan using <1>btree_t_a on t"));
        assert!(!names_hypothetical("Index Scan using t_pkey on t"));
        assert!(!names_hypothetical("Filter: (a < 5)"));
    }

    fn estimate(cost: f64, base: f64, using: &[&str]) -> Estimate {
        Estimate {
            name: "q".into(),
            label: "idx 1".into(),
            sql: "CREATE INDEX ON t (a)".into(),
            cost,
            base_cost: Some(base),
            using: using.iter().map(|s| s.to_string()).collect(),
            plan: vec![
                "Bitmap Heap Scan on t".into(),
                "Bitmap Index Scan on <1>btree_t_a".into(),
            ],
        }
    }

    #[test]
    fn the_advice_follows_the_estimate_and_says_it_is_one() {
        let e = estimate(32.0, 7481.0, &["Bitmap Index Scan on <1>btree_t_a"]);
        assert!(e.advises());
        let a = e.advice();
        assert!(
            a.contains("planner's estimate")
                && a.contains("not measured")
                && a.contains("build it"),
            "{a}"
        );
        assert!(
            a.contains("Bitmap Index Scan on <1>btree_t_a") && !a.contains("index scan"),
            "{a}"
        );
        assert!(!estimate(4000.0, 7481.0, &["x <1>y"]).advises());
        assert!(!estimate(32.0, 7481.0, &[]).advises());
        assert!(
            estimate(32.0, 7481.0, &[])
                .advice()
                .contains("does not use")
        );
        assert!(e.sentence().contains(
            "the plan uses it: Bitmap Index Scan on <1>btree_t_a (plan: Bitmap Heap Scan on t"
        ));
    }
}
