//! Many verdicts at once: the level each interval needs so that all of a sweep's verdicts
//! hold together, and what `--repeat auto` pays for looking at them as trials come in.
//!
//! **Why.** A sweep of `k` settings compares each with the best — and the best is the one
//! with the lowest median *of these trials*, picked after seeing them. With eight identical
//! settings and five trials each, the fastest-looking one is simply the luckiest, and a 95%
//! interval per comparison calls some other setting `slower` in about a quarter of such runs.
//! Comparing only with that best (`k − 1` comparisons) does not escape it: which pair ends up
//! compared is itself chosen by the data.
//!
//! **The procedure: simultaneous intervals over all pairs.** pglab forms the interval of the
//! ratio for *every* pair of settings, `P = k(k−1)/2` of them (Welch's t on the logarithms,
//! [`super::welch`]), each at `1 − α/P` (Bonferroni; `α = 1 − confidence`). Then with
//! probability at least `1 − α` all `P` intervals cover their true ratios at once, whatever
//! the data later pick as the best, so every statement read from them — "A is slower than the
//! best", "B is within 5% of every setting that could be the best" — holds together at the
//! stated confidence. Bonferroni needs no assumption about how the pairs depend on each other
//! (they share trials). Hsu's multiple comparisons with the best (MCB) needs only `k − 1`
//! one-sided comparisons, but its "not the best" means "no better than the best of the
//! others", which ties satisfy: with identical settings MCB still calls some of them
//! not-the-best in far more than 5% of runs, and a DBA reads that as `slower`. Tukey's
//! all-pairs intervals have a sharper constant but assume equal spreads, which settings of a
//! server rarely have.
//!
//! The price is trials: a corrected level widens every interval (its t quantile grows with
//! the pairs and the looks, and falls with the trials), so a small difference in a wide sweep
//! stays `too few trials` longer, with the count that would likely decide it. That is the
//! honest answer. Held to these levels, A/A sweeps of up to eight identical settings call a
//! false difference in at most 4% of simulated runs (`measure::simulate_tests`,
//! docs/verdicts.md).
//!
//! **Looks (`--repeat auto`).** Adaptive repeats decide after every round whether to go on,
//! so a run that stops at the first look where a difference shows is a run that peeked. The
//! looks are planned before any trial by the one scheme every sequential decision in pglab
//! uses ([`super::spending`], the tune's race too): the first at
//! [`super::spending::FIRST_LOOK`] trials per setting (the cap, when smaller), then one per
//! round up to `max-repeat`; with `L` looks each pairwise interval is at `1 − α/(P·L)`. Before
//! the first planned look nothing is decided (every setting runs), so those rounds spend
//! nothing, and the engines guarantee at most `max-repeat` rounds in all.

use serde::{Deserialize, Serialize};

use super::rules::Rules;
use super::spending;

/// How many claims a sweep's verdicts make together, and the level each interval is held to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Family {
    /// Settings compared (with at least one usable trial).
    pub settings: usize,
    /// Pairs of settings: `settings·(settings−1)/2`, at least 1.
    pub pairs: usize,
    /// Looks the trials were added at: 1 for a fixed count; with `--repeat auto`, the rounds
    /// from `first_look` up to the most trials per setting.
    pub looks: usize,
    /// With `--repeat auto`: the trials per setting at the first planned look (every setting
    /// runs until then, and nothing is decided before). 0 for a fixed count.
    pub first_look: usize,
    /// The confidence of each pairwise interval: `1 − (1 − confidence)/(pairs·looks)`.
    pub pair_confidence: f64,
}

impl Family {
    /// The family of `k` settings under `rules` (a fixed count when `rules.auto_max` is None).
    pub fn of(k: usize, rules: &Rules) -> Family {
        let rules = rules.effective();
        let pairs = spending::pairs(k);
        let (first_look, looks) = match rules.auto_max {
            None => (0, 1),
            Some(max) => {
                let first = spending::first_look(max as usize);
                (first, spending::looks(first, max as usize))
            }
        };
        Family {
            settings: k,
            pairs,
            looks,
            first_look,
            pair_confidence: spending::pair_level(rules.confidence, pairs, looks),
        }
    }

    /// True when one interval stands alone (two settings, a fixed count).
    pub(crate) fn is_single(&self) -> bool {
        self.pairs == 1 && self.looks == 1
    }

    /// Whether a pair with `n` and `m` trials may be decided: with `--repeat auto`, not before
    /// the first planned look.
    pub(crate) fn may_decide(&self, n: usize, m: usize) -> bool {
        n.min(m) >= self.first_look
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn fixed_counts_pay_for_the_pairs() {
        let r = Rules::default();
        let f = Family::of(2, &r);
        assert_eq!((f.pairs, f.looks), (1, 1));
        assert!(f.is_single() && close(f.pair_confidence, 0.95));
        // Seven settings (cybertec-10m's ladder): 21 pairs, each at 1 − 0.05/21.
        let f = Family::of(7, &r);
        assert_eq!(f.pairs, 21);
        assert!(close(f.pair_confidence, 1.0 - 0.05 / 21.0));
        // One setting or none: one "pair", nothing to correct.
        assert_eq!(Family::of(1, &r).pairs, 1);
        assert_eq!(Family::of(0, &r).pairs, 1);
    }

    #[test]
    fn auto_pays_for_its_looks_from_the_planned_first_look() {
        // Two settings, at most 10 each: looks at 5..10, each at 1 − 0.05/6.
        let f = Family::of(2, &Rules::default().with_auto(10));
        assert_eq!((f.first_look, f.looks), (5, 6));
        assert!(close(f.pair_confidence, 1.0 - 0.05 / 6.0));
        assert!(!f.may_decide(4, 10) && f.may_decide(5, 5));
        // Eight settings: the same plan, 28 pairs.
        let f = Family::of(8, &Rules::default().with_auto(10));
        assert_eq!((f.first_look, f.looks), (5, 6));
        assert!(close(f.pair_confidence, 1.0 - 0.05 / 168.0));
        // A cap below the first look: one look at the cap.
        let f = Family::of(10, &Rules::default().with_auto(4));
        assert_eq!((f.first_look, f.looks), (4, 1));
        // A fixed count may decide at any count (the core still needs 3 a side).
        assert!(Family::of(3, &Rules::default()).may_decide(3, 3));
    }
}
