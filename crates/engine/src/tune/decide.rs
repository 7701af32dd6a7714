//! How a race ends: the value carried on, and why. A value replaces the one in effect only
//! when it is shown better (of those shown better, the cheapest), or shown equivalent (the
//! whole interval within the smallest effect) and cheaper; otherwise the value in effect
//! stays. The comparisons are judged at the corrected confidence of the race's last look
//! ([`super::looks`]): deciding on the same trials spends nothing new.

use serde::{Deserialize, Serialize};

use super::candidates::is_cheaper;
use super::looks::MAX_LEVEL;
use super::race::{Candidate, Race};
use crate::measure::rules::Rules;
use crate::measure::verdict::{Better, Comparison, Verdict, compare_paired};

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
    /// Sized from the plans and measured only in the set as a whole (the budget held no
    /// race): recommended only when the confirmation shows the set better.
    PlanGuided,
}

impl Why {
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Better => "shown better",
            Why::EquivalentCheaper => "shown equivalent and cheaper",
            Why::NotShown => "no other value shown better or equivalent and cheaper",
            Why::PlanGuided => {
                "sized from the plans, measured in the plan-guided set as a whole (its own share of the gain not isolated)"
            }
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

impl Race {
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
    use crate::tune::looks::MAX_ROUNDS;
    use crate::tune::race::tests::{feed, race};

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
}
