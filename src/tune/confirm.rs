//! The confirmation round at the end: the whole tuned set against the starting
//! configuration, and the formula's whole set (pgtune's values for the target's hardware)
//! beside them, one pass each per round, the order rotating round by round (ABC, BCA, CAB,
//! …; AB, BA with two sides), each side applied, restarted and warmed up the same way. Two
//! verdicts decided in advance, each against the starting configuration: the tuned set, then
//! the formula's. A tune that changes nothing still measures the formula: the one finding that
//! stops a DBA from pasting pgtune's output into production is that it is slower here.

use serde::{Deserialize, Serialize};

use crate::measure::rules::Rules;
use crate::measure::verdict::{Better, Comparison, compare_paired};

/// Rounds the confirmation wants: 5 against 5 reaches 95% with room to spare.
pub const ROUNDS: usize = 5;
/// Fewer than this and no verdict is possible at 95% (4 against 4 reaches 97%).
pub const MIN_ROUNDS: usize = 4;

/// The confirmation's trials and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirm {
    /// The tuned settings (only those that differ from the start).
    pub tuned: Vec<(String, String)>,
    pub start_trials: Vec<f64>,
    pub tuned_trials: Vec<f64>,
    pub rounds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// The formula's set as this server could take it (empty: not measured).
    #[serde(default)]
    pub formula: Vec<(String, String)>,
    #[serde(default)]
    pub formula_trials: Vec<f64>,
    /// The formula's set against the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula_comparison: Option<Comparison>,
    /// Each statement's times per side (timed query workloads), and its verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<super::statements::StatementSides>,
}

/// A configuration the confirmation measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Start,
    Tuned,
    Formula,
}

/// Which side runs first in round `r`: the tuned set in even rounds (two sides).
pub fn tuned_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

impl Confirm {
    pub fn new(tuned: Vec<(String, String)>, formula: Vec<(String, String)>) -> Confirm {
        Confirm {
            tuned,
            start_trials: Vec::new(),
            tuned_trials: Vec::new(),
            rounds: 0,
            comparison: None,
            formula,
            formula_trials: Vec::new(),
            formula_comparison: None,
            statements: Vec::new(),
        }
    }

    /// The configurations measured: the start, the tuned set when it changes anything, the
    /// formula's set when there is one.
    pub fn sides(&self) -> Vec<Side> {
        let mut v = vec![Side::Start];
        if !self.tuned.is_empty() {
            v.push(Side::Tuned);
        }
        if !self.formula.is_empty() {
            v.push(Side::Formula);
        }
        v
    }

    /// The order of the sides in the next round: rotated round by round, so no side always
    /// runs first (with two sides the tuned set first in even rounds, as before).
    pub fn order(&self) -> Vec<Side> {
        let mut v = self.sides();
        if v.len() == 2 {
            if tuned_first(self.rounds) {
                v.reverse();
            }
        } else {
            let k = self.rounds % v.len().max(1);
            v.rotate_left(k);
        }
        v
    }

    /// The settings a side runs with.
    pub fn settings(&self, side: Side) -> &[(String, String)] {
        match side {
            Side::Start => &[],
            Side::Tuned => &self.tuned,
            Side::Formula => &self.formula,
        }
    }

    /// A finished round: one measure per side, in [`Confirm::sides`] order.
    pub fn add_measures(&mut self, measures: &[(Side, f64)]) {
        for (side, m) in measures {
            match side {
                Side::Start => self.start_trials.push(*m),
                Side::Tuned => self.tuned_trials.push(*m),
                Side::Formula => self.formula_trials.push(*m),
            }
        }
        self.rounds += 1;
    }

    pub fn add_round(&mut self, start: f64, tuned: f64) {
        self.add_measures(&[(Side::Start, start), (Side::Tuned, tuned)]);
    }

    /// The tuned set and the formula's set, each against the start. Two comparisons planned
    /// before any trial ran, so each is held at the confidence split between them
    /// (Bonferroni) when both are made.
    pub fn judge(&mut self, better: Better, rules: &Rules) {
        let both = !self.tuned_trials.is_empty() && !self.formula_trials.is_empty();
        let mut r = *rules;
        if both {
            r.confidence = 1.0 - (1.0 - rules.confidence) / 2.0;
        }
        self.comparison = (!self.tuned_trials.is_empty())
            .then(|| compare_paired(&self.tuned_trials, &self.start_trials, better, &r))
            .flatten();
        self.formula_comparison = (!self.formula_trials.is_empty())
            .then(|| compare_paired(&self.formula_trials, &self.start_trials, better, &r))
            .flatten();
        super::statements::judge(&mut self.statements, rules);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::verdict::Verdict;

    #[test]
    fn order_alternates_and_the_verdict_is_for_the_tuned_set() {
        assert!(tuned_first(0) && !tuned_first(1) && tuned_first(2));
        let mut c = Confirm::new(vec![("max_wal_size".into(), "4GB".into())], Vec::new());
        for i in 0..ROUNDS {
            let n = [1.0, 0.99, 1.01, 0.995, 1.005][i];
            c.add_round(1000.0 * n, 1300.0 * n);
        }
        c.judge(Better::Higher, &Rules::default());
        let cmp = c.comparison.unwrap();
        assert_eq!(cmp.verdict, Verdict::Faster);
        assert!(cmp.level >= 0.95);
    }

    /// Three sides rotate so each runs first, second and last in turn; the formula is judged
    /// against the start as the tuned set is, each at the split confidence.
    #[test]
    fn the_formula_is_measured_beside_the_tuned_set() {
        let mut c = Confirm::new(
            vec![("work_mem".into(), "16MB".into())],
            vec![("work_mem".into(), "30854kB".into())],
        );
        assert_eq!(c.sides(), [Side::Start, Side::Tuned, Side::Formula]);
        let mut firsts = Vec::new();
        for i in 0..6 {
            let order = c.order();
            firsts.push(order[0]);
            let n = [1.0, 0.99, 1.01, 0.995, 1.005, 1.0][i];
            let m: Vec<(Side, f64)> = order
                .iter()
                .map(|s| {
                    let base = match s {
                        Side::Start => 10.0,
                        Side::Tuned => 10.0,
                        Side::Formula => 15.1,
                    };
                    (*s, base * n)
                })
                .collect();
            c.add_measures(&m);
        }
        for s in [Side::Start, Side::Tuned, Side::Formula] {
            assert_eq!(firsts.iter().filter(|f| **f == s).count(), 2, "{firsts:?}");
        }
        c.judge(Better::Lower, &Rules::default());
        let f = c.formula_comparison.clone().unwrap();
        assert_eq!(f.verdict, Verdict::Slower, "{f:?}");
        assert!((f.ratio - 1.51).abs() < 0.01, "{f:?}");
        // A tune that changed nothing measures the formula alone against the start.
        let only = Confirm::new(Vec::new(), vec![("work_mem".into(), "30854kB".into())]);
        assert_eq!(only.sides(), [Side::Start, Side::Formula]);
        assert!(only.settings(Side::Start).is_empty());
    }
}
