//! Small, exact statistics over a handful of trials: median, spread, percentiles.

use serde::{Deserialize, Serialize};

/// Median, min and max of a set of timings, and whether the spread is beyond noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.total_cmp(b));
        Some(Summary {
            n: v.len(),
            median: median_sorted(&v),
            min: v[0],
            max: v[v.len() - 1],
        })
    }

    /// (max - min) / median: the relative spread of the trials.
    pub fn spread(&self) -> f64 {
        if self.median > 0.0 {
            (self.max - self.min) / self.median
        } else {
            0.0
        }
    }

    /// More than 10% spread between the fastest and slowest repeat.
    pub fn is_noisy(&self) -> bool {
        self.n > 1 && self.spread() > 0.10
    }
}

/// The median of an already sorted, non-empty slice.
pub(crate) fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of a slice (NaN-free); None when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
}

/// The q-quantile (0..=1) by nearest rank of an already sorted slice.
pub fn quantile_sorted(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * (v.len() - 1) as f64).round() as usize;
    Some(v[rank])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_exact() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert!(s.is_noisy());
        let s = Summary::of(&[10.0, 10.2, 10.1, 10.3]).unwrap();
        assert!((s.median - 10.15).abs() < 1e-9);
        assert!(!s.is_noisy());
        assert!(Summary::of(&[]).is_none());
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.5), Some(3.0));
    }
}
