//! The Mann–Whitney rank statistic: how far apart two small samples can fall by chance alone.
//!
//! Put the `n` trials of setting A and the `m` trials of setting B in one sorted row. `U`
//! counts the pairs `(a, b)` with `a > b`. If A and B do not differ, every one of the
//! `C(n+m, n)` ways to place the A trials in the row is equally likely, so the null
//! distribution of `U` is found by counting arrangements — no table, no approximation. The
//! count satisfies the usual recursion on the largest value of the row: it is either an A
//! (which beats all `m` B's) or a B (which beats nothing),
//!
//! ```text
//! f(n, m, u) = f(n − 1, m, u − m) + f(n, m − 1, u)
//! ```
//!
//! For a confidence interval built from the `n·m` sorted pairwise differences `d(1) ≤ … ≤
//! d(nm)`, the pair `d(k), d(nm+1-k)` covers the true shift with probability
//! `1 − 2·P(U < k)`; the critical `k` is the largest one whose coverage reaches the requested
//! confidence. When `n·m` is large (more than [`EXACT_LIMIT`] pairs) the exact count is
//! replaced by the normal approximation with continuity correction, mean `n·m/2`, variance
//! `n·m·(n+m+1)/12`; at that size the two agree to within a
//! rank or two (a fraction of a percentage point of coverage).
//!
//! Small samples cannot reach every confidence: even `k = 1` (the widest interval, from the
//! smallest to the largest difference) only covers `1 − 2/C(n+m, n)`. Three trials against
//! three give at most `1 − 2/20 = 90%`, so at 95% nothing can be decided; four against four
//! give `1 − 2/70 = 97.1%`. [`trials_needed`] finds that smallest equal count.

use super::interval::LEVEL_EPS;

/// Above this many pairs (`n·m`) the normal approximation replaces the exact count.
pub const EXACT_LIMIT: usize = 400;

/// The critical rank for an interval from `n·m` sorted pairwise differences.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Critical {
    /// 1-based rank: the interval is `d(k), d(nm+1-k)`.
    pub k: usize,
    /// Coverage of that interval (at least the requested confidence when `reachable`).
    pub level: f64,
    /// Whether any `k` reaches the requested confidence; when not, `k = 1` and `level` is
    /// the best coverage these sample sizes allow.
    pub reachable: bool,
}

/// Number of arrangements giving `U = u`, for `u` in `0..=n·m`; they sum to `C(n+m, n)`.
pub(crate) fn mann_whitney_null(n: usize, m: usize) -> Vec<u128> {
    // row[j] = distribution of U for (i, j), rolled over i.
    let mut row: Vec<Vec<u128>> = vec![vec![1]; m + 1];
    for i in 1..=n {
        let mut next: Vec<Vec<u128>> = Vec::with_capacity(m + 1);
        next.push(vec![1]);
        for j in 1..=m {
            let mut v = vec![0u128; i * j + 1];
            // The largest value is an A: it beats all j B's.
            for (u, c) in row[j].iter().enumerate() {
                v[u + j] += c;
            }
            // The largest value is a B: it beats nothing.
            for (u, c) in next[j - 1].iter().enumerate() {
                v[u] += c;
            }
            next.push(v);
        }
        row = next;
    }
    row.swap_remove(m)
}

/// The critical rank for `n` against `m` trials at `confidence`: exact up to
/// [`EXACT_LIMIT`] pairs, normal approximation beyond. `n` and `m` must be at least 1.
/// Remembered per thread: a sweep asks the same sizes and level for many pairs, and the
/// simulations in the tests ask them thousands of times.
pub(crate) fn critical_k(n: usize, m: usize, confidence: f64) -> Critical {
    type Key = (usize, usize, u64);
    thread_local! {
        static SEEN: std::cell::RefCell<std::collections::HashMap<Key, Critical>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = (n, m, confidence.to_bits());
    if let Some(c) = SEEN.with(|s| s.borrow().get(&key).copied()) {
        return c;
    }
    let c = critical_k_uncached(n, m, confidence);
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() > 4096 {
            s.clear();
        }
        s.insert(key, c);
    });
    c
}

