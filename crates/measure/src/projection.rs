//! Projecting a time measured at a few sizes to a larger size, with its uncertainty: least
//! squares on the model t = a + b·n·log₂n (a comparison sort's cost plus a fixed part) over
//! every trial at every size, and the prediction interval of one more trial at the target
//! size from Student's t with n − 2 degrees of freedom. The interval widens with the distance
//! from the measured sizes (the lever of the extrapolation) and with the trials' scatter.
//!
//! That interval holds only the fit's noise: it assumes the model is right. The model's own
//! error is measured by leaving the largest size out: the smaller sizes' fit predicts the
//! largest size's median, and the relative miss, scaled to the projection's reach, widens the
//! interval on both sides. The scale is that of a straight line extrapolated past a bend:
//! its miss grows as D·(S + D), D the distance beyond the fitted sizes and S their span, both
//! in doublings of the size; the projection's D·(S + D) over the leave-out's (at least 1).
//! Three sample sizes ×2 apart projected ×10 give 8.8 times the leave-out's miss. A miss above [`MODEL_MISS_FLAG`] is for the caller to say. Neither
//! covers a change of regime the samples never showed (a sort that spills to disk only at
//! full size), which the caller must say too.

use serde::{Deserialize, Serialize};

/// The model's name as reports print it.
pub(crate) const NLOGN: &str = "t = a + b·n·log₂n";

/// A leave-largest-out miss above this share is worth a sentence: the model bends.
pub(crate) const MODEL_MISS_FLAG: f64 = 0.05;

/// A projected time and its interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    pub model: String,
    /// The size projected to.
    pub to_n: f64,
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// The prediction interval's confidence, 0..1.
    pub confidence: f64,
    /// Trials and distinct sizes the fit used.
    pub trials: usize,
    pub sizes: usize,
    /// The largest size measured, and how far beyond it the projection reaches (×).
    pub from_n: f64,
    pub reach: f64,
    pub r2: f64,
    /// The fit's own prediction interval (noise only), before the model error widened it
    /// into `[low, high]`.
    #[serde(default)]
    pub noise_low: f64,
    #[serde(default)]
    pub noise_high: f64,
    /// The model error: (predicted − measured) ÷ measured for the largest size's median when
    /// the fit leaves that size out. None with two sizes (nothing left to fit on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_miss: Option<f64>,
    /// The share of `value` added on each side for the model error: |miss| scaled from the
    /// leave-out's reach to the projection's (see the module's notes).
    #[serde(default)]
    pub model_widening: f64,
}

impl Projection {
    /// True when the model missed the largest size by more than [`MODEL_MISS_FLAG`].
    pub fn model_bends(&self) -> bool {
        self.model_miss.is_some_and(|m| m.abs() > MODEL_MISS_FLAG)
    }
}

/// y = intercept + slope · x by ordinary least squares, with its coefficient of determination.
struct LeastSquares {
    intercept: f64,
    slope: f64,
    r2: f64,
}

impl LeastSquares {
    /// None with fewer than two distinct x.
    fn of(pts: &[(f64, f64)]) -> Option<LeastSquares> {
        let n = pts.len() as f64;
        if pts.len() < 2 {
            return None;
        }
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        if sxx <= 0.0 {
            return None;
        }
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let slope = sxy / sxx;
        let intercept = my - slope * mx;
        let ss_tot: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
        let ss_res: f64 = pts
            .iter()
            .map(|p| (p.1 - (intercept + slope * p.0)).powi(2))
            .sum();
        let r2 = if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        };
        Some(LeastSquares {
            intercept,
            slope,
            r2,
        })
    }

    fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

fn x_of(n: f64) -> f64 {
    n * n.max(2.0).log2()
}

