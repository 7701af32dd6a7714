//! The confirmation round at the end: the whole tuned set against the starting
//! configuration, and the formula's whole set (pgtune's values for the target's hardware)
//! beside them, one pass each per round, the order rotating round by round (ABC, BCA, CAB,
//! …; AB, BA with two sides), each side applied, restarted and warmed up the same way. Two
//! verdicts decided in advance, each against the starting configuration: the tuned set, then
//! the formula's. A tune that changes nothing still measures the formula: the one finding that
//! stops a DBA from pasting pgtune's output into production is that it is slower here.
//!
//! The confirmation is sequential when the budget allows: before its first round it plans its
//! looks from the budget left and the pace (nothing the trials show), the first after
//! [`ROUNDS`] rounds and one a round after it, and stops at the first look where both
//! verdicts are decided. The error is split over the comparisons and the planned looks
//! ([`spending`]), so stopping at a look that happens to show something cannot make a
//! difference more likely to be called than the confidence says. A tune whose races ended
//! early spends what they left on a clearer confirmation instead of giving the budget back
//! with "too few trials".

use serde::{Deserialize, Serialize};

use crate::measure::rules::Rules;
use crate::measure::spending;
use crate::measure::verdict::{Better, Comparison, compare_paired};

/// Rounds the confirmation wants: 5 against 5 reaches 95% with room to spare.
pub(crate) const ROUNDS: usize = 5;
/// Fewer than this and no verdict is possible at 95% (4 against 4 reaches 97%).
pub(crate) const MIN_ROUNDS: usize = 4;

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
    /// Looks planned before the first round (0: not planned, one look after [`ROUNDS`]).
    #[serde(default)]
    pub planned_looks: usize,
    /// The formula's set against the tuned set, when both were measured: a tune must not
    /// leave a DBA with a set the formula beats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula_vs_tuned: Option<Comparison>,
    /// pgtune's set waits: the tuned set is confirmed against the start first, and pgtune's
    /// set joins the rounds after ([`super::confirm_staged`]), because its restarts would
    /// leave the budget too few rounds to decide anything.
    #[serde(default)]
    pub formula_later: bool,
    /// The round at which pgtune's set joined (with [`Confirm::formula_later`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula_from: Option<usize>,
    /// The tuned set's verdict was decided before pgtune's set joined: kept as decided.
    #[serde(default)]
    pub tuned_settled: bool,
}

/// A configuration the confirmation measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Start,
    Tuned,
    Formula,
}

/// Which side runs first in round `r`: the tuned set in even rounds (two sides).
pub(crate) fn tuned_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

