//! Racing the candidate values of one setting. Every round runs each value still in the race
//! once, interleaved (the order rotates round by round, so no value always goes first). From
//! round [`FIRST_LOOK`] on (at the rounds [`super::looks`] plans), each round is a *look*: every value is compared with the best so
//! far by the statistics core ([`crate::measure::verdict::compare_paired`]), and a value
//! shown worse (`slower`, the interval clear of 1 and the effect past the smallest one worth
//! acting on) is dropped.
//!
//! The rounds are blocks: each value ran once in every round, one after the other, so the
//! comparison is on the within-round ratios ([`crate::measure::paired`]). Drift between
//! rounds (a host slower for a minute, caches warming over the tune) slows every value of a
//! round alike and cancels; analysed as independent samples it stayed in the interval and
//! hid gains of 5–10 %.
//!
//! Two corrections keep "shown worse" honest:
//!
//! - **family-wise** (Bonferroni over all pairs): the best is picked from the data, so which
//!   pair ends up compared is itself chosen by the data; every one of the k(k − 1)/2 pairs
//!   gets its share of the look's error, and whatever the data pick, all statements hold
//!   together;
//! - **sequential** (alpha spending): the race looks again and again as trials come in, so
//!   the error α = 1 − confidence is split over the looks it plans before the first
//!   ([`super::looks`]: when the race looks, how many rounds it plans, and each look's level).
//!
//! The decision at the end ([`Race::decide`], in [`super::decide`]) uses the same corrected
//! confidence: a value replaces the one in effect only when it is shown better, or shown
//! equivalent (the whole interval within the smallest effect) and cheaper.

use serde::{Deserialize, Serialize};

use super::looks::FIRST_LOOK;
use crate::measure::rules::Rules;
use crate::measure::stats::median;
use crate::measure::verdict::{Better, Comparison, Verdict, compare_paired};

/// One value in the race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub value: String,
    /// Where the value comes from: `current`, `pgtune`, `around`.
    pub origin: String,
    /// One pass measure per round it ran, in round order.
    pub trials: Vec<f64>,
    /// Set when shown worse than the best: the round and the comparison that showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Dropped>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    pub round: usize,
    pub against: String,
    pub comparison: Comparison,
    pub confidence: f64,
}

/// The race of one setting's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Race {
    pub setting: String,
    /// The value in effect when the race began (one of the candidates).
    pub start: String,
    pub candidates: Vec<Candidate>,
    /// Rounds completed.
    pub rounds: usize,
    /// Looks taken.
    pub looks: usize,
    /// The family size: candidates when the race began.
    pub family: usize,
    /// Looks planned before the first (0: not planned, α·2^−j spending).
    #[serde(default)]
    pub planned_looks: usize,
    /// Rounds between two planned looks (0 or 1: every round from [`FIRST_LOOK`] on). When
    /// the level caps the looks below the rounds the share affords, they are spread over those
    /// rounds, so the race spends its share and its last look sees every trial.
    #[serde(default)]
    pub look_step: usize,
}

impl Race {
    /// A race of `values` (value, origin), the first being the one in effect.
    pub fn new(setting: &str, values: Vec<(String, String)>) -> Race {
        let start = values.first().map(|v| v.0.clone()).unwrap_or_default();
        let family = values.len();
        Race {
            setting: setting.to_string(),
            start,
            candidates: values
                .into_iter()
                .map(|(value, origin)| Candidate {
                    value,
                    origin,
                    trials: Vec::new(),
                    dropped: None,
                })
                .collect(),
            rounds: 0,
            looks: 0,
            family,
            planned_looks: 0,
            look_step: 0,
        }
    }

