//! How far statements move between two windows beyond their calls' own spread: what widens
//! each statement's interval in [`super::compare`] (docs/verify.md, the statistical review).

use crate::capture::file_window::WindowStatement;
use crate::measure::welch_means::{self, Between};

/// For each pair, how far the *other* statements moved between the windows beyond their
/// calls' own spread: the mean over them of `ln(ratio)² − its sampling variance` (0 when
/// negative or with fewer than two others), with as many degrees of freedom as statements it
/// was learned from. Calls of one window are not independent draws: they share its load,
/// cache and host, and a shift of the whole window moves every statement. The statements
/// themselves measure it, and each interval is widened by what the others show (a random
/// effect around ×1, leave-one-out so a statement that did change does not widen its own
/// interval). Flagged statements count as others too. An estimate from four statements is
/// uncertain itself: the interval's t is of at most that many degrees of freedom (see
/// [`welch_means::compare_widened`]), else a statement-by-statement spread would be named
/// several times more often than the level says (docs/verify.md, the simulation).
pub fn between_windows(pairs: &[(&WindowStatement, &WindowStatement)]) -> Vec<Between> {
    let moved: Vec<Option<f64>> = pairs
        .iter()
        .map(|(a, b)| {
            let (sa, sb) = (super::compare::summary(a), super::compare::summary(b));
            (sa.mean > 0.0 && sb.mean > 0.0)
                .then(|| (sb.mean / sa.mean).ln().powi(2) - welch_means::sampling_variance(sb, sa))
        })
        .collect();
    (0..pairs.len())
        .map(|i| {
            let others: Vec<f64> = moved
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, m)| *m)
                .collect();
            if others.len() < 2 {
                return Between::NONE;
            }
            Between {
                var: (others.iter().sum::<f64>() / others.len() as f64).max(0.0),
                df: others.len() as f64,
            }
        })
        .collect()
}
