//! Trials too short to mean anything. Under about 100 ms, the timer, the scheduler and the
//! host's other work weigh as much as the setting under test (on these 2-core machines a
//! 50 ms trial moves ±50% from run to run), so a verdict on such trials says more about the
//! machine than about the setting. Experiments name it as a confounder and say how much more
//! work per trial (rows, units) would reach the threshold.

/// Trials whose median lasts less than this many seconds are called short.
pub(crate) const SHORT_TRIAL_S: f64 = 0.1;

/// When `median_seconds` is under [`SHORT_TRIAL_S`]: the factor by which the work of a trial
/// would have to grow to last that long (assuming time grows with the work).
pub fn too_short(median_seconds: f64) -> Option<f64> {
    (median_seconds.is_finite() && median_seconds > 0.0 && median_seconds < SHORT_TRIAL_S)
        .then(|| SHORT_TRIAL_S / median_seconds)
}

/// `x` rounded up to 1, 2 or 5 times a power of ten (200k, 500k, 1M): a count to suggest.
pub fn nice_up(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let p = 10f64.powf(x.log10().floor());
    let m = x / p;
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|&s| m <= s * (1.0 + 1e-9))
        .unwrap_or(10.0);
    step * p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_trials_and_the_work_that_would_reach_100_ms() {
        assert_eq!(too_short(0.05), Some(2.0));
        assert_eq!(too_short(0.1), None);
        assert_eq!(too_short(2.0), None);
        assert_eq!(too_short(0.0), None);
        assert_eq!(too_short(f64::NAN), None);
        assert_eq!(nice_up(300_000.0 * 2.0), 1_000_000.0);
        assert_eq!(nice_up(130_000.0), 200_000.0);
        assert_eq!(nice_up(200_000.0), 200_000.0);
        assert_eq!(nice_up(0.3), 0.5);
    }
}