/// Project `points` (size, seconds) to `to_n`, the interval widened by the model error
/// measured leaving the largest size out. None with fewer than 3 trials or 2 sizes, or when
/// the time does not grow with the size (nothing to extrapolate).
pub fn project_nlogn(points: &[(f64, f64)], to_n: f64, confidence: f64) -> Option<Projection> {
    let mut p = fit_nlogn(points, to_n, confidence)?;
    let Some((miss, [smallest, second, largest])) = leave_largest_out(points) else {
        return Some(p);
    };
    let lever = |span: f64, beyond: f64| beyond.max(0.0) * (span + beyond.max(0.0));
    let loo = lever((second / smallest).log2(), (largest / second).log2());
    let full = lever((largest / smallest).log2(), (to_n / largest).log2());
    let scale = if loo > 0.0 {
        (full / loo).max(1.0)
    } else {
        1.0
    };
    let widening = miss.abs() * scale;
    p.model_miss = Some(miss);
    p.model_widening = widening;
    p.low = (p.noise_low - p.value * widening).max(0.0);
    p.high = p.noise_high + p.value * widening;
    Some(p)
}

/// The model error: fit every size but the largest (two points are enough for the line) and
/// predict the largest size's median. Returns the relative miss and the smallest, second
/// largest and largest sizes; None with fewer than three sizes.
fn leave_largest_out(points: &[(f64, f64)]) -> Option<(f64, [f64; 3])> {
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).filter(|n| *n > 0.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let &[smallest, .., second, largest] = &sizes[..] else {
        return None;
    };
    if sizes.len() < 3 {
        return None;
    }
    let rest: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 < largest && p.1.is_finite())
        .map(|(n, t)| (x_of(*n), *t))
        .collect();
    let fit = LeastSquares::of(&rest)?;
    let at_largest: Vec<f64> = points
        .iter()
        .filter(|p| p.0 == largest)
        .map(|p| p.1)
        .collect();
    let measured = crate::measure::stats::median(&at_largest)?;
    let miss = (fit.at(x_of(largest)) - measured) / measured;
    (measured > 0.0).then_some((miss, [smallest, second, largest]))
}

/// The least-squares fit and its prediction interval (noise only).
fn fit_nlogn(points: &[(f64, f64)], to_n: f64, confidence: f64) -> Option<Projection> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(n, t)| *n > 0.0 && n.is_finite() && t.is_finite())
        .map(|(n, t)| (x_of(*n), *t))
        .collect();
    let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if pts.len() < 3 || sizes.len() < 2 {
        return None;
    }
    let fit = LeastSquares::of(&pts)?;
    if fit.slope <= 0.0 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sse: f64 = pts.iter().map(|p| (p.1 - fit.at(p.0)).powi(2)).sum();
    let df = pts.len() - 2;
    let s = if df > 0 {
        (sse / df as f64).sqrt()
    } else {
        0.0
    };
    let x0 = x_of(to_n);
    let value = fit.at(x0);
    let se = s * (1.0 + 1.0 / n + (x0 - mx).powi(2) / sxx).sqrt();
    let t = t_quantile(0.5 + confidence / 2.0, df.max(1) as f64);
    let from_n = sizes.last().copied().unwrap_or(0.0);
    let (low, high) = ((value - t * se).max(0.0), value + t * se);
    Some(Projection {
        model: NLOGN.into(),
        to_n,
        value,
        low,
        high,
        confidence,
        trials: pts.len(),
        sizes: sizes.len(),
        from_n,
        reach: if from_n > 0.0 { to_n / from_n } else { 0.0 },
        r2: fit.r2,
        noise_low: low,
        noise_high: high,
        model_miss: None,
        model_widening: 0.0,
    })
}

