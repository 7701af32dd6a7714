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
//! **The procedure: simultaneous intervals over all pairs.** pglab forms the Hodges–Lehmann
//! interval of the ratio for *every* pair of settings, `P = k(k−1)/2` of them, each at
//! `1 − α/P` (Bonferroni; `α = 1 − confidence`). Then with probability at least `1 − α` all
//! `P` intervals cover their true ratios at once, whatever the data later pick as the best, so
//! every statement read from them — "A is slower than the best", "B is within 5% of every
//! setting that could be the best" — holds together at the stated confidence. The
//! Mann–Whitney intervals are exact for any continuous distribution of the trials, and
//! Bonferroni needs no assumption about how the pairs depend on each other (they share
//! trials). Hsu's multiple comparisons with the best (MCB) needs only `k − 1` one-sided
//! comparisons, but its "not the best" means "no better than the best of the others", which
//! ties satisfy: with identical settings MCB still calls some of them not-the-best in far more
//! than 5% of runs, and a DBA reads that as `slower`. Steel–Dwass (the rank version of Tukey's
//! all-pairs intervals) has the same family as this one with a sharper constant, but only
//! asymptotically; with 4–10 trials the exact per-pair counts plus Bonferroni lose little (with
//! few trials only the most extreme arrangement is ever significant, and Bonferroni's bound on
//! it is nearly sharp), and they stay exact.
//!
//! The price is trials: with few trials a corrected level cannot be reached at all (five
//! settings at 95% need 6 trials each, eight need 7), and then the verdict is `too few
//! trials` with the count that would reach it. That is the honest answer.
//!
//! **Looks (`--repeat auto`).** Adaptive repeats decide after every round whether to go on,
//! so a run that stops at the first look where a difference shows is a run that peeked.
//! pglab splits α evenly over the looks the run can take (Bonferroni over looks, a
//! Pocock-like spending): the rounds up to `max-repeat` at which some pair could be decided at
//! all. With `L` such looks each pairwise interval is at `1 − α/(P·L)`. The first look is the
//! first trial count whose widest interval reaches that level — a fixed point of `k`, the cap
//! and α, computed before any trial runs — and every earlier round runs every setting once more
//! (nothing can be decided there, so those rounds spend nothing). The engines guarantee at
//! most `max-repeat` rounds in all, so a run looks at most `L` times.

use serde::{Deserialize, Serialize};

use super::interval::LEVEL_EPS;
use super::ranks::widest_level;
use super::rules::Rules;
use super::verdict::MIN_TRIALS;

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
    /// With `--repeat auto`: the trial count of the first round at which anything can be
    /// decided (every setting runs until then). Equal to the fixed count otherwise (0 when not
    /// known).
    pub first_look: usize,
    /// The confidence of each pairwise interval: `1 − (1 − confidence)/(pairs·looks)`.
    pub pair_confidence: f64,
}

impl Family {
    /// The family of `k` settings under `rules` (a fixed count when `rules.auto_max` is None).
    pub fn of(k: usize, rules: &Rules) -> Family {
        let rules = rules.effective();
        let pairs = (k * k.saturating_sub(1) / 2).max(1);
        let alpha = 1.0 - rules.confidence;
        let (first_look, looks) = match rules.auto_max {
            None => (0, 1),
            Some(max) => first_look(pairs, max as usize, alpha),
        };
        Family {
            settings: k,
            pairs,
            looks,
            first_look,
            pair_confidence: 1.0 - alpha / (pairs * looks) as f64,
        }
    }

    /// True when one interval stands alone (two settings, a fixed count).
    pub fn is_single(&self) -> bool {
        self.pairs == 1 && self.looks == 1
    }
}

/// The first round `n` (trials per setting, at least [`MIN_TRIALS`]) at which the widest
/// interval of `n` against `n` trials reaches `1 − α/(pairs·(max − n + 1))`, and the looks
/// from there to `max`. When no round up to `max` reaches it, the one look at `max`.
fn first_look(pairs: usize, max: usize, alpha: f64) -> (usize, usize) {
    let max = max.max(MIN_TRIALS);
    for n in MIN_TRIALS..=max {
        let looks = max - n + 1;
        let level = 1.0 - alpha / (pairs * looks) as f64;
        if widest_level(n, n) + LEVEL_EPS >= level {
            return (n, looks);
        }
    }
    (max, 1)
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
    fn auto_pays_for_its_looks_from_the_first_decidable_round() {
        // Two settings, at most 10 each. At n = 5 with 6 looks left each look gets
        // 0.05/6 = 0.0083, and 5 against 5 reach 1 − 2/252 (tail 0.0079): the first look.
        // n = 4 (7 looks, 0.0071) against 1 − 2/70 (0.029) cannot.
        let f = Family::of(2, &Rules::default().with_auto(10));
        assert_eq!((f.first_look, f.looks), (5, 6));
        assert!(close(f.pair_confidence, 1.0 - 0.05 / 6.0));
        // Eight settings: 28 pairs; n = 7 with 4 looks needs 0.05/112 = 0.00045 against
        // 2/3432 = 0.00058 (no); n = 8 with 3 looks needs 0.05/84 = 0.0006 against
        // 2/12870 = 0.00016 (yes).
        let f = Family::of(8, &Rules::default().with_auto(10));
        assert_eq!((f.first_look, f.looks), (8, 3));
        // A cap too small to decide anything: one look at the cap.
        let f = Family::of(10, &Rules::default().with_auto(4));
        assert_eq!((f.first_look, f.looks), (4, 1));
    }
}
