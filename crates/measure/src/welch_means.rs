//! The ratio of two means known only by their summaries (count, mean, standard deviation),
//! with Welch's interval: what two windows of `pg_stat_statements` give per statement (the
//! calls of a window are its trials; their mean and spread follow from the window's sums).
//!
//! The shift is `ln(mean_a) − ln(mean_b)`; its variance by the delta method is
//! `sd_a²/(n_a·mean_a²) + sd_b²/(n_b·mean_b²)` (each side's squared coefficient of variation
//! over its count), and the degrees of freedom Welch–Satterthwaite's on those two parts,
//! rounded down. A window holds thousands of calls, so the interval is close to a normal
//! one; the log keeps it a ratio, as every other comparison in the core. The verdict is the
//! core's own ([`super::verdict`]): the same words, the same smallest effect.

use super::projection::t_quantile;
use super::verdict::{Better, MIN_TRIALS, Shift, Verdict, verdict_of};

/// One side: how many calls, their mean and their sample standard deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: f64,
    pub mean: f64,
    pub sd: f64,
}

/// The ratio `mean_a / mean_b` with its interval at a level, and the verdict for A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeansRatio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
    pub verdict: Verdict,
}

/// A against B at two-sided `confidence`, with `min_effect` the smallest effect (5 % is
/// `0.05`). None when either side has no positive mean.
pub fn compare(a: Summary, b: Summary, confidence: f64, min_effect: f64) -> Option<MeansRatio> {
    compare_widened(a, b, Between::NONE, confidence, min_effect)
}

/// The squared standard error of the shift `ln(mean_a) − ln(mean_b)` from the calls alone.
pub fn sampling_variance(a: Summary, b: Summary) -> f64 {
    let part = |s: Summary| (s.sd / s.mean).powi(2) / s.n;
    part(a) + part(b)
}

/// What moves between two windows besides the calls' own spread (a load that moved, see
/// `verify`), as a variance on the log scale, and how many degrees of freedom its estimate
/// has (how many other statements it was learned from).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Between {
    pub var: f64,
    pub df: f64,
}

impl Between {
    /// Nothing between the windows but the calls.
    pub const NONE: Between = Between {
        var: 0.0,
        df: f64::INFINITY,
    };
}

/// As [`compare`], with `extra` added to the shift's variance. An extra variance learned from
/// a handful of statements is itself uncertain, and the interval must carry that: its t is of
/// at most as many degrees of freedom as the statements it was learned from, not of the
/// thousands of calls (Welch–Satterthwaite's over the calls otherwise). A cap rather than
/// Satterthwaite over the three parts: the plug-in lets a between-window variance that came
/// out small by chance, just when a statement looks moved, raise the degrees of freedom back
/// (measured in docs/verify.md: 11 % false claims at a 5 % level).
pub fn compare_widened(
    a: Summary,
    b: Summary,
    extra: Between,
    confidence: f64,
    min_effect: f64,
) -> Option<MeansRatio> {
    if !(a.mean > 0.0 && b.mean > 0.0 && a.n >= 1.0 && b.n >= 1.0) {
        return None;
    }
    let point = a.mean.ln() - b.mean.ln();
    let part = |s: Summary| (s.sd / s.mean).powi(2) / s.n;
    let (pa, pb) = (part(a), part(b));
    let dof = |p: f64, n: f64| if n > 1.0 { p * p / (n - 1.0) } else { 0.0 };
    let sampled = pa + pb;
    let welch = (sampled * sampled / (dof(pa, a.n) + dof(pb, b.n))).floor();
    let df = if welch.is_nan() { 1.0 } else { welch }
        .min(extra.df)
        .max(1.0);
    Some(from_log_shift(
        LogShift {
            point,
            se2: sampled + extra.var.max(0.0),
            df,
            n: a.n,
            m: b.n,
        },
        confidence,
        min_effect,
    ))
}

/// A shift of logarithms known by its point, its squared standard error and its degrees of
/// freedom (a weighted total's, from the delta method), with the calls behind each side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogShift {
    pub point: f64,
    pub se2: f64,
    pub df: f64,
    pub n: f64,
    pub m: f64,
}

/// The ratio, its interval at `confidence` and the core's verdict for a shift of logarithms.
pub fn from_log_shift(s: LogShift, confidence: f64, min_effect: f64) -> MeansRatio {
    let (low, high) = if s.se2 > 0.0 && s.se2.is_finite() {
        let h = t_quantile(1.0 - (1.0 - confidence) / 2.0, s.df.max(1.0)) * s.se2.sqrt();
        (s.point - h, s.point + h)
    } else {
        (s.point, s.point)
    };
    let shift = Shift {
        n: s.n as usize,
        m: s.m as usize,
        point: s.point,
        low,
        high,
        level: confidence,
        decisive: s.n >= MIN_TRIALS as f64 && s.m >= MIN_TRIALS as f64,
    };
    MeansRatio {
        ratio: s.point.exp(),
        low: low.exp(),
        high: high.exp(),
        level: confidence,
        verdict: verdict_of(&shift, Better::Lower, (1.0 + min_effect).ln()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: f64, mean: f64, sd: f64) -> Summary {
        Summary { n, mean, sd }
    }

    #[test]
    fn a_clear_halving_is_faster_and_equal_means_are_shown_the_same() {
        let r = compare(s(1000.0, 1.0, 0.5), s(1000.0, 2.0, 1.0), 0.95, 0.05).unwrap();
        assert!((r.ratio - 0.5).abs() < 1e-12 && r.high < 0.6, "{r:?}");
        assert_eq!(r.verdict, Verdict::Faster);
        let same = compare(s(50000.0, 1.0, 0.3), s(50000.0, 1.0, 0.3), 0.95, 0.05).unwrap();
        assert_eq!(same.verdict, Verdict::NoSignificantDifference);
        let few = compare(s(5.0, 1.0, 0.5), s(5.0, 1.1, 0.5), 0.95, 0.05).unwrap();
        assert_eq!(few.verdict, Verdict::TooFewTrials);
        assert!(compare(s(5.0, 0.0, 0.0), s(5.0, 1.0, 0.1), 0.95, 0.05).is_none());
    }

    #[test]
    fn the_interval_matches_the_delta_method_by_hand() {
        // cv² / n = 0.25/100 a side, se = √0.005; t(0.975, df) for df = 198.
        let r = compare(s(100.0, 2.0, 1.0), s(100.0, 2.0, 1.0), 0.95, 0.05).unwrap();
        let h = t_quantile(0.975, 198.0) * 0.005f64.sqrt();
        assert!((r.high.ln() - h).abs() < 1e-9 && (r.low.ln() + h).abs() < 1e-9);
    }

    #[test]
    fn an_extra_variance_from_four_statements_carries_their_four_degrees_of_freedom() {
        // The calls' own part is tiny (cv² / n = 1e-8 a side): the extra variance dominates,
        // and its t is of 4 degrees of freedom (2.78 at 95 %), not of the million calls (1.96).
        let extra = Between { var: 0.01, df: 4.0 };
        let r = compare_widened(s(1e6, 1.0, 0.1), s(1e6, 1.0, 0.1), extra, 0.95, 0.05).unwrap();
        let h = t_quantile(0.975, 4.0) * (0.01f64 + 2e-8).sqrt();
        assert!((r.high.ln() - h).abs() < 1e-6, "{r:?} {h}");
        let none = compare_widened(
            s(1e6, 1.0, 0.1),
            s(1e6, 1.0, 0.1),
            Between::NONE,
            0.95,
            0.05,
        );
        assert!(none.unwrap().high.ln() < 0.001);
    }
}
