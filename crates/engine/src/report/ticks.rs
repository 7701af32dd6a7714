//! Axis ticks both front ends draw (the TUI's chart, the SVG charts): round values that use
//! the room there is and end near the data, each labelled with its unit in one scale for the
//! whole axis ("0 ms, 50 ms, 100 ms, 150 ms", not "0, 0.05, 0.1, 0.15").
//!
//! Linear axes step by 1, 2, 2.5 or 5 × 10^k from 0 (or below the smallest value) to the
//! first step at or above the largest. Log axes put a tick on every whole power of 10 (of 2
//! for bytes: "1 MB, 4 MB, 16 MB"), or every n-th when there are too many; a 0 on a log axis
//! (the 0-version step) sits one tick before the first power and is labelled "0".

use crate::measure::units::format_count;

/// An axis' ticks: where they sit (in the axis' coordinate: the value on a linear axis, its
/// logarithm on a log axis) and their labels, equally spaced from the first to the last.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// Coordinates of the ticks, ascending; the first and last are the axis' ends.
    pub at: Vec<f64>,
    pub labels: Vec<String>,
    log: Option<f64>,
    /// Coordinate of the value 0 on a log axis, when some value is 0.
    zero_at: Option<f64>,
}

impl Ticks {
    /// The coordinate of a value on this axis.
    pub fn pos(&self, v: f64) -> f64 {
        match self.log {
            None => v,
            Some(_) if v <= 0.0 => self
                .zero_at
                .unwrap_or_else(|| self.at.first().copied().unwrap_or(0.0)),
            Some(base) => v.log(base),
        }
    }

    /// The axis' ends, in its coordinate.
    pub fn bounds(&self) -> [f64; 2] {
        match (self.at.first(), self.at.last()) {
            (Some(a), Some(b)) if b > a => [*a, *b],
            (Some(a), _) => [*a, *a + 1.0],
            _ => [0.0, 1.0],
        }
    }
}

/// Linear ticks for `values` in `unit`, at most `max_ticks` (at least 2), from 0 when
/// `from_zero` (times and sizes: an honest scale). Steps are round in the unit the labels
/// use (1 MB, not 1e6 bytes).
pub fn linear(values: &[f64], unit: &str, max_ticks: usize, from_zero: bool) -> Ticks {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if finite.is_empty() {
        (lo, hi) = (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-12 {
        hi = lo + hi.abs().max(1.0);
    }
    let (div, suffix) = display(unit, lo.abs().max(hi.abs()));
    let (lo, hi) = (lo / div, hi / div);
    let step = nice_step(lo, hi, max_ticks.max(2));
    let first = (lo / step + 1e-9).floor() as i64;
    let last = (hi / step - 1e-9).ceil() as i64;
    let at: Vec<f64> = (first..=last).map(|i| i as f64 * step * div).collect();
    let labels = (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            if v == 0.0 {
                "0".into()
            } else {
                format!("{}{suffix}", trimmed(v))
            }
        })
        .collect();
    Ticks {
        at,
        labels,
        log: None,
        zero_at: None,
    }
}

/// The scale a linear axis reaching `top` is labelled in: what a value is divided by, and
/// what follows it. Seconds as ms below 1 s and as minutes from 5 min; bytes in the largest
/// unit `top` reaches; counts with k, M, G from 10k. Units that do not print in the value
/// (rows/s) are left to the axis title.
fn display(unit: &str, top: f64) -> (f64, String) {
    if is_seconds(unit) {
        return if top < 1.0 {
            (0.001, " ms".into())
        } else if top >= 300.0 {
            (60.0, " min".into())
        } else {
            (1.0, " s".into())
        };
    }
    if is_bytes(unit) {
        const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
        let k = ((top.max(1.0).log2() / 10.0).floor() as usize).min(4);
        return (1024f64.powi(k as i32), format!(" {}", UNITS[k]));
    }
    if matches!(unit, "%" | "percent") {
        return (1.0, "%".into());
    }
    if top >= 1e9 {
        (1e9, "G".into())
    } else if top >= 1e6 {
        (1e6, "M".into())
    } else if top >= 1e4 {
        (1e3, "k".into())
    } else {
        (1.0, String::new())
    }
}

/// The smallest step of 1, 2, 2.5 or 5 × 10^k that covers lo..hi in at most `max_ticks`.
fn nice_step(lo: f64, hi: f64, max_ticks: usize) -> f64 {
    let raw = (hi - lo) / (max_ticks - 1) as f64;
    let mut p = 10f64.powf(raw.log10().floor() - 1.0);
    loop {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let step = m * p;
            let n = (hi / step - 1e-9).ceil() - (lo / step + 1e-9).floor() + 1.0;
            if n <= max_ticks as f64 {
                return step;
            }
        }
        p *= 10.0;
    }
}

