//! Fits that carry a measurement past the largest table measured: what a size or the time of
//! one operation does as a table grows, with an interval and the shape it assumed.
//!
//! **Shapes.** Sizes and the cost of reading or writing a version never shrink as rows are
//! added, so every shape is non-decreasing in the rows `x`:
//!
//! - `flat`: `y = c` — no growth was shown;
//! - `logarithmic`: `y = a + b·ln(1 + x)`, `b ≥ 0` — a B-tree's depth;
//! - `linear`: `y = a + b·x`, `b ≥ 0` — work in proportion to the rows (a scan; any size).
//!
//! **Times** ([`Trend::of_times`]) are fitted on every repeat, not on medians. For each growing
//! shape the slope is the Theil–Sen estimate (the median of the slopes between every two
//! points at different `x`) and its interval is Sen's: a pair of those sorted slopes chosen
//! from the distribution of Kendall's S (normal approximation, ties in `x` accounted for), so
//! one disturbed trial moves little and nothing is assumed about the noise. A shape is a
//! trend only when its whole slope interval lies above zero — growth *shown* at the run's
//! confidence; among the shapes that show it, the one with the smaller sum of absolute
//! residuals fits better. When none shows growth the time is `flat`: the median of every
//! repeat with its order-statistic interval. Noise therefore never becomes a trend, and a
//! trend is never carried along a slope the data could not tell from zero.
//!
//! **Sizes** ([`Trend::of_sizes`]) are one catalog reading per step, exact: linear in rows,
//! anchored at the largest step, at the bytes per row the last pair of steps added; the
//! interval spans the smallest and largest bytes per row any two consecutive steps showed.
//!
//! **The interval of a projection** is the band between the lines of the slope interval's two
//! ends (each through its own intercept), around the estimate: it widens as the projection
//! moves away from the measurements, and it says nothing about what no measured step could
//! show (a jump when indexes outgrow memory), which is why every projection also says how far
//! past the largest measured table it reaches ([`reach`], [`EXTRAPOLATION_LIMIT`]).

use serde::{Deserialize, Serialize};

use super::interval::estimate;
use super::normal::normal_cdf;

/// A projection is called extrapolated, with its factor, when it reaches more than this many
/// times the largest measured table.
pub(crate) const EXTRAPOLATION_LIMIT: f64 = 10.0;

/// How a quantity grows with the rows of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    Flat,
    Logarithmic,
    Linear,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Logarithmic => "logarithmic",
            Shape::Linear => "linear",
        }
    }

    /// The transformed x the shape is linear in.
    fn g(self, x: f64) -> f64 {
        match self {
            Shape::Flat => 0.0,
            Shape::Logarithmic => x.max(0.0).ln_1p(),
            Shape::Linear => x,
        }
    }
}

/// `y = intercept + slope · g(x)` for the shape's `g`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Line {
    pub intercept: f64,
    pub slope: f64,
}

/// A fitted growth: the estimate and the lines of its interval's ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    pub shape: Shape,
    pub fit: Line,
    pub low: Line,
    pub high: Line,
    /// Coverage the interval reaches (below the asked confidence when the points are too few).
    pub level: f64,
    /// Points fitted and the largest x among them.
    pub points: usize,
    pub x_max: f64,
}

/// A value carried to some x: the estimate, its interval and the shape that carried it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Projected {
    pub shape: Shape,
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Projected {
    /// "58 ms [49 ms–65 ms]" in the caller's unit; the value alone when the interval is a point.
    pub fn show(&self, fmt: &dyn Fn(f64) -> String) -> String {
        let (v, lo, hi) = (fmt(self.value), fmt(self.low), fmt(self.high));
        if lo == v && hi == v {
            v
        } else {
            format!("{v} [{lo}–{hi}]")
        }
    }
}

impl Shape {
    /// How the shape reads beside a projected figure.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Flat => "flat: no growth shown",
            Shape::Logarithmic => "logarithmic in rows",
            Shape::Linear => "linear in rows",
        }
    }
}

