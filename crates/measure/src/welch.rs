//! The interval of a ratio of two settings' times: Welch's t on the logarithms.
//!
//! **Why t and not ranks.** An exact rank interval (Mann–Whitney) can never be surer than its
//! most extreme arrangement allows: five trials a side reach at most 99.2%, so once a sweep's
//! intervals are held to `1 − 5%/(pairs·looks)` a rank test cannot decide *anything* however
//! large the difference — a 450× faster index included. Times are positive and their spread
//! multiplies (a slower host slows every trial by a share), so their logarithms are close to
//! normal and Welch's t on them gives an interval whose width follows the spread seen, at any
//! level: a 450× difference with a few percent of noise is decided from three trials a side,
//! and a 20% one from five. The estimate is the difference of the mean logarithms (the ratio of
//! the geometric means); Welch's degrees of freedom (rounded down, which only widens the
//! interval) keep it honest when one setting is much noisier than the other.
//!
//! Deterministic, like everything in the core: the same trials give the same interval.

use std::cell::RefCell;
use std::collections::HashMap;

use super::projection::t_quantile;

/// Mean and unbiased variance of `x` (variance 0 for fewer than 2 values).
fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if x.len() < 2 {
        return (mean, 0.0);
    }
    let ss: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// The interval of `mean(la) − mean(lb)` (logarithms, both non-empty) at two-sided
/// `confidence`: (point, low, high). With no spread on either side the interval is the point.
pub(crate) fn interval(la: &[f64], lb: &[f64], confidence: f64) -> (f64, f64, f64) {
    let (ma, va) = mean_var(la);
    let (mb, vb) = mean_var(lb);
    let point = ma - mb;
    let (sa, sb) = (va / la.len() as f64, vb / lb.len() as f64);
    let se2 = sa + sb;
    if se2 <= 0.0 || !se2.is_finite() {
        return (point, point, point);
    }
    // Welch–Satterthwaite; a side of one trial contributes no degrees of freedom.
    let dof = |s: f64, n: usize| {
        if n > 1 { s * s / (n as f64 - 1.0) } else { 0.0 }
    };
    let df = (se2 * se2 / (dof(sa, la.len()) + dof(sb, lb.len())))
        .floor()
        .max(1.0);
    let h = quantile(1.0 - (1.0 - confidence) / 2.0, df) * se2.sqrt();
    (point, point - h, point + h)
}

thread_local! {
    static QUANTILES: RefCell<HashMap<(u64, u64), f64>> = RefCell::new(HashMap::new());
}

/// Student's t quantile, remembered per (p, whole degrees of freedom): a sweep asks for the
/// same few levels over and over.
fn quantile(p: f64, df: f64) -> f64 {
    let key = (p.to_bits(), df.to_bits());
    if let Some(q) = QUANTILES.with(|m| m.borrow().get(&key).copied()) {
        return q;
    }
    let q = t_quantile(p, df);
    QUANTILES.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() > 4096 {
            m.clear();
        }
        m.insert(key, q);
    });
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logs(v: &[f64]) -> Vec<f64> {
        v.iter().map(|x| x.ln()).collect()
    }

    #[test]
    fn a_textbook_interval() {
        // Means 1 and 0, variances 1 and 1, 5 a side: se √0.4, df 8, t(0.975, 8) = 2.306.
        let a = [0.0, 0.5, 1.0, 1.5, 2.0];
        let b = [-1.0, -0.5, 0.0, 0.5, 1.0];
        let s2 = 0.625; // the variance of either: (1 + 0.25 + 0 + 0.25 + 1) / 4
        let (p, lo, hi) = interval(&a, &b, 0.95);
        let h = 2.306 * (2.0 * s2 / 5.0f64).sqrt();
        assert!((p - 1.0).abs() < 1e-12);
        assert!(
            (lo - (1.0 - h)).abs() < 2e-3 && (hi - (1.0 + h)).abs() < 2e-3,
            "{lo} {hi}"
        );
    }

    #[test]
    fn a_450x_difference_is_clear_of_one_at_a_strict_level() {
        // Three trials a side, 10% noise: even at 1 − 5%/(21 pairs · 6 looks) the interval
        // stays far from 1 (a rank interval cannot reach that level at all with 3 a side).
        let a = logs(&[25.0, 22.0, 28.0]);
        let b = logs(&[0.05, 0.06, 0.055]);
        let (_, lo, _) = interval(&a, &b, 1.0 - 0.05 / 126.0);
        assert!(lo.exp() > 50.0, "{}", lo.exp());
    }
}
