//! Racing the candidate values of one setting. Every round runs each value still in the race
//! once, interleaved (the order rotates round by round, so no value always goes first). From
//! round [`FIRST_LOOK`] on, each round is a *look*: every value is compared with the best so
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
//!   the error α = 1 − confidence is split over its looks. Before its first look the race
//!   plans how many looks its share of the budget affords ([`Race::plan_looks`], from the
//!   pace of the runs so far, never from the comparisons), and each look spends α/L of the L
//!   planned (Bonferroni over the looks: at most α over the race, whatever the data). A race
//!   planned before the pace was known (a saved state of an older pglab) spends α·2^−j at
//!   look j instead. A round whose trial count cannot reach the next look's level at all
//!   (fixed by the count and the level, not by the data) is not a look and spends nothing.
//!   A look whose share would need more than 99.9% confidence (beyond what the core
//!   computes) is not planned: the race ends after its last planned look, or at
//!   [`MAX_ROUNDS`] without a plan.
//!
//! The decision at the end ([`Race::decide`]) uses the same corrected confidence: a value
//! replaces the one in effect only when it is shown better, or shown equivalent (the whole
//! interval within the smallest effect) and cheaper.

use serde::{Deserialize, Serialize};

use super::candidates::is_cheaper;
use crate::measure::rules::Rules;
use crate::measure::spending;
use crate::measure::stats::median;
use crate::measure::verdict::{Better, Comparison, Verdict, compare_paired};

/// The first round after which values are compared: the one first look of every sequential
/// decision in pglab ([`spending::FIRST_LOOK`]).
pub const FIRST_LOOK: usize = spending::FIRST_LOOK;
/// A race without a plan of its looks ends after this many rounds whatever it showed.
pub const MAX_ROUNDS: usize = 8;
/// At most this many planned looks (a race of two values could afford hundreds).
pub const MAX_LOOKS: usize = spending::MAX_LOOKS;
/// The highest confidence a look may need (a level past it is too strict to decide anything
/// a tune could afford to measure).
const MAX_LEVEL: f64 = 0.999;

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

/// Why a race ended with the value it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// A value other than the one in effect was shown better.
    Better,
    /// A cheaper value was shown equivalent to the one in effect.
    EquivalentCheaper,
    /// Nothing was shown: the value in effect stays.
    NotShown,
}

impl Why {
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Better => "shown better",
            Why::EquivalentCheaper => "shown equivalent and cheaper",
            Why::NotShown => "no other value shown better or equivalent and cheaper",
        }
    }
}

/// The end of a race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub setting: String,
    /// The value in effect before the race.
    pub start: String,
    /// The value carried on (the start value when nothing was shown).
    pub value: String,
    pub why: Why,
    /// The chosen value against the start value (for `NotShown`: the best against the start),
    /// None when no comparison could be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// The corrected confidence the comparison was judged at.
    pub confidence: f64,
    pub rounds: usize,
    pub trials: usize,
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

/// The confidence of each comparison at look `j` (1-based) among `family` values, with
/// `planned` looks planned: error α/planned (or α·2^−j when none were planned) shared by the
/// family's k(k − 1)/2 pairs. None past the plan, or when that needs more than 99.9%.
pub fn look_confidence(confidence: f64, look: usize, family: usize, planned: usize) -> Option<f64> {
    let level = if planned == 0 {
        let alpha = 1.0 - confidence;
        1.0 - alpha * 0.5f64.powi(look.max(1) as i32) / pairs_of(family) as f64
    } else if look > planned {
        return None;
    } else {
        spending::pair_level(confidence, pairs_of(family), planned)
    };
    (level <= MAX_LEVEL + 1e-12).then_some(level)
}

fn pairs_of(family: usize) -> usize {
    spending::pairs(family.max(2))
}

/// At most this many rounds are planned for one race (its looks spread over them).
pub const MAX_PLANNED_ROUNDS: usize = 40;

/// Rounds between `looks` looks spread from [`FIRST_LOOK`] to round `rounds` (1: a look every
/// round, when the looks are as many as the rounds from the first look on).
pub fn look_step(looks: usize, rounds: usize) -> usize {
    let span = rounds.saturating_sub(FIRST_LOOK);
    if looks <= 1 {
        return 1;
    }
    (span / (looks - 1)).max(1)
}