impl Trend {
    /// The trend of a time measured at several table sizes: `points` are (rows, seconds),
    /// every repeat its own point. None without a finite point.
    pub fn of_times(points: &[(f64, f64)], confidence: f64) -> Option<Trend> {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && *x >= 0.0 && y.is_finite())
            .collect();
        let flat = flat(&pts, confidence)?;
        let shown = [Shape::Logarithmic, Shape::Linear]
            .into_iter()
            .filter_map(|s| theil_sen(&pts, s, confidence))
            .filter(|t| t.low.slope > 0.0 && t.level + 1e-9 >= confidence)
            .min_by(|a, b| a.residual(&pts).total_cmp(&b.residual(&pts)));
        Some(shown.unwrap_or(flat))
    }

    /// The trend of a size read once per step: `points` are (rows, bytes). Linear in rows from
    /// the largest step; None without a step holding rows.
    pub fn of_sizes(points: &[(f64, f64)]) -> Option<Trend> {
        let mut pts: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && *x >= 0.0 && y.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let &(x_last, y_last) = pts.last()?;
        // Bytes per row each step added over the one before (from nothing for a lone step).
        let mut rates: Vec<f64> = pts
            .windows(2)
            .filter(|w| w[1].0 > w[0].0)
            .map(|w| ((w[1].1 - w[0].1) / (w[1].0 - w[0].0)).max(0.0))
            .collect();
        if rates.is_empty() {
            if x_last <= 0.0 {
                return None;
            }
            rates.push((y_last / x_last).max(0.0));
        }
        let through = |slope: f64| Line {
            intercept: y_last - slope * x_last,
            slope,
        };
        let last = *rates.last()?;
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Trend {
            shape: Shape::Linear,
            fit: through(last),
            low: through(lo),
            high: through(hi),
            level: 1.0,
            points: pts.len(),
            x_max: x_last,
        })
    }

    /// The estimate and its interval at `x`, never below zero.
    pub fn at(&self, x: f64) -> Projected {
        let g = self.shape.g(x);
        let on = |l: &Line| (l.intercept + l.slope * g).max(0.0);
        let value = on(&self.fit);
        let (a, b) = (on(&self.low), on(&self.high));
        Projected {
            shape: self.shape,
            value,
            low: value.min(a).min(b),
            high: value.max(a).max(b),
        }
    }

    /// Where the estimate reaches `y` (None when it never does: flat, or already above).
    pub fn x_where(&self, y: f64) -> Option<f64> {
        let l = self.fit;
        if l.slope <= 0.0 {
            return None;
        }
        let g = (y - l.intercept) / l.slope;
        let x = match self.shape {
            Shape::Flat => return None,
            Shape::Logarithmic => g.exp_m1(),
            Shape::Linear => g,
        };
        (x.is_finite() && x >= 0.0).then_some(x)
    }

    fn residual(&self, pts: &[(f64, f64)]) -> f64 {
        pts.iter()
            .map(|&(x, y)| (y - self.fit.intercept - self.fit.slope * self.shape.g(x)).abs())
            .sum()
    }
}

/// `x` as a multiple of the largest measured x (∞ when nothing but an empty table was).
pub fn reach(x: f64, x_max: f64) -> f64 {
    if x_max > 0.0 {
        x / x_max
    } else {
        f64::INFINITY
    }
}

/// True when a projection to `reach` goes past [`EXTRAPOLATION_LIMIT`].
pub fn extrapolated(reach: f64) -> bool {
    reach > EXTRAPOLATION_LIMIT
}

/// "extrapolated ×10000" past the limit, "projected" within it.
pub fn reach_words(reach: f64) -> String {
    if !reach.is_finite() {
        "extrapolated from an empty table".into()
    } else if extrapolated(reach) {
        format!("extrapolated ×{}", round_reach(reach))
    } else {
        "projected".into()
    }
}

/// A reach as people say it: 10000, 5000, 38, 12.
fn round_reach(r: f64) -> String {
    if r >= 100.0 {
        let p = 10f64.powi(r.log10().floor() as i32 - 1);
        format!("{}", (r / p).round() * p)
    } else {
        format!("{}", r.round())
    }
}

fn flat(pts: &[(f64, f64)], confidence: f64) -> Option<Trend> {
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let e = estimate(&ys, confidence)?;
    let level = |c: f64| Line {
        intercept: c,
        slope: 0.0,
    };
    Some(Trend {
        shape: Shape::Flat,
        fit: level(e.median),
        low: level(e.ci_low),
        high: level(e.ci_high),
        level: e.level,
        points: pts.len(),
        x_max: pts.iter().map(|p| p.0).fold(0.0, f64::max),
    })
}