impl Confirm {
    pub(crate) fn new(tuned: Vec<(String, String)>, formula: Vec<(String, String)>) -> Confirm {
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
            planned_looks: 0,
            formula_vs_tuned: None,
            formula_later: false,
            formula_from: None,
            tuned_settled: false,
        }
    }

    /// Plan the looks once, before the first round, for `rounds` rounds the budget affords:
    /// the first after [`ROUNDS`], then one a round ([`spending::looks`]).
    pub(crate) fn plan(&mut self, rounds: usize) {
        if self.rounds == 0 && self.planned_looks == 0 {
            self.planned_looks = spending::looks(ROUNDS, rounds.max(ROUNDS));
        }
    }

    /// The last round the plan allows (pgtune's set, joining late, gets [`ROUNDS`] more).
    pub(crate) fn last_round(&self) -> usize {
        match self.formula_from {
            Some(k) => k + ROUNDS,
            None => ROUNDS + self.planned_looks.max(1) - 1,
        }
    }

    /// The confidence each comparison is held to: the error split over the comparisons made
    /// (every pair of sides: the tuned set's and the formula's against the start, and the
    /// formula's against the tuned set) and the planned looks.
    pub(crate) fn level(&self, confidence: f64) -> f64 {
        let comparisons = spending::pairs(self.sides().len());
        spending::pair_level(confidence, comparisons, self.planned_looks.max(1))
    }

    /// True when a look is due after the rounds so far (from [`ROUNDS`] on; once pgtune's
    /// set joined late, only at the last round).
    pub(crate) fn look_due(&self) -> bool {
        match self.formula_from {
            Some(_) => self.rounds >= self.last_round(),
            None => self.rounds >= ROUNDS,
        }
    }

    /// True when every comparison made is decided (shown better, worse or equivalent).
    pub(crate) fn decided(&self) -> bool {
        let tuned =
            self.tuned.is_empty() || self.comparison.as_ref().is_some_and(|c| c.conclusive());
        let formula = self.formula.is_empty()
            || self
                .formula_comparison
                .as_ref()
                .is_some_and(|c| c.conclusive());
        let between = self.tuned.is_empty()
            || self.formula.is_empty()
            || self
                .formula_vs_tuned
                .as_ref()
                .is_some_and(|c| c.conclusive());
        tuned && formula && between
    }

    /// The configurations measured: the start, the tuned set when it changes anything, the
    /// formula's set when there is one.
    pub(crate) fn sides(&self) -> Vec<Side> {
        let mut v = vec![Side::Start];
        if !self.tuned.is_empty() {
            v.push(Side::Tuned);
        }
        if !self.formula.is_empty() && !self.formula_waits() {
            v.push(Side::Formula);
        }
        v
    }

    /// The order of the sides in the next round: rotated round by round, so no side always
    /// runs first (with two sides the tuned set first in even rounds, as before).
    pub(crate) fn order(&self) -> Vec<Side> {
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
    pub(crate) fn settings(&self, side: Side) -> &[(String, String)] {
        match side {
            Side::Start => &[],
            Side::Tuned => &self.tuned,
            Side::Formula => &self.formula,
        }
    }

    /// A finished round: one measure per side, in [`Confirm::sides`] order.
    pub(crate) fn add_measures(&mut self, measures: &[(Side, f64)]) {
        for (side, m) in measures {
            match side {
                Side::Start => self.start_trials.push(*m),
                Side::Tuned => self.tuned_trials.push(*m),
                Side::Formula => self.formula_trials.push(*m),
            }
        }
        self.rounds += 1;
    }

    #[cfg(test)]
    pub(crate) fn add_round(&mut self, start: f64, tuned: f64) {
        self.add_measures(&[(Side::Start, start), (Side::Tuned, tuned)]);
    }

    /// The tuned set and the formula's set, each against the start: comparisons planned
    /// before any trial ran, each held at [`Confirm::level`] (the confidence split between
    /// them, and over the planned looks).
    pub(crate) fn judge(&mut self, better: Better, rules: &Rules) {
        let r = Rules {
            confidence: self.level(rules.confidence),
            ..*rules
        };
        if !self.tuned_settled {
            self.comparison = (!self.tuned_trials.is_empty())
                .then(|| compare_paired(&self.tuned_trials, &self.start_trials, better, &r))
                .flatten();
        }
        // pgtune's set pairs with the rounds it ran in: the last ones when it joined late.
        let n = self.formula_trials.len();
        let (start, tuned) = (tail(&self.start_trials, n), tail(&self.tuned_trials, n));
        self.formula_comparison = (n > 0)
            .then(|| compare_paired(&self.formula_trials, start, better, &r))
            .flatten();
        self.formula_vs_tuned = (n > 0 && !tuned.is_empty())
            .then(|| compare_paired(&self.formula_trials, tuned, better, &r))
            .flatten();
        super::statements::judge(&mut self.statements, rules);
    }
}

