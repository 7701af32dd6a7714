//! One setting: the median of its trials and a distribution-free confidence interval for it.
//!
//! Trials of one setting (seconds for an index build, rows/s for a load) are few, skewed and
//! occasionally disturbed by the host, so pglab assumes nothing about their distribution.
//! It reports the **median** and, around it, an **order-statistic interval**: sort the `n`
//! trials as `x(1) ≤ … ≤ x(n)`; the pair `x(j), x(n+1-j)` brackets the true median with
//! probability
//!
//! ```text
//! coverage(j) = 1 − 2 · P(Bin(n, ½) < j)
//! ```
//!
//! whatever the distribution (each trial falls below the true median with probability ½).
//! pglab takes the largest `j` — the narrowest symmetric pair — whose coverage still reaches
//! the requested confidence (95% by default). At 95%: `n = 6` gives `x(1), x(6)` (96.9%),
//! `n = 9` gives `x(2), x(8)` (96.1%), `n = 10` gives `x(2), x(9)` (97.9%).
//!
//! When `n` is too small for the requested confidence even with `j = 1`, the interval is
//! `[min, max]` and the estimate says honestly how sure that is: `n = 5` reaches 93.75%,
//! `n = 3` only 75%. In every case [`Estimate::level`] holds the coverage actually reached,
//! so a reader can tell "95% asked, 96.9% delivered" from "95% asked, 75% delivered"
//! ([`Estimate::reaches`]).

use serde::{Deserialize, Serialize};

use super::stats::{Summary, median_sorted};

/// Tolerance when comparing a computed coverage with the requested confidence, so that
/// asking for exactly 0.9375 with n = 5 is met rather than missed by a rounding error.
pub(crate) const LEVEL_EPS: f64 = 1e-9;

/// The median of one setting's trials with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Finite trials used.
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Lower end of the interval for the median (an order statistic).
    pub ci_low: f64,
    /// Upper end of the interval for the median (an order statistic).
    pub ci_high: f64,
    /// Coverage actually reached by `[ci_low, ci_high]`, in 0..=1: at least the requested
    /// confidence when `n` allows it, otherwise the coverage of `[min, max]`.
    pub level: f64,
}

/// The median and its order-statistic interval; non-finite values are ignored, None when
/// nothing is left. `confidence` is a probability (0.95 for 95%).
pub fn estimate(values: &[f64], confidence: f64) -> Option<Estimate> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let (j, level) = order_statistic_rank(n, confidence);
    Some(Estimate {
        n,
        median: median_sorted(&v),
        min: v[0],
        max: v[n - 1],
        ci_low: v[j - 1],
        ci_high: v[n - j],
        level,
    })
}

impl Estimate {
    /// Whether the interval reaches `confidence` (false when `n` was too small for it).
    pub fn reaches(&self, confidence: f64) -> bool {
        self.level + LEVEL_EPS >= confidence
    }

    /// Half the interval's width relative to the median: 0.02 for "3.52 s ±2%".
    /// None when the median is zero or not finite.
    pub(crate) fn rel_half_width(&self) -> Option<f64> {
        let m = self.median.abs();
        (m > 0.0 && m.is_finite()).then(|| (self.ci_high - self.ci_low) / 2.0 / m)
    }

    /// The relative half-width for display: `±2%`, `±0.4%`, `±0%`; empty when undefined.
    pub fn plus_minus(&self) -> String {
        match self.rel_half_width() {
            Some(r) => format_percent(r, "±"),
            None => String::new(),
        }
    }

    /// The plain median/min/max summary of the same trials.
    pub fn summary(&self) -> Summary {
        Summary {
            n: self.n,
            median: self.median,
            min: self.min,
            max: self.max,
        }
    }
}

/// A fraction as a short percentage: one decimal below 10%, none above (`2%`, `0.4%`).
fn format_percent(fraction: f64, prefix: &str) -> String {
    let p = fraction * 100.0;
    if p.abs() < 9.95 && (p - p.round()).abs() >= 0.05 {
        format!("{prefix}{p:.1}%")
    } else {
        format!("{prefix}{p:.0}%")
    }
}

/// The 1-based rank `j` of the lower order statistic and the coverage of `x(j), x(n+1-j)`:
/// the largest `j` whose coverage reaches `confidence`, or `j = 1` (`[min, max]`) with its
/// coverage when none does. `n` must be at least 1.
pub(crate) fn order_statistic_rank(n: usize, confidence: f64) -> (usize, f64) {
    let pmf = binomial_half_pmf(n);
    // below[j] = P(Bin(n, ½) < j), accumulated as j grows.
    let mut below = 0.0;
    let mut best = (1, 1.0 - 2.0 * pmf[0]);
    for j in 1..=n.div_ceil(2) {
        below += pmf[j - 1];
        let coverage = (1.0 - 2.0 * below).max(0.0);
        if coverage + LEVEL_EPS >= confidence {
            best = (j, coverage);
        } else {
            break;
        }
    }
    best
}