/// The coverage of the widest interval `n` against `m` trials allow (from the smallest to the
/// largest pairwise difference): `1 − 2/C(n+m, n)`.
pub(crate) fn widest_level(n: usize, m: usize) -> f64 {
    (1.0 - 2.0 * (-ln_choose(n + m, n)).exp()).max(0.0)
}

fn critical_k_uncached(n: usize, m: usize, confidence: f64) -> Critical {
    let widest = 1.0 - 2.0 * (-ln_choose(n + m, n)).exp();
    if widest + LEVEL_EPS < confidence {
        return Critical {
            k: 1,
            level: widest.max(0.0),
            reachable: false,
        };
    }
    if n * m <= EXACT_LIMIT {
        critical_k_exact(n, m, confidence)
    } else {
        critical_k_normal(n, m, confidence)
    }
}

fn critical_k_exact(n: usize, m: usize, confidence: f64) -> Critical {
    let counts = mann_whitney_null(n, m);
    let total: u128 = counts.iter().sum();
    let coverage = |below: u128| 1.0 - 2.0 * (below as f64 / total as f64);
    let mut below = counts[0]; // arrangements with U < k, for k = 1
    let mut best = Critical {
        k: 1,
        level: coverage(below).max(0.0),
        reachable: coverage(below) + LEVEL_EPS >= confidence,
    };
    for k in 2..=(n * m).div_ceil(2) {
        below += counts[k - 1];
        let level = coverage(below);
        if level + LEVEL_EPS < confidence {
            break;
        }
        best = Critical {
            k,
            level,
            reachable: true,
        };
    }
    best
}

fn critical_k_normal(n: usize, m: usize, confidence: f64) -> Critical {
    let nm = (n * m) as f64;
    let mean = nm / 2.0;
    let sd = (nm * (n + m + 1) as f64 / 12.0).sqrt();
    // P(U < k) = P(U ≤ k − 1) ≈ Φ((k − 1 + ½ − mean) / sd).
    let coverage = |k: usize| 1.0 - 2.0 * normal_cdf((k as f64 - 0.5 - mean) / sd);
    // Coverage falls as k grows: find the last k that still reaches the confidence.
    let (mut lo, mut hi) = (1usize, (n * m).div_ceil(2));
    if coverage(lo) + LEVEL_EPS < confidence {
        return Critical {
            k: 1,
            level: coverage(1).max(0.0),
            reachable: false,
        };
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if coverage(mid) + LEVEL_EPS >= confidence {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Critical {
        k: lo,
        level: coverage(lo),
        reachable: true,
    }
}

/// The smallest number of trials per setting (at least 3) with which two settings of equal
/// trial counts can be told apart at `confidence`: 4 at 95%, 5 at 99%, 7 at 99.9%, 6 at
/// 99.76% (seven settings compared at once, see [`super::family`]).
pub fn trials_needed(confidence: f64) -> usize {
    (3..200)
        .find(|&r| widest_level(r, r) + LEVEL_EPS >= confidence)
        .unwrap_or(200)
}

/// ln C(n, k), exact enough for any trial count.
fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64 / (i + 1) as f64).ln()).sum()
}