    pub(crate) fn alive(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| c.dropped.is_none())
    }

    /// The values of the next round, in the order they run: the values still in the race,
    /// rotated by the round number.
    pub(crate) fn next_order(&self) -> Vec<String> {
        let alive: Vec<String> = self.alive().map(|c| c.value.clone()).collect();
        if alive.is_empty() {
            return alive;
        }
        let r = self.rounds % alive.len();
        alive[r..].iter().chain(&alive[..r]).cloned().collect()
    }

    /// Record a completed round: one measure per value that ran.
    pub fn add_round(&mut self, measures: &[(String, f64)]) {
        for (v, m) in measures {
            if let Some(c) = self.candidates.iter_mut().find(|c| &c.value == v) {
                c.trials.push(*m);
            }
        }
        self.rounds += 1;
    }

    fn best<'a>(
        cands: impl Iterator<Item = &'a Candidate>,
        better: Better,
    ) -> Option<&'a Candidate> {
        cands
            .filter_map(|c| median(&c.trials).map(|m| (c, m)))
            .max_by(|a, b| {
                let o = a.1.total_cmp(&b.1);
                if better == Better::Lower {
                    o.reverse()
                } else {
                    o
                }
            })
            .map(|(c, _)| c)
    }

    /// The value still in the race with the best median.
    pub(crate) fn leader(&self, better: Better) -> Option<&Candidate> {
        Self::best(self.alive(), better)
    }

    /// After a round: take a look when it is due and drop the values shown worse than the
    /// leader. Returns the values dropped.
    pub fn look(&mut self, better: Better, rules: &Rules) -> Vec<String> {
        if !self.at_look_round() {
            return Vec::new();
        }
        let Some(r) = self.rules_at(rules, self.looks + 1) else {
            return Vec::new();
        };
        if !self.look_reachable(&r) {
            return Vec::new();
        }
        self.looks += 1;
        let Some(leader) = self.leader(better).cloned() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for c in self.candidates.iter_mut().filter(|c| c.dropped.is_none()) {
            if c.value == leader.value {
                continue;
            }
            if let Some(cmp) = compare_paired(&c.trials, &leader.trials, better, &r)
                && cmp.verdict == Verdict::Slower
            {
                c.dropped = Some(Dropped {
                    round: self.rounds,
                    against: leader.value.clone(),
                    comparison: cmp,
                    confidence: r.confidence,
                });
                out.push(c.value.clone());
            }
        }
        out
    }

    /// True when more rounds cannot change the outcome or may not be run: one value left,
    /// every value left shown equivalent to the leader, or the last look taken.
    pub(crate) fn settled(&self, better: Better, rules: &Rules) -> bool {
        if self.alive().count() <= 1 || self.rounds >= self.max_rounds() {
            return true;
        }
        if self.rounds >= FIRST_LOOK && self.rules_at(rules, self.looks + 1).is_none() {
            return true;
        }
        let (Some(leader), Some(r)) =
            (self.leader(better), self.rules_at(rules, self.looks.max(1)))
        else {
            return false;
        };
        self.looks > 0
            && self.at_look_round()
            && self.alive().filter(|c| c.value != leader.value).all(|c| {
                compare_paired(&c.trials, &leader.trials, better, &r)
                    .is_some_and(|cmp| cmp.conclusive())
            })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::tune::decide::{Decision, Why};
    use crate::tune::looks::MAX_ROUNDS;

    const NOISE: [f64; 8] = [1.0, 0.99, 1.01, 0.98, 1.02, 1.0, 0.995, 1.005];

    pub(in crate::tune) fn race(values: &[&str]) -> Race {
        Race::new(
            "shared_buffers",
            values
                .iter()
                .map(|v| (v.to_string(), "test".to_string()))
                .collect(),
        )
    }

    /// Run `rounds` rounds where value i measures `level[i]` × noise (rows/s).
    pub(in crate::tune) fn feed(r: &mut Race, level: &[(&str, f64)], rounds: usize) -> Vec<String> {
        let mut dropped = Vec::new();
        for _ in 0..rounds {
            if r.settled(Better::Higher, &Rules::default()) {
                break;
            }
            let order = r.next_order();
            let i = r.rounds;
            let m: Vec<(String, f64)> = order
                .iter()
                .map(|v| {
                    let base = level.iter().find(|(n, _)| n == v).unwrap().1;
                    (v.clone(), base * NOISE[(i + v.len()) % NOISE.len()])
                })
                .collect();
            r.add_round(&m);
            dropped.extend(r.look(Better::Higher, &Rules::default()));
        }
        dropped
    }

    #[test]
    fn the_order_rotates_round_by_round() {
        let mut r = race(&["128MB", "1GB", "4GB"]);
        assert_eq!(r.next_order(), ["128MB", "1GB", "4GB"]);
        r.add_round(&[]);
        assert_eq!(r.next_order(), ["1GB", "4GB", "128MB"]);
    }

    #[test]
    fn a_clearly_worse_value_is_dropped_and_a_clearly_better_one_wins() {
        let mut r = race(&["128MB", "1GB", "32MB"]);
        let dropped = feed(
            &mut r,
            &[("128MB", 1000.0), ("1GB", 1300.0), ("32MB", 600.0)],
            MAX_ROUNDS,
        );
        assert!(dropped.contains(&"32MB".to_string()), "{dropped:?}");
        let d = r.decide(Better::Higher, &Rules::default());
        assert_eq!((d.value.as_str(), d.why), ("1GB", Why::Better));
        let cmp = d.comparison.unwrap();
        assert_eq!(cmp.verdict, Verdict::Faster);
        assert!(cmp.ratio > 1.2 && cmp.ratio_low > 1.0);
    }

    #[test]
    fn nothing_is_dropped_or_chosen_before_the_first_look() {
        let mut r = race(&["128MB", "1GB"]);
        let dropped = feed(
            &mut r,
            &[("128MB", 1000.0), ("1GB", 2000.0)],
            FIRST_LOOK - 1,
        );
        assert!(dropped.is_empty());
        assert_eq!(r.rounds, FIRST_LOOK - 1);
        // A race cut short (the budget) decides once, at the first look's level: its one
        // look, so a value twice as fast is still taken.
        let d = r.decide(Better::Higher, &Rules::default());
        assert_eq!((d.why, d.value.as_str()), (Why::Better, "1GB"));
        // A value not far from the start is not, on so few trials.
        let mut r = race(&["128MB", "1GB"]);
        feed(
            &mut r,
            &[("128MB", 1000.0), ("1GB", 1040.0)],
            FIRST_LOOK - 1,
        );
        assert_eq!(
            r.decide(Better::Higher, &Rules::default()).why,
            Why::NotShown
        );
    }

    #[test]
    fn a_race_of_equals_settles_early() {
        let mut r = race(&["on", "off"]);
        feed(&mut r, &[("on", 1000.0), ("off", 1000.0)], MAX_ROUNDS);
        assert!(r.rounds <= MAX_ROUNDS);
        assert!(r.settled(Better::Higher, &Rules::default()));
    }

    /// A seeded race of `truths` (rows/s) planned for `rounds` rounds, where every round's
    /// values share a drift of `drift` (relative σ, between rounds) over a noise of `noise`
    /// (within a round), judged by `rules`. Returns the values dropped and the decision.
    pub(in crate::tune) fn drifting_race(
        seed: u64,
        truths: &[(&str, f64)],
        rounds: usize,
        drift: f64,
        noise: f64,
        rules: &Rules,
    ) -> (Vec<String>, Decision) {
        use crate::measure::simulate::Noise;
        let mut n = Noise::new(seed);
        let mut r = race(&truths.iter().map(|(v, _)| *v).collect::<Vec<_>>());
        r.plan_looks(rules.confidence, rounds);
        let mut dropped = Vec::new();
        while !r.settled(Better::Higher, rules) {
            let shared = n.trial(1.0, drift);
            let m: Vec<(String, f64)> = r
                .next_order()
                .into_iter()
                .map(|v| {
                    let truth = truths.iter().find(|(n, _)| *n == v).unwrap().1;
                    let t = n.trial(truth * shared, noise);
                    (v, t)
                })
                .collect();
            r.add_round(&m);
            dropped.extend(r.look(Better::Higher, rules));
        }
        let d = r.decide(Better::Higher, rules);
        (dropped, d)
    }

    /// Issue 37: the same configuration measured 1.4 s, 1.8 s and 1.5 s in three races. With a
    /// 15 % drift between rounds and 2 % noise within one, a steady 8 % gain is found in most
    /// races of ten rounds (independent samples found it in none: the drift stayed in the
    /// interval), and identical values are almost never told apart. Simulated (seeded), since
    /// a real race takes minutes a round.
    #[test]
    fn paired_rounds_see_a_small_gain_through_drift_and_no_gain_among_equals() {
        let runs = 200;
        let mut found = 0;
        let mut false_calls = 0;
        for seed in 0..runs {
            let truths = [("128MB", 1000.0), ("1GB", 1080.0)];
            let (_, d) = drifting_race(seed, &truths, 10, 0.15, 0.02, &Rules::default());
            if d.why == Why::Better && d.value == "1GB" {
                found += 1;
            }
            let values = [
                ("128MB", 1000.0),
                ("256MB", 1000.0),
                ("1GB", 1000.0),
                ("4GB", 1000.0),
            ];
            let (dropped, d) =
                drifting_race(10_000 + seed, &values, 10, 0.15, 0.02, &Rules::default());
            if !dropped.is_empty() || d.why == Why::Better {
                false_calls += 1;
            }
        }
        assert!(found as f64 / runs as f64 >= 0.8, "found {found} of {runs}");
        assert!(
            false_calls as f64 / runs as f64 <= 0.05,
            "{false_calls} of {runs}"
        );
        // The same trials read as independent samples: the drift hides the gain.
        let mut unpaired = 0;
        for seed in 0..runs {
            let mut n = crate::measure::simulate::Noise::new(seed);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..10 {
                let shared = n.trial(1.0, 0.15);
                a.push(n.trial(1080.0 * shared, 0.02));
                b.push(n.trial(1000.0 * shared, 0.02));
            }
            let cmp = crate::measure::verdict::compare(&a, &b, Better::Higher, &Rules::default());
            if cmp.is_some_and(|c| c.verdict == Verdict::Faster) {
                unpaired += 1;
            }
        }
        assert!(unpaired * 4 < found, "unpaired {unpaired}, paired {found}");
    }
}