/// Theil–Sen on `g(x)` with Sen's interval; None when no two points differ in x.
fn theil_sen(pts: &[(f64, f64)], shape: Shape, confidence: f64) -> Option<Trend> {
    let gx: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (shape.g(x), y)).collect();
    let mut slopes = Vec::new();
    for (i, a) in gx.iter().enumerate() {
        for b in &gx[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let n_slopes = slopes.len();
    let (k_low, k_high, level) = sen_ranks(&gx, n_slopes, confidence);
    let through = |slope: f64| {
        let mut r: Vec<f64> = gx.iter().map(|&(g, y)| y - slope * g).collect();
        r.sort_by(f64::total_cmp);
        Line {
            intercept: super::stats::median_sorted(&r),
            slope,
        }
    };
    Some(Trend {
        shape,
        fit: through(super::stats::median_sorted(&slopes)),
        low: through(slopes[k_low - 1]),
        high: through(slopes[k_high - 1]),
        level,
        points: pts.len(),
        x_max: pts.iter().map(|p| p.0).fold(0.0, f64::max),
    })
}

/// Sen's ranks (1-based) of the interval's ends among `n_slopes` sorted slopes, and the
/// coverage they reach, from Kendall's S with ties in x.
fn sen_ranks(gx: &[(f64, f64)], n_slopes: usize, confidence: f64) -> (usize, usize, f64) {
    let n = gx.len() as f64;
    let mut xs: Vec<f64> = gx.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    let ties: f64 = xs
        .chunk_by(|a, b| a == b)
        .map(|g| {
            let t = g.len() as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    let sd = ((n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0).sqrt();
    let z = normal_quantile(0.5 + confidence / 2.0);
    let c = z * sd;
    let nf = n_slopes as f64;
    let m1 = ((nf - c) / 2.0).round();
    let m2 = ((nf + c) / 2.0).round();
    let k_low = (m1 as i64).clamp(1, n_slopes as i64) as usize;
    let k_high = (m2 as i64 + 1).clamp(1, n_slopes as i64) as usize;
    let level = if m1 >= 1.0 && (m2 as usize) < n_slopes && sd > 0.0 {
        confidence
    } else {
        // The widest pair, S(1) and S(N): the coverage it reaches.
        let c_max = nf - 2.0;
        if sd > 0.0 {
            (2.0 * normal_cdf(c_max / sd) - 1.0).max(0.0)
        } else {
            0.0
        }
    };
    (k_low, k_high.max(k_low), level)
}

/// The standard normal quantile, by bisection on Φ (accurate to well below what it is used for).
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0, 10.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeats(at: &[(f64, [f64; 4])]) -> Vec<(f64, f64)> {
        at.iter()
            .flat_map(|(x, ys)| ys.iter().map(move |y| (*x, *y)))
            .collect()
    }

    #[test]
    fn the_normal_quantile_matches_the_tables() {
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((normal_quantile(0.95) - 1.644_854).abs() < 1e-5);
        assert!(normal_quantile(0.5).abs() < 1e-6);
    }

    #[test]
    fn noise_without_a_trend_stays_flat_at_the_median_of_every_repeat() {
        // Snapshot writes as pulp-quick measured them: 58/52/65 ms medians, 69% spread.
        let pts = repeats(&[
            (0.0, [0.058, 0.049, 0.089, 0.057]),
            (10_000.0, [0.052, 0.047, 0.061, 0.051]),
            (100_000.0, [0.065, 0.046, 0.068, 0.064]),
        ]);
        let t = Trend::of_times(&pts, 0.95).unwrap();
        assert_eq!(t.shape, Shape::Flat);
        // Sorted: 46 47 49 51 52 57 58 61 64 65 68 89 → median (57+58)/2, and at 12 points
        // the 95% interval is x(3)..x(10) (96.1%).
        let p = t.at(1e9);
        assert!((p.value - 0.0575).abs() < 1e-12, "{p:?}");
        assert_eq!((p.low, p.high), (0.049, 0.065));
        assert!((t.level - 0.9614).abs() < 1e-3, "{}", t.level);
    }

    #[test]
    fn a_steady_rise_is_a_linear_trend_with_sens_interval() {
        // 22/23/28 ms at 0, 10k and 100k rows, each repeat within ±0.2 ms: growth is shown
        // and a line fits it far better than a logarithm.
        let pts = repeats(&[
            (0.0, [0.0220, 0.0218, 0.0222, 0.0221]),
            (10_000.0, [0.0230, 0.0229, 0.0231, 0.0232]),
            (100_000.0, [0.0280, 0.0279, 0.0281, 0.0282]),
        ]);
        let t = Trend::of_times(&pts, 0.95).unwrap();
        assert_eq!(t.shape, Shape::Linear);
        // 48 slopes between groups; Kendall's S: Var = (12·11·29 − 3·4·3·13)/18 = 186.67,
        // C = 1.96·13.66 = 26.8, so ranks round(10.6) = 11 and round(37.4) + 1 = 38.
        assert_eq!(sen_ranks(&pts, 48, 0.95).0, 11);
        assert_eq!(sen_ranks(&pts, 48, 0.95).1, 38);
        // The slopes from 10k to 100k (about 5.6e-8 s/row) and from 0 to 100k (6e-8) make
        // the middle; from 0 to 10k (1e-7) the top.
        assert!(
            (5.5e-8..6.2e-8).contains(&t.fit.slope),
            "slope {}",
            t.fit.slope
        );
        let p = t.at(1e9);
        assert!(p.low <= p.value && p.value <= p.high);
        assert!((50.0..65.0).contains(&p.value), "{p:?}");
        assert!(p.high > p.value * 1.2, "the interval widens far out: {p:?}");
    }

    #[test]
    fn a_read_that_grows_with_depth_is_logarithmic() {
        // y = 1 ms + 0.1 ms · ln(1 + x), exactly, at four table sizes.
        let f = |x: f64| 0.001 + 0.0001 * x.ln_1p();
        let mut pts = Vec::new();
        for x in [1000.0, 10_000.0, 100_000.0, 1_000_000.0] {
            for d in [-1e-6, 0.0, 1e-6] {
                pts.push((x, f(x) + d));
            }
        }
        let t = Trend::of_times(&pts, 0.95).unwrap();
        assert_eq!(t.shape, Shape::Logarithmic);
        assert!((t.at(1e9).value - f(1e9)).abs() < 1e-5);
    }

    #[test]
    fn times_falling_with_size_are_never_carried_down() {
        let pts = repeats(&[
            (0.0, [0.010, 0.0101, 0.0099, 0.0100]),
            (10_000.0, [0.008, 0.0081, 0.0079, 0.0080]),
            (100_000.0, [0.005, 0.0051, 0.0049, 0.0050]),
        ]);
        let t = Trend::of_times(&pts, 0.95).unwrap();
        assert_eq!(t.shape, Shape::Flat);
        assert_eq!(t.at(1e9).value, t.at(100_000.0).value);
    }

    #[test]
    fn a_lone_measurement_per_step_cannot_show_a_trend() {
        // Three medians and nothing else: Sen's interval is the full range of three slopes and
        // reaches only about 40%, so the rise stays unshown.
        let t = Trend::of_times(&[(0.0, 1.0), (10.0, 2.0), (100.0, 3.0)], 0.95).unwrap();
        assert_eq!(t.shape, Shape::Flat);
        assert_eq!(t.at(1000.0).value, 2.0);
    }

    #[test]
    fn sizes_grow_at_the_last_bytes_per_row_within_the_steps_range() {
        // 0 → 32 kB, 10k rows → 1 MB, 100k rows → 9.2 MB (pulp-quick's snapshot indexes).
        let t = Trend::of_sizes(&[
            (0.0, 32_768.0),
            (10_000.0, 1_048_576.0),
            (100_000.0, 9_646_899.0),
        ])
        .unwrap();
        let last = (9_646_899.0 - 1_048_576.0) / 90_000.0;
        let first = (1_048_576.0 - 32_768.0) / 10_000.0;
        assert!((t.fit.slope - last).abs() < 1e-9);
        let p = t.at(1e9);
        let at = |rate: f64| 9_646_899.0 + rate * (1e9 - 100_000.0);
        assert!((p.value - at(last)).abs() < 1.0);
        assert!((p.low - at(last)).abs() < 1.0 && (p.high - at(first)).abs() < 1.0);
        // Where it reaches 24 GB, by the estimate.
        let x = t.x_where(24.0 * 1024f64.powi(3)).unwrap();
        assert!((t.at(x).value - 24.0 * 1024f64.powi(3)).abs() < 1.0);
        assert!(Trend::of_sizes(&[(0.0, 8192.0)]).is_none());
        // A lone step: from nothing.
        let one = Trend::of_sizes(&[(1000.0, 80_000.0)]).unwrap();
        assert_eq!(one.at(2000.0).value, 160_000.0);
    }

    #[test]
    fn reach_is_worded_past_ten_times() {
        assert_eq!(reach_words(10.0), "projected");
        assert_eq!(reach_words(10_000.0), "extrapolated ×10000");
        assert_eq!(reach_words(5025.1), "extrapolated ×5000");
        assert_eq!(reach_words(38.4), "extrapolated ×38");
        assert_eq!(reach(1e9, 0.0), f64::INFINITY);
        assert_eq!(
            reach_words(f64::INFINITY),
            "extrapolated from an empty table"
        );
    }
}
