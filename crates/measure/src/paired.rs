//! Paired rounds: the interval of a ratio when each round ran both settings once, one after
//! the other (a blocked design). The tune's race and its confirmation run that way, but their
//! rounds were analysed as two independent samples, so the drift *between* rounds — a host
//! that is 20% slower for a minute, a cache that warms over the tune — stayed in the interval
//! and swamped a steady 5% gain. Paired, each round gives one within-round log ratio
//! `ln(a_i) − ln(b_i)`; whatever slowed both sides in round `i` cancels, and the interval is
//! Student's t on those differences (n − 1 degrees of freedom). With no drift it is about as
//! wide as Welch's; with drift it is as narrow as the noise within a round.
//!
//! Only complete pairs count: round `i` of A with round `i` of B, both usable (finite and
//! positive). A side that ran fewer rounds (a value dropped from the race) pairs its rounds
//! with the first rounds of the other, which are the same rounds: every value in a race runs
//! every round while it is in it.

use super::projection::t_quantile;

/// The within-round log ratios of the rounds both sides ran, in round order.
pub(crate) fn log_ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| super::verdict::is_usable(**x) && super::verdict::is_usable(**y))
        .map(|(x, y)| x.ln() - y.ln())
        .collect()
}

/// The interval of the mean of `d` (within-round log ratios, non-empty) at two-sided
/// `confidence`: (point, low, high). With one pair or no spread the interval is the point.
pub fn interval(d: &[f64], confidence: f64) -> (f64, f64, f64) {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    if d.len() < 2 {
        return (mean, mean, mean);
    }
    let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt();
    if se <= 0.0 || !se.is_finite() {
        return (mean, mean, mean);
    }
    let h = t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1.0) * se;
    (mean, mean - h, mean + h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_shared_by_a_round_cancels() {
        // B is 5% slower than A in every round, while the rounds drift by ±30%.
        let drift = [1.0, 1.3, 0.8, 1.2, 0.7, 1.1];
        let a: Vec<f64> = drift.iter().map(|d| 100.0 * d).collect();
        let b: Vec<f64> = drift.iter().map(|d| 105.0 * d).collect();
        let d = log_ratios(&a, &b);
        let (point, low, high) = interval(&d, 0.99);
        assert!((point - (100.0f64 / 105.0).ln()).abs() < 1e-12);
        assert!(high - low < 1e-9, "{low} {high}");
        // Welch on the same trials cannot tell them apart.
        let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        let (_, wl, wh) = crate::measure::welch::interval(&la, &lb, 0.99);
        assert!(wl < 0.0 && wh > 0.0, "{wl} {wh}");
    }

    #[test]
    fn only_complete_usable_pairs_count() {
        let d = log_ratios(&[1.0, f64::NAN, 4.0, 8.0], &[1.0, 2.0, 2.0]);
        assert_eq!(d.len(), 2);
        assert!((d[1] - 2f64.ln()).abs() < 1e-12);
        // The interval is t on n − 1 = 2 degrees of freedom: 4.303 at 95%.
        let (p, l, h) = interval(&[0.1, 0.2, 0.3], 0.95);
        assert!((p - 0.2).abs() < 1e-12);
        assert!(((h - l) / 2.0 - 4.302_652_7 * 0.1 / 3f64.sqrt()).abs() < 1e-4);
    }
}