/// The `p` quantile of Student's t with `df` degrees of freedom (bisection on the CDF).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if p <= 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p && hi < 1e7 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(T ≤ t) for t ≥ 0: 1 − ½·I_{df/(df+t²)}(df/2, ½).
fn t_cdf(t: f64, df: f64) -> f64 {
    1.0 - 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_quantiles_match_the_tables() {
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (5.0, 2.571),
            (13.0, 2.160),
            (30.0, 2.042),
            (1000.0, 1.962),
        ] {
            let q = t_quantile(0.975, df);
            assert!((q - want).abs() < 0.002, "df {df}: {q} vs {want}");
        }
        assert!((t_quantile(0.95, 10.0) - 1.812).abs() < 0.002);
        assert!((t_quantile(0.025, 5.0) + 2.571).abs() < 0.002);
    }

    #[test]
    fn an_exact_curve_projects_to_itself_and_noise_widens_the_interval() {
        let t = |n: f64| 0.01 + 2e-8 * n * n.log2();
        let sizes = [25_000.0, 50_000.0, 100_000.0];
        let exact: Vec<(f64, f64)> = sizes
            .iter()
            .flat_map(|&n| (0..4).map(move |_| (n, t(n))))
            .collect();
        let p = project_nlogn(&exact, 1e6, 0.95).unwrap();
        assert!((p.value - t(1e6)).abs() < 1e-9, "{p:?}");
        assert!((p.high - p.low) < 1e-6);
        assert_eq!((p.trials, p.sizes, p.reach), (12, 3, 10.0));
        // ±3% scatter: the true value stays inside a wider interval.
        let noisy: Vec<(f64, f64)> = exact
            .iter()
            .enumerate()
            .map(|(i, (n, v))| (*n, v * [0.97, 1.01, 1.03, 0.99][i % 4]))
            .collect();
        let q = project_nlogn(&noisy, 1e6, 0.95).unwrap();
        assert!(q.low < t(1e6) && t(1e6) < q.high, "{q:?}");
        assert!(q.high - q.low > 0.01 * t(1e6));
        // Times that do not grow, or one size only: nothing to project.
        assert!(project_nlogn(&[(1e4, 1.0), (2e4, 0.9), (4e4, 0.8)], 1e6, 0.95).is_none());
        assert!(project_nlogn(&[(1e4, 1.0), (1e4, 1.1), (1e4, 0.9)], 1e6, 0.95).is_none());
        // An exact curve leaves nothing for the model error to add.
        assert_eq!(
            (
                p.model_miss.map(f64::abs) < Some(1e-9),
                p.model_widening < 1e-9
            ),
            (true, true)
        );
    }

    /// Build times that grow faster than n·log n (an extra merge pass per doubling, +20%
    /// each): the noise-only interval of the fit misses the truth ×10 beyond the samples;
    /// the interval widened by the leave-largest-out miss holds it, and the bend is flagged.
    #[test]
    fn a_model_that_bends_widens_the_interval_so_the_truth_is_covered() {
        let t = |n: f64| 0.01 + 2e-8 * n * n.log2() * (1.0 + 0.2 * (n / 25_000.0).log2());
        let scatter = [0.98, 1.01, 1.02, 0.99];
        let points: Vec<(f64, f64)> = [25_000.0, 50_000.0, 100_000.0]
            .iter()
            .flat_map(|&n| scatter.iter().map(move |s| (n, t(n) * s)))
            .collect();
        let truth = t(1e6);
        let noise_only = fit_nlogn(&points, 1e6, 0.95).unwrap();
        assert!(
            noise_only.high < truth,
            "the old interval misses: {noise_only:?} vs {truth}"
        );
        let p = project_nlogn(&points, 1e6, 0.95).unwrap();
        assert_eq!(
            (p.noise_low, p.noise_high),
            (noise_only.low, noise_only.high)
        );
        assert!(p.low <= truth && truth <= p.high, "{p:?} vs {truth}");
        assert!(p.model_bends(), "{p:?}");
        assert!(
            p.model_miss.unwrap() < 0.0,
            "the smaller sizes under-predict"
        );
        // Two sizes: no leave-out, the noise interval alone, and no miss to report.
        let two: Vec<(f64, f64)> = points.iter().filter(|p| p.0 < 1e5).copied().collect();
        let q = project_nlogn(&two, 1e6, 0.95).unwrap();
        assert_eq!(
            (q.model_miss, q.low, q.high),
            (None, q.noise_low, q.noise_high)
        );
    }

    /// On a curve that is n·log n with noise, the leave-out miss stays small and unflagged.
    #[test]
    fn noise_alone_is_not_called_a_bend() {
        let t = |n: f64| 0.01 + 2e-8 * n * n.log2();
        let scatter = [0.98, 1.01, 1.02, 0.99];
        let points: Vec<(f64, f64)> = [25_000.0, 50_000.0, 100_000.0]
            .iter()
            .flat_map(|&n| scatter.iter().map(move |s| (n, t(n) * s)))
            .collect();
        let p = project_nlogn(&points, 1e6, 0.95).unwrap();
        assert!(!p.model_bends(), "{p:?}");
        assert!(p.low <= t(1e6) && t(1e6) <= p.high, "{p:?}");
    }
}