/// The last `n` of `v` (all of it when shorter).
pub(super) fn tail(v: &[f64], n: usize) -> &[f64] {
    &v[v.len().saturating_sub(n)..]
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

    /// A confirmation planned for `rounds` rounds of three sides whose true times are
    /// `truths` (start, tuned, formula), every round's sides sharing a drift of 15% over a
    /// noise of 3% within it, stopped at the first look where both verdicts are decided as
    /// the tune does. Returns the confirmation.
    fn sequential(seed: u64, truths: [f64; 3], rounds: usize) -> Confirm {
        let mut n = crate::measure::simulate::Noise::new(seed);
        let mut c = Confirm::new(
            vec![("random_page_cost".into(), "2".into())],
            vec![("work_mem".into(), "30MB".into())],
        );
        c.plan(rounds);
        while c.rounds < c.last_round() {
            let shared = n.trial(1.0, 0.15);
            let m: Vec<(Side, f64)> = c
                .order()
                .into_iter()
                .map(|s| {
                    let t = truths[s as usize];
                    (s, n.trial(t * shared, 0.05))
                })
                .collect();
            c.add_measures(&m);
            if c.look_due() {
                c.judge(Better::Lower, &Rules::default());
                if c.decided() {
                    break;
                }
            }
        }
        c.judge(Better::Lower, &Rules::default());
        c
    }

    #[test]
    fn the_plan_splits_the_error_over_the_comparisons_and_the_looks() {
        let mut c = Confirm::new(
            vec![("a".into(), "1".into())],
            vec![("b".into(), "2".into())],
        );
        c.plan(3);
        assert_eq!(
            (c.planned_looks, c.last_round()),
            (1, ROUNDS),
            "one look at 5 rounds"
        );
        assert!(
            (c.level(0.95) - (1.0 - 0.05 / 3.0)).abs() < 1e-12,
            "α split over the three pairs of sides"
        );
        let mut c = Confirm::new(
            vec![("a".into(), "1".into())],
            vec![("b".into(), "2".into())],
        );
        c.plan(12);
        assert_eq!((c.planned_looks, c.last_round()), (8, 12));
        assert!((c.level(0.95) - (1.0 - 0.05 / 24.0)).abs() < 1e-12);
        c.plan(40);
        assert_eq!(c.planned_looks, 8, "planned once");
    }

    /// Seeded simulation (a real confirmation takes minutes a round): over 300 A/A
    /// confirmations planned for 20 rounds and stopped at the first decided look, a difference
    /// (better or worse) is called for the tuned set or the formula in at most 5%; a tuned
    /// set 10% faster (and a formula 10% slower) at 5% noise is shown so in at least 90%, most
    /// before the last round, where five rounds alone show it in under two thirds as many.
    #[test]
    fn a_sequential_confirmation_calls_no_false_difference_and_stops_early_on_a_real_one() {
        let runs = 300;
        let mut false_calls = 0;
        for seed in 0..runs {
            let c = sequential(seed, [10.0, 10.0, 10.0], 20);
            let called = |x: &Option<Comparison>| {
                x.as_ref()
                    .is_some_and(|c| matches!(c.verdict, Verdict::Faster | Verdict::Slower))
            };
            if called(&c.comparison) || called(&c.formula_comparison) || called(&c.formula_vs_tuned)
            {
                false_calls += 1;
            }
        }
        assert!(false_calls * 20 <= runs, "{false_calls} of {runs}");
        let (mut found, mut early) = (0, 0);
        for seed in 0..runs {
            let c = sequential(1_000 + seed, [10.0, 9.0, 11.0], 20);
            let tuned = c.comparison.as_ref().map(|c| c.verdict);
            let formula = c.formula_comparison.as_ref().map(|c| c.verdict);
            if tuned == Some(Verdict::Faster) && formula == Some(Verdict::Slower) {
                found += 1;
                if c.rounds < c.last_round() {
                    early += 1;
                }
            }
        }
        assert!(found * 10 >= runs * 9, "found {found} of {runs}");
        assert!(early * 2 >= found, "early {early} of {found}");
        // Five rounds and no more (a budget spent on the races) decide far fewer of them.
        let five = (0..runs)
            .filter(|seed| {
                let c = sequential(1_000 + seed, [10.0, 9.0, 11.0], ROUNDS);
                c.comparison.is_some_and(|c| c.verdict == Verdict::Faster)
            })
            .count() as u64;
        // Seeded: 0 false calls, 296 found (292 before round 20), 160 by five rounds.
        assert!(
            five * 3 < found * 2,
            "five rounds found {five}, the sequential {found}"
        );
    }
}
