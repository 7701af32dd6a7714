//! Least-squares fits used to project sizes and times beyond what was measured.

use serde::{Deserialize, Serialize};

/// y = intercept + slope · x, fitted by ordinary least squares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    pub intercept: f64,
    pub slope: f64,
    /// Coefficient of determination (1 = perfect fit).
    pub r2: f64,
    /// Range of x the fit was made from.
    pub x_min: f64,
    pub x_max: f64,
}

impl LinearFit {
    /// Fit points (x, y); None with fewer than two distinct x.
    pub fn of(points: &[(f64, f64)]) -> Option<LinearFit> {
        let pts: Vec<_> = points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
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
        let x_min = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let x_max = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        Some(LinearFit {
            intercept,
            slope,
            r2,
            x_min,
            x_max,
        })
    }

    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// How far beyond the measured range x lies, as a multiple of the largest measured x.
    pub fn reach(&self, x: f64) -> f64 {
        if self.x_max > 0.0 {
            x / self.x_max
        } else {
            f64::INFINITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_exactly() {
        let f = LinearFit::of(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((f.slope - 2.0).abs() < 1e-12 && (f.intercept - 1.0).abs() < 1e-12);
        assert!((f.r2 - 1.0).abs() < 1e-12);
        assert_eq!(f.at(10.0), 21.0);
        assert!(LinearFit::of(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }
}
