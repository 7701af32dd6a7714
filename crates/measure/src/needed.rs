//! How many trials would decide a comparison that is still open: an estimate, said as one.
//!
//! A comparison is open (`too few trials`) when its interval holds both 1 and a difference
//! beyond the smallest effect, or when its trial counts cannot reach the level at all. If the
//! spread of the trials and the estimated ratio stayed as they are, more trials would narrow
//! the interval about as `1/√n` per side. pglab takes the half-width seen (on the log scale),
//! rescales it from the level it reached to the level wanted (by the normal quantiles) and
//! from `1/n_a + 1/n_b` to `2/N`, and finds the smallest `N` per setting at which the
//! interval would either leave 1 behind with the estimate beyond the smallest effect
//! (`faster`/`slower`) or fit within the smallest effect (`no significant difference`) — and at
//! which `N` against `N` can be compared at all ([`MIN_TRIALS`]). It is
//! an estimate: the next trials move both the ratio and the spread, so the text always says
//! "about" and "estimated from the spread so far". When the ratio sits right at the smallest
//! effect no count up to [`LIMIT`] decides it, and the answer is None.

use super::normal::normal_quantile;
use super::verdict::{MIN_TRIALS, Shift};

/// Counts beyond this are not estimated: the difference sits at the smallest effect.
pub const LIMIT: usize = 100;

/// About how many trials per setting would decide the comparison `s` at `confidence` with
/// the smallest effect `margin` (`ln(1 + min_effect)`); None beyond [`LIMIT`]. The comparison
/// is open, so the answer is always more than the larger count already run: the `1/√n`
/// rescaling is an approximation of the exact interval, and "4 and 4; about 4 each would
/// decide" would contradict itself.
pub(crate) fn trials_to_decide(s: &Shift, confidence: f64, margin: f64) -> Option<usize> {
    let least = (s.n.max(s.m) + 1).max(MIN_TRIALS);
    let width = s.high - s.low;
    let z_seen = normal_quantile(1.0 - (1.0 - s.level) / 2.0);
    // No spread yet (one trial a side, identical trials, or nothing reached): all that can
    // be said is the count that can reach the level.
    let spread = width > 0.0 && z_seen > 0.0 && z_seen.is_finite();
    if s.n < 2 || s.m < 2 || !spread {
        return Some(least);
    }
    let z = normal_quantile(1.0 - (1.0 - confidence) / 2.0);
    let per_trial = width / 2.0 / (z_seen * (1.0 / s.n as f64 + 1.0 / s.m as f64).sqrt());
    let d = s.point.abs();
    (least..=LIMIT).find(|&n| {
        let h = per_trial * z * (2.0 / n as f64).sqrt();
        (d - h > 0.0 && d > margin) || d + h <= margin
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::verdict::shift;

    fn logs(v: &[f64]) -> Vec<f64> {
        v.iter().map(|x| x.ln()).collect()
    }

    #[test]
    fn an_open_comparison_gets_an_estimate_that_grows_with_the_doubt() {
        let margin = 0.05f64.ln_1p();
        // The C against B: 1.10× [0.99, 1.23] with 5 a side at 95%. The estimate is
        // about 1.10 being told from 1 — more than 5, fewer than the limit.
        let c = logs(&[11.0, 9.9, 11.8, 10.4, 12.0]);
        let b = logs(&[10.0, 10.3, 9.7, 10.5, 9.6]);
        let s = shift(&c, &b, 0.95);
        let n = trials_to_decide(&s, 0.95, margin).unwrap();
        assert!((6..=20).contains(&n), "{n}");
        // The same spread at a stricter level asks for more.
        let strict = trials_to_decide(&s, 1.0 - 0.05 / 21.0, margin).unwrap();
        assert!(strict > n, "{strict} vs {n}");
        // A ratio right at the margin cannot be settled within the limit.
        let at = logs(&[10.5, 9.4, 11.6, 10.0, 11.1]);
        let s = shift(&at, &b, 0.95);
        assert!((s.point.exp() - 1.05).abs() < 0.03, "{}", s.point.exp());
        let far = trials_to_decide(&s, 0.95, margin);
        assert!(far.is_none_or(|n| n > 30), "{far:?}");
    }

    #[test]
    fn an_open_comparison_never_asks_for_the_trials_it_already_has() {
        // Four a side, wide apart but open at 95% (4 against 4 reach 97.1% only at the
        // extremes): whatever the rescaling says, the answer is at least 5.
        let a = logs(&[46.0, 40.0, 50.0, 45.0]);
        let b = logs(&[3.6, 3.4, 46.0, 3.5]);
        let s = shift(&a, &b, 0.95);
        let n = trials_to_decide(&s, 0.95, 0.05f64.ln_1p()).unwrap();
        assert!(n >= 5, "{n}");
    }

    #[test]
    fn without_a_spread_it_is_the_count_that_can_reach_the_level() {
        // One a side: the fewest that are ever compared (Welch's t needs a spread).
        let s = shift(&[1.0f64.ln()], &[2.0f64.ln()], 0.95);
        assert_eq!(trials_to_decide(&s, 0.95, 0.05), Some(MIN_TRIALS));
        // Identical trials, three a side: one more than there are, whatever the level.
        let s = shift(&logs(&[1.0, 1.0, 1.0]), &logs(&[1.0, 1.0, 1.0]), 0.95);
        assert_eq!(trials_to_decide(&s, 0.95, 0.05), Some(4));
        assert_eq!(trials_to_decide(&s, 1.0 - 0.05 / 3.0, 0.05), Some(4));
    }
}
