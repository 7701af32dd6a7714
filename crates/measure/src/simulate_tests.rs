//! Seeded simulations of the verdict rules (lognormal noise; see [`super`]): A/A sweeps of 2
//! to 10 identical settings name a false difference in at most 5% of runs, with fixed counts
//! and with `--repeat auto`; a real 20% difference is still found; and the cheapest
//! setting that is truly 10% slower is not recommended. Small grids, so that the tests stay
//! fast; the bench runs the full grid.

use super::*;

/// Runs per simulated case.
const RUNS: usize = 300;

fn rate(hits: usize, runs: usize) -> f64 {
    hits as f64 / runs as f64
}

#[test]
fn aa_sweeps_call_no_difference_in_more_than_5_percent_of_runs() {
    let rules = Rules::default();
    let mut noise = Noise::new(23);
    let mut report = Vec::new();
    for k in [2, 3, 5, 8, 10] {
        let (mut calls, mut naive, mut runs) = (0, 0, 0);
        for n in [3, 4, 5, 6, 7, 8, 10] {
            for sigma in [0.03, 0.10] {
                let sweep = Sweep::same(k, sigma);
                for _ in 0..RUNS / 2 {
                    let values = draw(&mut noise, &sweep, n);
                    let f = decide(&as_settings(&values), Better::Lower, &rules);
                    calls += usize::from(calls_a_difference(&f));
                    naive += usize::from(naive_calls(&values, &rules, Naive::Uncorrected));
                    runs += 1;
                }
            }
        }
        report.push((k, rate(calls, runs), rate(naive, runs)));
    }
    for &(k, r, _) in &report {
        assert!(
            r <= 0.05,
            "{k} identical settings: {r:.3} of runs call a difference: {report:?}"
        );
    }
    // The test has teeth: the rule before (each comparison at 95%, the best picked from the
    // data) calls a difference in far more runs with many settings.
    let (_, _, naive8) = report.iter().find(|r| r.0 == 8).copied().unwrap();
    assert!(naive8 > 0.10, "{report:?}");
}

#[test]
fn repeat_auto_pays_for_its_looks() {
    let rules = Rules::default();
    let mut noise = Noise::new(24);
    for k in [2, 8] {
        let sweep = Sweep::same(k, 0.05);
        let (mut calls, mut spent) = (0, 0);
        for _ in 0..RUNS {
            let (f, n) = auto(&mut noise, &sweep, 10, &rules);
            calls += usize::from(calls_a_difference(&f));
            spent += n;
        }
        let r = rate(calls, RUNS);
        assert!(r <= 0.05, "{k}-way A/A with repeat auto: {r:.3}");
        assert!(spent <= RUNS * k * 10);
    }
    // A large difference (two settings, 40% apart, 5% noise) stops at the first look (5 each)
    // every time: 10 trials against a fixed 10 each.
    let sweep = Sweep {
        truth: vec![1.4, 1.0],
        sigma: 0.05,
    };
    let mut spent = 0;
    for _ in 0..RUNS {
        let (f, n) = auto(&mut noise, &sweep, 10, &rules);
        assert_eq!(f.winner.as_deref(), Some("s1"));
        spent += n;
    }
    assert_eq!(spent, RUNS * 10);
}

#[test]
fn a_real_20_percent_difference_is_found() {
    let rules = Rules::default();
    let mut noise = Noise::new(25);
    let sweep = Sweep {
        truth: vec![1.2, 1.0],
        sigma: 0.05,
    };
    let found = (0..RUNS)
        .filter(|_| fixed(&mut noise, &sweep, 5, &rules).winner.as_deref() == Some("s1"))
        .count();
    assert!(rate(found, RUNS) >= 0.8, "{found} of {RUNS}");
}