/// Log ticks for `values` in `unit` (bytes on powers of 2, the rest on powers of 10), at
/// most `max_ticks` (a 0 among the values takes one of them).
pub fn log(values: &[f64], unit: &str, max_ticks: usize) -> Ticks {
    let base = if is_bytes(unit) { 2.0 } else { 10.0 };
    let finite: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    let has_zero = finite.contains(&0.0);
    let pos: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
    let (mut lo, mut hi) = pos
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v.log(base)), b.max(v.log(base)))
        });
    if pos.is_empty() {
        (lo, hi) = (0.0, 1.0);
    }
    let one_value = hi - lo < 1e-9;
    let (mut lo, mut hi) = ((lo + 1e-9).floor() as i64, (hi - 1e-9).ceil() as i64);
    if one_value && !has_zero {
        // One value: in the middle of the axis, a power either side.
        let e = lo.max(hi);
        (lo, hi) = (e - 1, e + 1);
    }
    let hi = hi.max(lo + 1);
    let room = max_ticks.max(2) as i64 - i64::from(has_zero);
    let steps: &[i64] = if base == 2.0 {
        &[1, 2, 5, 10, 20, 30]
    } else {
        &[1, 2, 3, 5, 10]
    };
    let span = hi - lo;
    let every = steps
        .iter()
        .copied()
        .find(|e| (span + e - 1) / e < room.max(2))
        .unwrap_or(*steps.last().unwrap_or(&1));
    let first = lo.div_euclid(every) * every;
    let last = first
        + (hi - first).div_euclid(every) * every
        + if (hi - first).rem_euclid(every) > 0 {
            every
        } else {
            0
        };
    let zero_at = has_zero.then_some((first - every) as f64);
    let mut at: Vec<f64> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    if let Some(z) = zero_at {
        at.push(z);
        labels.push("0".into());
    }
    let mut e = first;
    while e <= last {
        at.push(e as f64);
        labels.push(power_label(base, e, unit));
        e += every;
    }
    Ticks {
        at,
        labels,
        log: Some(base),
        zero_at,
    }
}

fn is_bytes(unit: &str) -> bool {
    matches!(unit, "bytes" | "B" | "byte")
}

fn is_seconds(unit: &str) -> bool {
    matches!(unit, "s" | "seconds" | "sec")
}

/// "1 kB", "32 MB" for 2^e bytes; "1 ms", "10 s" for 10^e seconds; "10k" for counts.
fn power_label(base: f64, e: i64, unit: &str) -> String {
    if base == 2.0 {
        if e < 0 {
            return String::new();
        }
        const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
        return format!("{} {}", 1u64 << (e % 10), UNITS[(e / 10).min(6) as usize]);
    }
    let v = 10f64.powi(e as i32);
    if is_seconds(unit) {
        return if v < 1.0 {
            format!("{} ms", trimmed(v * 1000.0))
        } else {
            format!("{} s", trimmed(v))
        };
    }
    if unit == "%" {
        return format!("{}%", trimmed(v));
    }
    format_count(v)
}

/// A number with up to three decimals, trailing zeros dropped: "0.25", "12.5", "150".
fn trimmed(v: f64) -> String {
    let s = format!("{:.3}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// A linear tick's label in `unit`, in the scale an axis reaching `top` uses (see
/// [`linear`]): for drawing libraries that choose the tick values themselves.
pub(crate) fn label(v: f64, unit: &str, top: f64) -> String {
    let (div, suffix) = display(unit, top);
    if v == 0.0 {
        return "0".into();
    }
    format!("{}{suffix}", trimmed(v / div))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_end_near_the_data() {
        // Index-build at 80×24: builds up to 107 ms, room for 4 labels.
        let t = linear(&[0.052, 0.107], "s", 4, true);
        assert_eq!(t.labels, ["0", "50 ms", "100 ms", "150 ms"]);
        assert!((t.bounds()[1] - 0.15).abs() < 1e-12, "{t:?}");
        // More room, finer steps, never past the data by a whole step.
        let t = linear(&[0.052, 0.107], "s", 12, true);
        assert_eq!(t.labels.first().map(String::as_str), Some("0"));
        assert_eq!(t.labels.last().map(String::as_str), Some("110 ms"));
        assert!(t.at.len() <= 12);
        // A two-second trial: half seconds, not "0 s, 0 s, 1 s".
        let t = linear(&[1.0, 2.0, 2.16], "s", 8, true);
        assert_eq!(t.labels, ["0", "0.5 s", "1 s", "1.5 s", "2 s", "2.5 s"]);
        // Counts in one scale; sizes in their unit.
        let t = linear(&[4030.0, 590_000.0], "rows/s", 5, true);
        assert_eq!(t.labels, ["0", "200k", "400k", "600k"]);
        let t = linear(&[3.0 * 1048576.0], "bytes", 4, true);
        assert_eq!(t.labels, ["0", "1 MB", "2 MB", "3 MB"]);
        assert_eq!(label(300.0, "s", 600.0), "5 min");
    }

    #[test]
    fn log_ticks_sit_on_powers_with_a_zero_at_the_start() {
        // Growth's versions: 0, 10, 100 and the projected 1M.
        let t = log(&[0.0, 10.0, 100.0, 1e6], "count", 8);
        assert_eq!(t.labels, ["0", "10", "100", "1000", "10k", "100k", "1M"]);
        assert_eq!(t.pos(0.0), 0.0);
        assert_eq!(t.pos(100.0), 2.0);
        // Too many decades for the room: every other one.
        let t = log(&[0.0, 10.0, 100.0, 1e6], "count", 5);
        assert_eq!(t.labels, ["0", "1", "100", "10k", "1M"]);
        // Times: milliseconds to seconds.
        let t = log(&[0.004, 0.051], "s", 6);
        assert_eq!(t.labels, ["1 ms", "10 ms", "100 ms"]);
        // Sizes on powers of two.
        let t = log(&[1048576.0, 1073741824.0], "bytes", 6);
        assert_eq!(
            t.labels,
            ["1 MB", "4 MB", "16 MB", "64 MB", "256 MB", "1 GB"]
        );
        // One value sits between the powers either side of it.
        let t = log(&[64.0 * 1048576.0], "bytes", 6);
        assert_eq!(t.labels, ["32 MB", "64 MB", "128 MB"]);
        // Rates: decades, the unit in the title.
        let t = log(&[4030.0, 48_800.0, 590_000.0], "rows/s", 6);
        assert_eq!(t.labels, ["1000", "10k", "100k", "1M"]);
    }
}