/// P(Bin(n, ½) = i) for i in 0..=n, computed in log space so large n does not underflow.
fn binomial_half_pmf(n: usize) -> Vec<f64> {
    let mut ln_p = -(n as f64) * std::f64::consts::LN_2;
    let mut pmf = Vec::with_capacity(n + 1);
    for i in 0..=n {
        pmf.push(ln_p.exp());
        if i < n {
            ln_p += ((n - i) as f64 / (i + 1) as f64).ln();
        }
    }
    pmf
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn ranks(n: usize) -> (usize, f64) {
        order_statistic_rank(n, 0.95)
    }

    #[test]
    fn order_statistic_ranks_by_hand() {
        // n = 5: j = 1 covers 1 − 2/32 = 93.75% < 95%: unreachable, [min, max] at 93.75%.
        assert_eq!(ranks(5).0, 1);
        assert!(close(ranks(5).1, 0.9375));
        // n = 6: j = 1 covers 1 − 2/64 = 96.875%; j = 2 only 1 − 2·7/64 = 78.1%.
        assert_eq!(ranks(6).0, 1);
        assert!(close(ranks(6).1, 62.0 / 64.0));
        // n = 9: j = 2 covers 1 − 2·(1+9)/512 = 96.09%; j = 3 only 1 − 2·46/512 = 82%.
        assert_eq!(ranks(9).0, 2);
        assert!(close(ranks(9).1, 1.0 - 20.0 / 512.0));
        // n = 10: j = 2 covers 1 − 2·(1+10)/1024 = 97.85%; j = 3 only 1 − 2·56/1024 = 89%.
        assert_eq!(ranks(10).0, 2);
        assert!(close(ranks(10).1, 1.0 - 22.0 / 1024.0));
        // n = 3 reaches only 75%, n = 1 nothing at all.
        assert!(close(ranks(3).1, 0.75));
        assert!(close(ranks(1).1, 0.0));
        // Asking for exactly what n = 5 can give is met, not missed by rounding.
        assert!(close(order_statistic_rank(5, 0.9375).1, 0.9375));
    }

    #[test]
    fn estimate_picks_the_order_statistics() {
        let v = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0, 10.0];
        let e = estimate(&v, 0.95).unwrap();
        // n = 10 → x(2), x(9).
        assert_eq!((e.n, e.median, e.ci_low, e.ci_high), (10, 5.5, 2.0, 9.0));
        assert!(e.reaches(0.95));
        let e = estimate(&v[..9], 0.95).unwrap();
        // n = 9 → x(2), x(8) of 1..=9.
        assert_eq!((e.median, e.ci_low, e.ci_high), (5.0, 2.0, 8.0));
        let e = estimate(&[3.0, 1.0, 2.0, f64::NAN, 5.0, 4.0], 0.95).unwrap();
        // NaN ignored; n = 5 → [min, max] at 93.75%, short of 95%.
        assert_eq!(
            (e.n, e.ci_low, e.ci_high, e.min, e.max),
            (5, 1.0, 5.0, 1.0, 5.0)
        );
        assert!(close(e.level, 0.9375));
        assert!(!e.reaches(0.95));
        assert!(estimate(&[f64::INFINITY], 0.95).is_none());
        assert!(estimate(&[], 0.95).is_none());
    }

    #[test]
    fn relative_half_width_for_display() {
        let e = estimate(&[3.45, 3.52, 3.59, 3.50, 3.55, 3.48], 0.95).unwrap();
        // x(1) = 3.45, x(6) = 3.59 around 3.51: ±0.07 / 3.51 = 2%.
        assert_eq!(e.plus_minus(), "±2%");
        let e = estimate(&[10.0, 10.02, 10.08], 0.95).unwrap();
        assert_eq!(e.plus_minus(), "±0.4%");
        let e = estimate(&[0.0, 0.0], 0.95).unwrap();
        assert_eq!(e.rel_half_width(), None);
        assert_eq!(e.summary(), Summary::of(&[0.0, 0.0]).unwrap());
    }

    #[test]
    fn large_n_does_not_underflow() {
        let (j, level) = order_statistic_rank(2000, 0.95);
        // Normal approximation: j ≈ n/2 − 1.96·√n/2 ≈ 956.
        assert!((950..=960).contains(&j), "{j}");
        assert!((0.95..0.96).contains(&level));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn interval_contains_the_median(
            v in prop::collection::vec(0.001f64..1e6, 1..40),
            confidence in 0.51f64..0.999,
        ) {
            let e = estimate(&v, confidence).unwrap();
            prop_assert!(e.min <= e.ci_low);
            prop_assert!(e.ci_low <= e.median && e.median <= e.ci_high);
            prop_assert!(e.ci_high <= e.max);
            prop_assert!((0.0..=1.0).contains(&e.level));
            // Either the requested level is reached, or the interval is already [min, max].
            prop_assert!(e.reaches(confidence) || (e.ci_low == e.min && e.ci_high == e.max));
        }
    }
}