/// The looks a race of `family` values can plan when it can afford `rounds` rounds in all:
/// one per round from [`FIRST_LOOK`] on ([`spending::looks`]), and no more than keep each
/// look's level within 99.9%.
pub fn looks_for(confidence: f64, family: usize, rounds: usize) -> usize {
    let alpha = 1.0 - confidence;
    let by_level = (alpha / ((1.0 - MAX_LEVEL) * pairs_of(family) as f64) + 1e-9).floor() as usize;
    spending::looks(FIRST_LOOK, rounds).min(by_level.max(1))
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

    /// Plan the race's looks, once, before the first: as many as `rounds` rounds in all
    /// afford ([`looks_for`]).
    pub fn plan_looks(&mut self, confidence: f64, rounds: usize) {
        if self.planned_looks == 0 && self.looks == 0 {
            let rounds = rounds.min(MAX_PLANNED_ROUNDS);
            self.planned_looks = looks_for(confidence, self.family, rounds);
            self.look_step = look_step(self.planned_looks, rounds);
        }
    }

    /// The rounds this race may run: through its last planned look, or [`MAX_ROUNDS`].
    pub fn max_rounds(&self) -> usize {
        if self.planned_looks == 0 {
            MAX_ROUNDS
        } else {
            FIRST_LOOK + self.look_step.max(1) * (self.planned_looks - 1)
        }
    }

    /// True when the rounds run so far end at a planned look's round.
    fn at_look_round(&self) -> bool {
        self.rounds >= FIRST_LOOK
            && (self.rounds - FIRST_LOOK).is_multiple_of(self.look_step.max(1))
    }

    pub fn alive(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| c.dropped.is_none())
    }

    /// The values of the next round, in the order they run: the values still in the race,
    /// rotated by the round number.
    pub fn next_order(&self) -> Vec<String> {
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
    pub fn leader(&self, better: Better) -> Option<&Candidate> {
        Self::best(self.alive(), better)
    }

    fn rules_at(&self, rules: &Rules, look: usize) -> Option<Rules> {
        look_confidence(rules.confidence, look, self.family, self.planned_looks).map(|confidence| {
            Rules {
                confidence,
                ..*rules
            }
        })
    }

    /// True when the trials each value has now can reach the next look's level at all.
    fn look_reachable(&self, r: &Rules) -> bool {
        let n = self.alive().map(|c| c.trials.len()).min().unwrap_or(0);
        n >= crate::measure::verdict::MIN_TRIALS && r.confidence <= MAX_LEVEL + 1e-12
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
    pub fn settled(&self, better: Better, rules: &Rules) -> bool {
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

    /// True when value `a` costs less than `b`: by the setting's cheaper direction, or for a
    /// pair's race by both its members ([`super::pair::combo_cheaper`]).
    fn cheaper_value(&self, a: &str, b: &str) -> bool {
        if super::pair::is_pair(self) {
            super::pair::combo_cheaper(a, b)
        } else {
            is_cheaper(&self.setting, a, b)
        }
    }

    /// Of the values still in the race shown better than `start`, the cheapest, starting
    /// from `best` (the leader, shown better): none of them was shown worse than the leader,
    /// so any may be the best, and the cheapest is what a DBA would take. Values that are not
    /// comparable in cost (a pair with one member cheaper and the other dearer) keep the one
    /// found first.
    fn cheapest_better<'a>(
        &'a self,
        start: &Candidate,
        best: (&'a Candidate, Comparison),
        better: Better,
        r: &Rules,
    ) -> (&'a Candidate, Comparison) {
        self.alive()
            .filter(|c| c.value != start.value && c.value != best.0.value)
            .filter_map(|c| {
                let cmp = compare_paired(&c.trials, &start.trials, better, r)?;
                (cmp.verdict == Verdict::Faster).then_some((c, cmp))
            })
            .fold(best, |acc, c| {
                if self.cheaper_value(&c.0.value, &acc.0.value) {
                    c
                } else {
                    acc
                }
            })
    }

    /// The value to carry on, and why: shown better than the start value (the cheapest of
    /// those still in the race); else the cheapest
    /// value shown equivalent to it; else the start value.
    pub fn decide(&self, better: Better, rules: &Rules) -> Decision {
        // The level of the last look taken (or of the first, had none been): deciding at it on
        // the same trials spends nothing new. A race whose looks cannot stay within 99.9%
        // (a very high --confidence among many values) decides nothing.
        let level = self.rules_at(rules, self.looks.max(1));
        let r = level.unwrap_or(Rules {
            confidence: MAX_LEVEL,
            ..*rules
        });
        let start = self
            .candidates
            .iter()
            .find(|c| c.value == self.start)
            .filter(|_| level.is_some());
        let trials = self.candidates.iter().map(|c| c.trials.len()).sum();
        let mut d = Decision {
            setting: self.setting.clone(),
            start: self.start.clone(),
            value: self.start.clone(),
            why: Why::NotShown,
            comparison: None,
            confidence: r.confidence,
            rounds: self.rounds,
            trials,
        };
        let Some(start) = start else { return d };
        // The best of every value (a dropped start value still counts as the reference).
        if let Some(best) = self.leader(better)
            && best.value != start.value
            && let Some(cmp) = compare_paired(&best.trials, &start.trials, better, &r)
        {
            if cmp.verdict == Verdict::Faster {
                // The values still in the race may all be the best (none was shown worse than
                // the leader): of those shown better than the start, the cheapest is taken.
                let (value, cmp) = self.cheapest_better(start, (best, cmp), better, &r);
                d.value = value.value.clone();
                d.why = Why::Better;
                d.comparison = Some(cmp);
                return d;
            }
            d.comparison = Some(cmp);
        }
        // The cheapest of the values shown equivalent to the start and cheaper than it (a
        // fold, not a sort: a pair's configurations are not all comparable in cost).
        let cheapest = self
            .alive()
            .filter(|c| self.cheaper_value(&c.value, &start.value))
            .filter_map(|c| {
                let cmp = compare_paired(&c.trials, &start.trials, better, &r)?;
                (cmp.verdict == Verdict::NoSignificantDifference && cmp.conclusive())
                    .then_some((c, cmp))
            })
            .reduce(|acc, c| {
                if self.cheaper_value(&c.0.value, &acc.0.value) {
                    c
                } else {
                    acc
                }
            });
        if let Some((c, cmp)) = cheapest {
            d.value = c.value.clone();
            d.why = Why::EquivalentCheaper;
            d.comparison = Some(cmp);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOISE: [f64; 8] = [1.0, 0.99, 1.01, 0.98, 1.02, 1.0, 0.995, 1.005];

    fn race(values: &[&str]) -> Race {
        Race::new(
            "shared_buffers",
            values
                .iter()
                .map(|v| (v.to_string(), "test".to_string()))
                .collect(),
        )
    }

    /// Run `rounds` rounds where value i measures `level[i]` × noise (rows/s).
    fn feed(r: &mut Race, level: &[(&str, f64)], rounds: usize) -> Vec<String> {
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
    fn spending_halves_each_look_and_shares_it_in_the_family() {
        // Three values: three pairs.
        let c1 = look_confidence(0.95, 1, 3, 0).unwrap();
        assert!((c1 - (1.0 - 0.025 / 3.0)).abs() < 1e-12);
        let c2 = look_confidence(0.95, 2, 3, 0).unwrap();
        assert!((c2 - (1.0 - 0.0125 / 3.0)).abs() < 1e-12);
        // Two values: one pair.
        assert!((look_confidence(0.95, 1, 2, 0).unwrap() - 0.975).abs() < 1e-12);
        // The whole race spends less than α: Σ α·2^−j < α.
        let spent: f64 = (1..=10)
            .filter_map(|j| look_confidence(0.95, j, 3, 0))
            .map(|c| (1.0 - c) * 3.0)
            .sum();
        assert!(spent < 0.05);
        // Past 99.9% a look is not taken.
        assert_eq!(look_confidence(0.95, 5, 3, 0), None);
    }

    #[test]
    fn planned_looks_split_alpha_evenly_and_stay_within_the_level() {
        // Three values, 10 looks planned: each look's pairs at α/(3·10).
        let c = look_confidence(0.95, 1, 3, 10).unwrap();
        assert!((c - (1.0 - 0.05 / 30.0)).abs() < 1e-12);
        assert_eq!(look_confidence(0.95, 10, 3, 10), Some(c));
        assert_eq!(look_confidence(0.95, 11, 3, 10), None, "past the plan");
        // Over the plan the race spends α exactly.
        let spent: f64 = (1..=10)
            .filter_map(|j| look_confidence(0.95, j, 3, 10))
            .map(|c| (1.0 - c) * 3.0)
            .sum();
        assert!((spent - 0.05).abs() < 1e-9);
        // Looks: one per affordable round from the first look on, capped by the level.
        assert_eq!(looks_for(0.95, 3, 4), 1);
        assert_eq!(looks_for(0.95, 3, 12), 8);
        assert_eq!(looks_for(0.95, 3, 100), 16, "3 pairs: α/(3·16) ≥ 0.1%");
        assert_eq!(looks_for(0.95, 4, 100), 8, "6 pairs: α/(6·8) ≥ 0.1%");
        assert_eq!(looks_for(0.95, 2, 100), MAX_LOOKS);
        for (k, rounds) in [(2, 30), (3, 30), (4, 30), (5, 30), (6, 30)] {
            let l = looks_for(0.95, k, rounds);
            assert!(
                look_confidence(0.95, l, k, l).is_some(),
                "{k} values, {l} looks"
            );
        }
        let mut r = Race::new(
            "work_mem",
            vec![
                ("a".into(), "current".into()),
                ("b".into(), "pgtune".into()),
                ("c".into(), "around".into()),
            ],
        );
        assert_eq!(r.max_rounds(), MAX_ROUNDS);
        r.plan_looks(0.95, 20);
        assert_eq!((r.planned_looks, r.max_rounds()), (16, 20));
        r.plan_looks(0.95, 6);
        assert_eq!(r.planned_looks, 16, "planned once");
    }

    /// Four values are six pairs: the first planned look is at round [`FIRST_LOOK`], where
    /// Welch's t on the logs tells a value at half the others' throughput apart at the look's
    /// level; before it nothing is dropped.
    #[test]
    fn the_first_look_is_the_planned_one() {
        let mut r = race(&["a", "bb", "ccc", "dddd"]);
        let level = [
            ("a", 1000.0),
            ("bb", 500.0),
            ("ccc", 1000.0),
            ("dddd", 1000.0),
        ];
        let dropped = feed(&mut r, &level, FIRST_LOOK - 1);
        assert_eq!((r.rounds, r.looks), (FIRST_LOOK - 1, 0));
        assert!(dropped.is_empty());
        let dropped = feed(&mut r, &level, 1);
        assert_eq!((r.rounds, r.looks), (FIRST_LOOK, 1));
        assert_eq!(dropped, ["bb"]);
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

    /// 1GB and 6GB both beat 128MB by half and neither is shown worse than the other: both
    /// may be the best, and the cheaper, 1GB, is taken, whichever of the two measured best.
    #[test]
    fn of_the_values_that_may_be_best_the_cheapest_is_taken() {
        for (one, six) in [(1500.0, 1510.0), (1510.0, 1500.0)] {
            let mut r = race(&["128MB", "6GB", "1GB"]);
            feed(
                &mut r,
                &[("128MB", 1000.0), ("6GB", six), ("1GB", one)],
                MAX_ROUNDS,
            );
            assert!(r.alive().any(|c| c.value == "6GB"));
            let d = r.decide(Better::Higher, &Rules::default());
            assert_eq!((d.value.as_str(), d.why), ("1GB", Why::Better), "{d:?}");
            assert_eq!(d.comparison.unwrap().verdict, Verdict::Faster);
        }
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
    fn an_equivalent_cheaper_value_is_taken_and_an_equivalent_dearer_one_is_not() {
        let mut r = race(&["128MB", "1GB", "32MB"]);
        feed(
            &mut r,
            &[("128MB", 1000.0), ("1GB", 1001.0), ("32MB", 1000.5)],
            MAX_ROUNDS,
        );
        let d = r.decide(Better::Higher, &Rules::default());
        assert_eq!((d.value.as_str(), d.why), ("32MB", Why::EquivalentCheaper));
        // Noise wider than the smallest effect: equivalence is not shown, nothing changes.
        let mut r = race(&["128MB", "32MB"]);
        for i in 0..MAX_ROUNDS {
            let wild = if i % 2 == 0 { 0.8 } else { 1.25 };
            r.add_round(&[("128MB".into(), 1000.0), ("32MB".into(), 1000.0 * wild)]);
            r.look(Better::Higher, &Rules::default());
        }
        let d = r.decide(Better::Higher, &Rules::default());
        assert_eq!((d.value.as_str(), d.why), ("128MB", Why::NotShown));
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
    /// (within a round). Returns the values dropped and the decision.
    fn drifting_race(
        seed: u64,
        truths: &[(&str, f64)],
        rounds: usize,
        drift: f64,
        noise: f64,
    ) -> (Vec<String>, Decision) {
        use crate::measure::simulate::Noise;
        let mut n = Noise::new(seed);
        let rules = Rules::default();
        let mut r = race(&truths.iter().map(|(v, _)| *v).collect::<Vec<_>>());
        r.plan_looks(rules.confidence, rounds);
        let mut dropped = Vec::new();
        while !r.settled(Better::Higher, &rules) {
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
            dropped.extend(r.look(Better::Higher, &rules));
        }
        let d = r.decide(Better::Higher, &rules);
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
            let (_, d) = drifting_race(seed, &[("128MB", 1000.0), ("1GB", 1080.0)], 10, 0.15, 0.02);
            if d.why == Why::Better && d.value == "1GB" {
                found += 1;
            }
            let values = [
                ("128MB", 1000.0),
                ("256MB", 1000.0),
                ("1GB", 1000.0),
                ("4GB", 1000.0),
            ];
            let (dropped, d) = drifting_race(10_000 + seed, &values, 10, 0.15, 0.02);
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

    /// A tune of five races holds each at 99%: three values can take only three looks within
    /// 99.9% each, so a race that looked every round ended at round 7 whatever its share of
    /// the budget. Spread over the 40 rounds its share affords, the looks fall at rounds 5,
    /// 22 and 39, and a 6% gain under 5% noise is found far more often (seeded simulation:
    /// a real race takes minutes a round).
    #[test]
    fn looks_capped_by_the_level_are_spread_over_the_rounds_the_share_affords() {
        let mut r = race(&["a", "b", "c"]);
        r.plan_looks(0.99, 40);
        assert_eq!((r.planned_looks, r.look_step, r.max_rounds()), (3, 17, 39));
        let mut looked = Vec::new();
        for _ in 0..r.max_rounds() {
            r.add_round(&[]);
            if r.at_look_round() {
                looked.push(r.rounds);
            }
        }
        assert_eq!(looked, [5, 22, 39]);
        // Not capped: a look every round, as before.
        let mut r = race(&["a", "b", "c"]);
        r.plan_looks(0.95, 20);
        assert_eq!((r.look_step, r.max_rounds()), (1, 20));

        let rules = Rules {
            confidence: 0.99,
            ..Rules::default()
        };
        let found = |rounds: usize, gain: f64| {
            (0..200u64)
                .filter(|seed| {
                    let mut n = crate::measure::simulate::Noise::new(*seed);
                    let mut r = race(&["128MB", "1GB", "4GB"]);
                    r.plan_looks(rules.confidence, rounds);
                    while !r.settled(Better::Higher, &rules) {
                        let shared = n.trial(1.0, 0.15);
                        let m: Vec<(String, f64)> = r
                            .next_order()
                            .into_iter()
                            .map(|v| {
                                let truth = if v == "1GB" { 1000.0 * gain } else { 1000.0 };
                                let t = n.trial(truth * shared, 0.05);
                                (v, t)
                            })
                            .collect();
                        r.add_round(&m);
                        r.look(Better::Higher, &rules);
                    }
                    let d = r.decide(Better::Higher, &rules);
                    d.why == Why::Better && d.value == "1GB"
                })
                .count()
        };
        let (every_round, spread) = (found(7, 1.06), found(40, 1.06));
        // Seeded: 8 of 200 with a look every round, 157 of 200 spread, 0 of 200 among equals.
        assert!(
            spread >= 2 * every_round.max(10),
            "{spread} against {every_round}"
        );
        // Identical values: 1GB is (falsely) taken in at most 1% of 200.
        assert!(found(40, 1.0) <= 2, "{}", found(40, 1.0));
    }
}
