//! Seeded simulations of the verdict rules: how often they name a false winner, how often
//! they find a real difference, and what `--repeat auto` spends. Trials are drawn as
//! `truth · exp(σ·Z)` (lognormal noise, `Z` standard normal from a ChaCha8 stream with a fixed
//! seed), so every figure is the same on every run. The tests in [`super::finding`] run a
//! small grid; `cargo bench --bench verdicts -- --simulate` runs the full one (σ 3%, 5%, 10%;
//! 2 to 10 settings; 3 to 10 trials; thousands of runs each). Compiled for tests and benches
//! only (feature `fixtures`).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::family::Family;
use super::finding::{Finding, SettingTrials, decide, needs_more};
use super::rules::Rules;
use super::verdict::{Better, MIN_TRIALS, Verdict, shift};

/// A seeded source of lognormal trials.
pub struct Noise {
    rng: ChaCha8Rng,
}

impl Noise {
    pub fn new(seed: u64) -> Noise {
        Noise {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A standard normal draw (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1: f64 = self.rng.random::<f64>().max(f64::MIN_POSITIVE);
        let u2: f64 = self.rng.random::<f64>();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// One trial of a setting whose true median is `truth`, with relative noise `sigma`.
    pub fn trial(&mut self, truth: f64, sigma: f64) -> f64 {
        truth * (sigma * self.normal()).exp()
    }
}

/// A simulated sweep: the true median of each setting (cheapest first) and the noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub truth: Vec<f64>,
    pub sigma: f64,
}

impl Sweep {
    /// `k` identical settings (an A/A sweep).
    pub fn same(k: usize, sigma: f64) -> Sweep {
        Sweep {
            truth: vec![1.0; k],
            sigma,
        }
    }
}

/// The trials as a sweep for the core, cost rank = position.
pub fn as_settings(values: &[Vec<f64>]) -> Vec<SettingTrials> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| SettingTrials {
            label: format!("s{i}"),
            cost_rank: i,
            values: v.clone(),
            coords: Vec::new(),
        })
        .collect()
}

/// `n` trials of every setting.
pub fn draw(noise: &mut Noise, sweep: &Sweep, n: usize) -> Vec<Vec<f64>> {
    sweep
        .truth
        .iter()
        .map(|&t| (0..n).map(|_| noise.trial(t, sweep.sigma)).collect())
        .collect()
}

/// A run with a fixed count: `n` trials each, decided once (seconds: lower is better).
pub fn fixed(noise: &mut Noise, sweep: &Sweep, n: usize, rules: &Rules) -> Finding {
    decide(
        &as_settings(&draw(noise, sweep, n)),
        Better::Lower,
        &rules.fixed(),
    )
}

/// A run with `--repeat auto` as the engines make it: 3 of each, then one more of every
/// setting the core still needs per round, at most `max` rounds and `max` trials each.
/// Returns the finding and the trials spent.
pub fn auto(noise: &mut Noise, sweep: &Sweep, max: usize, rules: &Rules) -> (Finding, usize) {
    let rules = rules.with_auto(max as u32);
    let mut values = draw(noise, sweep, MIN_TRIALS);
    let mut rounds = MIN_TRIALS;
    while rounds < max {
        let need: Vec<usize> = needs_more(&as_settings(&values), Better::Lower, &rules)
            .into_iter()
            .filter(|&i| values[i].len() < max)
            .collect();
        if need.is_empty() {
            break;
        }
        for i in need {
            let t = noise.trial(sweep.truth[i], sweep.sigma);
            values[i].push(t);
        }
        rounds += 1;
    }
    let spent = values.iter().map(Vec::len).sum();
    (decide(&as_settings(&values), Better::Lower, &rules), spent)
}

/// True when the finding calls any setting faster or slower (a winner, or any `slower`).
pub fn calls_a_difference(f: &Finding) -> bool {
    f.verdict == Some(Verdict::Faster)
        || f.settings.iter().any(|s| {
            s.vs_best
                .as_ref()
                .is_some_and(|c| matches!(c.verdict, Verdict::Faster | Verdict::Slower))
        })
}

/// True when the finding recommends (or names as winner) a setting whose true median is more
/// than `min_effect` worse than the truly best one: advice the DBA would regret.
#[cfg(test)]
pub(crate) fn recommends_a_worse_one(f: &Finding, sweep: &Sweep) -> bool {
    let best = sweep.truth.iter().copied().fold(f64::INFINITY, f64::min);
    let Some(rec) = f.recommendation.as_ref().or(f.winner.as_ref()) else {
        return false;
    };
    let i = f.settings.iter().position(|s| &s.label == rec).unwrap_or(0);
    sweep.truth[i] > best * (1.0 + f.rules.min_effect) * (1.0 + 1e-12)
}

/// The procedures the tests and the bench hold the core's against: each setting against the
/// data's best, each pair at `1 − α/comparisons` two-sided, `slower` when the interval lies
/// above 1 and the estimate beyond the smallest effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naive {
    /// Every comparison at the rules' confidence (the rule before issue 23).
    Uncorrected,
    /// Bonferroni over the `k − 1` comparisons with the best, ignoring that the best was
    /// picked from the same trials.
    VsBestOnly,
}

/// Whether a naive procedure calls any setting slower than the best of these trials.
pub fn naive_calls(values: &[Vec<f64>], rules: &Rules, how: Naive) -> bool {
    let k = values.len();
    let alpha = 1.0 - rules.confidence;
    let level = match how {
        Naive::Uncorrected => rules.confidence,
        Naive::VsBestOnly => 1.0 - alpha / (k.saturating_sub(1).max(1)) as f64,
    };
    let logs: Vec<Vec<f64>> = values
        .iter()
        .map(|v| v.iter().map(|x| x.ln()).collect())
        .collect();
    let median = |v: &Vec<f64>| {
        let mut s = v.clone();
        s.sort_by(|a, b| a.total_cmp(b));
        super::stats::median_sorted(&s)
    };
    let best = (0..k)
        .min_by(|&a, &b| median(&logs[a]).total_cmp(&median(&logs[b])))
        .unwrap_or(0);
    let margin = rules.margin();
    (0..k)
        .filter(|&i| i != best)
        .any(|i| shift(&logs[i], &logs[best], level).slower_by_more_than(margin))
}

/// The bound on the A/A rate of `k` identical settings with `n` trials each under `rules` (a
/// fixed count): each of the `P` pairs errs with probability at most `α/P` when the log times
/// are normal (Welch's t interval holds its level), and Bonferroni adds them up; 0 below
/// [`MIN_TRIALS`], where nothing is ever called.
pub fn aa_bound(k: usize, n: usize, rules: &Rules) -> f64 {
    let f = Family::of(k, &rules.fixed());
    if n < MIN_TRIALS {
        return 0.0;
    }
    (f.pairs as f64 * (1.0 - f.pair_confidence)).min(1.0)
}

/// The family a sweep of `k` settings gets under `rules` (for reports of the simulation).
pub fn family(k: usize, rules: &Rules) -> Family {
    Family::of(k, rules)
}

#[cfg(test)]
#[path = "simulate_tests.rs"]
mod tests;