#[test]
fn a_cheapest_setting_10_percent_slower_is_not_recommended() {
    // The case: six settings, the cheapest truly 10% slower than the other five, 10%
    // noise. The rule before recommended it in 65% of runs at 5 repeats.
    let rules = Rules::default();
    let mut noise = Noise::new(26);
    let mut truth = vec![1.0; 6];
    truth[0] = 1.1;
    let sweep = Sweep { truth, sigma: 0.10 };
    for n in [5, 10] {
        let bad = (0..RUNS)
            .filter(|_| recommends_a_worse_one(&fixed(&mut noise, &sweep, n, &rules), &sweep))
            .count();
        assert!(rate(bad, RUNS) <= 0.05, "{n} trials: {bad} of {RUNS}");
    }
}

/// Runs per cell of the grid below.
const GRID_RUNS: usize = 200;

/// The one-sided 95% binomial margin on a rate near `p` measured over `runs` runs:
/// 1.645·√(p(1 − p)/runs) (4.4 points at 20% over 200 runs, 2.5 points at 5%).
fn margin(p: f64, runs: usize) -> f64 {
    1.645 * (p * (1.0 - p) / runs as f64).sqrt()
}

/// A **simulation** (seeded ChaCha8, lognormal noise σ = 5%, no server) of `--repeat auto` as
/// the engines run it ([`auto`]: 3 of each, one more round of every setting the core still
/// needs, at most `max`), over a grid of setting counts (2, 3, 5, 8) × maximum repeats (5, 6,
/// 8, 10), 200 runs per cell:
///
/// - A/A (identical settings): the share of runs that call anything faster or slower is at
///   most 5% plus the one-sided 95% binomial margin of 200 runs (2.5 points) in every cell,
///   and at most 5% pooled over the grid (3200 runs);
/// - one setting 20% faster than the rest: named the winner in at least 80% of runs less the
///   same margin at 80% (4.7 points) in every cell with 2–3 settings or at least 8 trials
///   each (the smaller cells are printed: too few trials to decide 5–8 settings that often).
///
/// The looks are planned by [`super::super::spending`], the scheme the tune's race uses too.
#[test]
fn repeat_auto_holds_its_error_and_power_over_a_grid() {
    let rules = Rules::default();
    let mut noise = Noise::new(40);
    let (mut aa_all, mut cells) = (0, Vec::new());
    for k in [2, 3, 5, 8] {
        for max in [5, 6, 8, 10] {
            let same = Sweep::same(k, 0.05);
            let mut truth = vec![1.2; k];
            truth[k - 1] = 1.0;
            let real = Sweep { truth, sigma: 0.05 };
            let winner = format!("s{}", k - 1);
            let (mut aa, mut found) = (0, 0);
            for _ in 0..GRID_RUNS {
                aa += usize::from(calls_a_difference(&auto(&mut noise, &same, max, &rules).0));
                let f = auto(&mut noise, &real, max, &rules).0;
                found += usize::from(f.winner.as_deref() == Some(winner.as_str()));
            }
            aa_all += aa;
            cells.push((k, max, rate(aa, GRID_RUNS), rate(found, GRID_RUNS)));
        }
    }
    eprintln!("(settings, max, A/A false calls, power at 20%): {cells:?}");
    for &(k, max, aa, power) in &cells {
        assert!(
            aa <= 0.05 + margin(0.05, GRID_RUNS),
            "{k}×{max}: A/A {aa:.3}: {cells:?}"
        );
        // Power is a matter of trials: a winner must beat every other setting by more than
        // the 5% practical threshold, each comparison at 1 − 5%/(pairs·looks). Five or more
        // settings capped at 5–6 trials each find a 20% winner less often (measured: 5×5
        // 0.63, 5×6 0.76, 8×5 0.21, 8×6 0.36; docs/verdicts.md) and say "too few trials"
        // with the count that would decide; from 8 trials each, or with 2–3 settings, ≥ 80%.
        if max >= 8 || k <= 3 {
            assert!(
                power >= 0.8 - margin(0.8, GRID_RUNS),
                "{k}×{max}: power {power:.3}: {cells:?}"
            );
        }
    }
    let pooled = rate(aa_all, GRID_RUNS * cells.len());
    assert!(pooled <= 0.05, "pooled A/A {pooled:.4}");
}