/// The standard normal quantile Φ⁻¹(p) for p in (0, 1) (Acklam's rational approximation,
/// relative error below 1.2e-9); ±infinity at 0 and 1.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The standard normal distribution function Φ.
pub(crate) fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_distribution_by_hand() {
        // 3 vs 3: C(6,3) = 20 arrangements; U = 0 only when all A's are below all B's.
        let c = mann_whitney_null(3, 3);
        assert_eq!(c, vec![1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
        assert_eq!(c.iter().sum::<u128>(), 20);
        // 4 vs 4: C(8,4) = 70.
        let c = mann_whitney_null(4, 4);
        assert_eq!(c, vec![1, 1, 2, 3, 5, 5, 7, 7, 8, 7, 7, 5, 5, 3, 2, 1, 1]);
        // 1 vs 3: U = number of B's below the single A, each position once.
        assert_eq!(mann_whitney_null(1, 3), vec![1, 1, 1, 1]);
        // Symmetric, and sums to C(n+m, n) for unequal sizes too.
        let c = mann_whitney_null(5, 7);
        assert_eq!(c.iter().sum::<u128>(), 792);
        assert!(c.iter().eq(c.iter().rev()));
    }

    #[test]
    fn critical_ranks_by_hand() {
        // 3 vs 3: k = 1 covers only 1 − 2/20 = 90%: undecidable at 95%.
        let c = critical_k(3, 3, 0.95);
        assert!(!c.reachable);
        assert_eq!(c.k, 1);
        assert!((c.level - 0.9).abs() < 1e-12);
        // ... but fine at 90%.
        assert!(critical_k(3, 3, 0.90).reachable);
        // 4 vs 4: k = 1 covers 1 − 2/70 = 97.1%; k = 2 only 1 − 4/70 = 94.3%.
        let c = critical_k(4, 4, 0.95);
        assert_eq!((c.k, c.reachable), (1, true));
        assert!((c.level - 68.0 / 70.0).abs() < 1e-12);
        // 5 vs 5: P(U ≤ 2) = 4/252 → k = 3 covers 96.8%; P(U ≤ 3) = 7/252 → k = 4 only 94.4%.
        // (The textbook two-sided 5% critical value of U for 5 vs 5 is 2 = k − 1.)
        let c = critical_k(5, 5, 0.95);
        assert_eq!(c.k, 3);
        assert!((c.level - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
        // 8 vs 8: textbook critical U = 13 at two-sided 5% → k = 14.
        assert_eq!(critical_k(8, 8, 0.95).k, 14);
    }

    #[test]
    fn trials_needed_per_side() {
        assert_eq!(trials_needed(0.95), 4); // 2/C(8,4) = 0.029
        assert_eq!(trials_needed(0.90), 3); // 2/C(6,3) = 0.1
        assert_eq!(trials_needed(0.99), 5); // 2/C(10,5) = 0.0079
        assert_eq!(trials_needed(0.999), 7); // 2/C(14,7) = 0.00058
    }

    #[test]
    fn exact_and_normal_agree_near_the_switch() {
        for &(n, m) in &[(20, 20), (19, 21), (16, 25), (10, 40), (21, 20)] {
            for &conf in &[0.90, 0.95, 0.99] {
                let e = critical_k_exact(n, m, conf);
                let a = critical_k_normal(n, m, conf);
                // The normal tail is slightly conservative at 99%: two ranks of ~100.
                assert!(e.k.abs_diff(a.k) <= 2, "{n}x{m} at {conf}: {e:?} vs {a:?}");
                assert!((e.level - a.level).abs() < 0.005, "{n}x{m} at {conf}");
                assert!(e.level >= conf - LEVEL_EPS && a.level >= conf - LEVEL_EPS);
            }
        }
        // Just past the switch the public function takes the approximation.
        assert_eq!(critical_k(20, 21, 0.95), critical_k_normal(20, 21, 0.95));
        assert_eq!(critical_k(20, 20, 0.95), critical_k_exact(20, 20, 0.95));
    }

    #[test]
    fn normal_cdf_is_accurate() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-2.575_829) - 0.005).abs() < 1e-6);
        assert!((ln_choose(8, 4) - 70f64.ln()).abs() < 1e-12);
        for p in [1e-6, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 0.9999] {
            let z = normal_quantile(p);
            assert!((normal_cdf(z) - p).abs() < 1e-6 * p.max(1e-3), "{p}: {z}");
        }
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    }

    #[test]
    fn widest_levels_and_counts_for_corrected_levels() {
        assert!((widest_level(3, 3) - 0.9).abs() < 1e-12);
        assert!((widest_level(6, 6) - (1.0 - 2.0 / 924.0)).abs() < 1e-12);
        // Seven settings at once at 95%: 21 pairs, each at 1 − 0.05/21 = 99.762%.
        assert_eq!(trials_needed(1.0 - 0.05 / 21.0), 6);
        // Eight: 28 pairs at 99.821%: six trials reach only 99.784%.
        assert_eq!(trials_needed(1.0 - 0.05 / 28.0), 7);
        // The cache answers as the computation does.
        assert_eq!(critical_k(5, 7, 0.97), critical_k_uncached(5, 7, 0.97));
        assert_eq!(critical_k(5, 7, 0.97), critical_k(5, 7, 0.97));
    }
}
