//! When a race looks at its data, and how many rounds it plans: the look schedule of
//! [`super::race`].
//!
//! The race looks again and again as trials come in, so the error α = 1 − confidence is
//! split over its looks (alpha spending). Before its first look the race plans how many looks
//! its share of the budget affords ([`Race::plan_looks`], from the pace of the runs so far,
//! never from the comparisons; `next_round_s` is that pace), and each look spends α/L of
//! the L planned (Bonferroni over the looks: at most α over the race, whatever the data),
//! shared by the family's k(k − 1)/2 pairs ([`look_confidence`]). A race planned before the
//! pace was known (a saved state of an older pglab) spends α·2^−j at look j instead.
//!
//! The first look is at round [`FIRST_LOOK`]. The planned looks fall every round from there,
//! or, when the 99.9% level caps them below the rounds the share affords, every
//! [`look_step`] rounds, spread over those rounds (at most [`MAX_PLANNED_ROUNDS`]). A round
//! whose trial count cannot reach the next look's level at all (fixed by the count and the
//! level, not by the data) is not a look and spends nothing. A look whose share would need
//! more than 99.9% confidence (beyond what the core computes) is not planned: the race ends
//! after its last planned look, or at [`MAX_ROUNDS`] without a plan.

use super::budget::Pace;
use super::race::Race;
use crate::measure::rules::Rules;
use crate::measure::spending;

/// The first round after which values are compared: the one first look of every sequential
/// decision in pglab ([`spending::FIRST_LOOK`]).
pub(crate) const FIRST_LOOK: usize = spending::FIRST_LOOK;
/// A race without a plan of its looks ends after this many rounds whatever it showed.
pub(crate) const MAX_ROUNDS: usize = 8;
#[cfg(test)]
/// At most this many planned looks (a race of two values could afford hundreds).
pub(crate) const MAX_LOOKS: usize = spending::MAX_LOOKS;
/// The highest confidence a look may need (a level past it is too strict to decide anything
/// a tune could afford to measure).
pub(super) const MAX_LEVEL: f64 = 0.999;

/// The confidence of each comparison at look `j` (1-based) among `family` values, with
/// `planned` looks planned: error α/planned (or α·2^−j when none were planned) shared by the
/// family's k(k − 1)/2 pairs. None past the plan, or when that needs more than 99.9%.
pub(crate) fn look_confidence(
    confidence: f64,
    look: usize,
    family: usize,
    planned: usize,
) -> Option<f64> {
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
pub(crate) const MAX_PLANNED_ROUNDS: usize = 40;

/// Rounds between `looks` looks spread from [`FIRST_LOOK`] to round `rounds` (1: a look every
/// round, when the looks are as many as the rounds from the first look on).
pub(crate) fn look_step(looks: usize, rounds: usize) -> usize {
    let span = rounds.saturating_sub(FIRST_LOOK);
    if looks <= 1 {
        return 1;
    }
    (span / (looks - 1)).max(1)
}

/// The looks a race of `family` values can plan when it can afford `rounds` rounds in all:
/// one per round from [`FIRST_LOOK`] on ([`spending::looks`]), and no more than keep each
/// look's level within 99.9%.
pub(crate) fn looks_for(confidence: f64, family: usize, rounds: usize) -> usize {
    let alpha = 1.0 - confidence;
    let by_level = (alpha / ((1.0 - MAX_LEVEL) * pairs_of(family) as f64) + 1e-9).floor() as usize;
    spending::looks(FIRST_LOOK, rounds).min(by_level.max(1))
}

impl Race {
    /// Plan the race's looks, once, before the first: as many as `rounds` rounds in all
    /// afford ([`looks_for`]).
    pub(crate) fn plan_looks(&mut self, confidence: f64, rounds: usize) {
        if self.planned_looks == 0 && self.looks == 0 {
            let rounds = rounds.min(MAX_PLANNED_ROUNDS);
            self.planned_looks = looks_for(confidence, self.family, rounds);
            self.look_step = look_step(self.planned_looks, rounds);
        }
    }

    /// The rounds this race may run: through its last planned look, or [`MAX_ROUNDS`].
    pub(crate) fn max_rounds(&self) -> usize {
        if self.planned_looks == 0 {
            MAX_ROUNDS
        } else {
            FIRST_LOOK + self.look_step.max(1) * (self.planned_looks - 1)
        }
    }

    /// True when the rounds run so far end at a planned look's round.
    pub(super) fn at_look_round(&self) -> bool {
        self.rounds >= FIRST_LOOK
            && (self.rounds - FIRST_LOOK).is_multiple_of(self.look_step.max(1))
    }

    /// The rules of look `look` (1-based): `rules` held to that look's confidence, None past
    /// the plan or past 99.9% ([`look_confidence`]).
    pub(super) fn rules_at(&self, rules: &Rules, look: usize) -> Option<Rules> {
        look_confidence(rules.confidence, look, self.family, self.planned_looks).map(|confidence| {
            Rules {
                confidence,
                ..*rules
            }
        })
    }

    /// True when the trials each value has now can reach the next look's level at all.
    pub(super) fn look_reachable(&self, r: &Rules) -> bool {
        let n = self.alive().map(|c| c.trials.len()).min().unwrap_or(0);
        n >= crate::measure::verdict::MIN_TRIALS && r.confidence <= MAX_LEVEL + 1e-12
    }
}

/// Seconds the race's next round will take: the mean of its own rounds so far (the same
/// setting, with the same restarts or none), else the pace's estimate. The pace mixes every
/// run of the tune: after a screening that restarted the server at 6GB of `shared_buffers` it
/// put a `random_page_cost` round (a reload) at ten times its real length, so that race
/// planned 5 looks where its share afforded forty rounds, and ended undecided with most of
/// the budget unspent. Only times are used, never what the trials showed, so the plan still
/// depends on nothing the comparisons see.
pub(super) fn next_round_s(race: &Race, pace: &Pace, used: f64) -> f64 {
    if race.rounds > 0 && used > 0.0 {
        return used / race.rounds as f64;
    }
    pace.estimate(race.alive().count())
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::decide::Why;
    use crate::tune::race::tests::{drifting_race, feed, race};

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
            let truths = [("128MB", 1000.0), ("1GB", 1000.0 * gain), ("4GB", 1000.0)];
            (0..200u64)
                .filter(|seed| {
                    let (_, d) = drifting_race(*seed, &truths, rounds, 0.15, 0.05, &rules);
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
