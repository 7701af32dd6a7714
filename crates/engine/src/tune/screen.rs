//! Screening before racing. Racing every setting one at a time spends as much on a setting
//! that moves nothing as on one that matters, and the budget ran out before `shared_buffers`
//! was ever tried. So a tune first *screens*: each setting at the two ends of its candidate
//! values (the most distant ones: its smallest and largest, `on` and `off`), a few paired
//! rounds ([`SCREEN_ROUNDS`]), and ranks the settings by the effect measured, with its
//! interval. The budget then goes to racing the settings that moved, largest effect first;
//! a setting that moved nothing is reported "screened: no effect seen (×0.99 [0.97, 1.02])"
//! and not raced.
//!
//! Settings are screened in groups of up to [`MAX_GROUP`], as a two-level factorial: one run
//! of the workload holds every combination of the group's ends (four configurations for two
//! settings), and each setting's effect is the contrast of the configurations at its high end
//! against those at its low end, within the round (paired: drift between rounds cancels).
//! Four configurations then measure two settings at both ends twice over, where one setting
//! at a time took the same four runs for half the information; and restart settings grouped
//! together share their restarts (each configuration restarts once for all of its group).
//! The known interactions ([`PAIRS`]) are always screened together, so their interaction is
//! measured too.
//!
//! Screening decides nothing about a value: the races run afterwards on trials of their own,
//! so choosing which settings to race from the screening's data does not bias them, and the
//! tune's error is corrected over the races the screening sends on ([`super::family`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::candidates::number_of;
use super::state::SettingPlan;
use crate::experiment::lab::whatif::Apply;
use crate::measure::paired;

/// Rounds each group runs: three within-round contrasts, the fewest a t interval means
/// anything on.
pub const SCREEN_ROUNDS: usize = 3;
/// The level of the screening's intervals: a screen only chooses what to race (the races
/// carry the error of the tune), so it errs towards racing.
pub const SCREEN_LEVEL: f64 = 0.90;
/// Settings screened together in one run: 2^k configurations a round.
pub(crate) const MAX_GROUP: usize = 2;

/// Settings known to act together: screened together, and raced together when both moved.
pub(crate) const PAIRS: [(&str, &str); 3] = [
    ("work_mem", "hash_mem_multiplier"),
    ("shared_buffers", "effective_cache_size"),
    ("max_wal_size", "checkpoint_timeout"),
];

/// One setting of a screening group and its two ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    pub setting: String,
    /// The value in effect.
    pub start: String,
    pub low: String,
    pub high: String,
}

/// Settings screened together, and what their rounds measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub factors: Vec<Factor>,
    /// Per round, the measure of each configuration by its bits (bit j set: factor j at its
    /// high end).
    pub rounds: Vec<Vec<f64>>,
}

/// What the screening measured of one setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub setting: String,
    pub low: String,
    pub high: String,
    /// The measure at the high end over the measure at the low end (geometric, paired).
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub level: f64,
    pub rounds: usize,
    /// Raced: the interval is clear of 1, or the ratio is past the smallest effect.
    pub moved: bool,
}

/// Two settings' interaction: how much the effect of one changes with the other (the
/// ratio of ratios), when they were screened together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    pub a: String,
    pub b: String,
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
}

/// The screening of a tune: its groups, then (once done) the effects ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Screen {
    pub groups: Vec<Group>,
    pub done: bool,
    /// Every setting screened, largest effect first.
    #[serde(default)]
    pub effects: Vec<Effect>,
    #[serde(default)]
    pub interactions: Vec<Interaction>,
}

/// A setting's two ends: its smallest and largest candidate when they are numbers, else the
/// value in effect and the last other candidate. None when there is only one value.
pub(crate) fn factor_of(p: &SettingPlan) -> Option<Factor> {
    let values: Vec<&String> = p.candidates.iter().map(|(v, _)| v).collect();
    let start = values.first()?.to_string();
    let numbers: Option<Vec<f64>> = values.iter().map(|v| number_of(v)).collect();
    let (low, high) = match numbers {
        Some(n) => {
            let by = |pick: fn(f64, f64) -> bool| {
                let mut best = 0;
                for i in 1..n.len() {
                    if pick(n[i], n[best]) {
                        best = i;
                    }
                }
                values[best].to_string()
            };
            (by(|a, b| a < b), by(|a, b| a > b))
        }
        None => (
            start.clone(),
            values.iter().rev().find(|v| ***v != start)?.to_string(),
        ),
    };
    (low != high).then_some(Factor {
        setting: p.name.clone(),
        start,
        low,
        high,
    })
}

/// The screening groups of `plan`: the known pairs together, then the restart settings in
/// groups of their own (they share restarts), then the others, in plan order, up to
/// [`MAX_GROUP`] a group.
pub(crate) fn groups(plan: &[SettingPlan]) -> Vec<Group> {
    let factors: Vec<(Factor, bool)> = plan
        .iter()
        .filter_map(|p| factor_of(p).map(|f| (f, p.apply == Apply::Restart)))
        .collect();
    let mut used = vec![false; factors.len()];
    let find = |name: &str| factors.iter().position(|(f, _)| f.setting == name);
    let mut out = Vec::new();
    for (a, b) in PAIRS {
        if let (Some(i), Some(j)) = (find(a), find(b)) {
            used[i] = true;
            used[j] = true;
            out.push(vec![factors[i].0.clone(), factors[j].0.clone()]);
        }
    }
    for restart in [true, false] {
        let rest: Vec<Factor> = factors
            .iter()
            .zip(&used)
            .filter(|((_, r), u)| *r == restart && !**u)
            .map(|((f, _), _)| f.clone())
            .collect();
        out.extend(rest.chunks(MAX_GROUP).map(<[Factor]>::to_vec));
    }
    out.into_iter()
        .map(|factors| Group {
            factors,
            rounds: Vec::new(),
        })
        .collect()
}

impl Screen {
    pub(crate) fn new(plan: &[SettingPlan]) -> Screen {
        Screen {
            groups: groups(plan),
            ..Screen::default()
        }
    }

    /// The group to run next (None: every group ran its rounds).
    pub(crate) fn next_group(&self) -> Option<usize> {
        self.groups
            .iter()
            .position(|g| g.rounds.len() < SCREEN_ROUNDS)
    }

    #[cfg(test)]
    /// Passes the screening still needs.
    pub(crate) fn passes_left(&self) -> usize {
        self.groups
            .iter()
            .map(|g| g.configs() * SCREEN_ROUNDS.saturating_sub(g.rounds.len()))
            .sum()
    }

    /// Passes the screening ran.
    pub fn passes(&self) -> usize {
        self.groups
            .iter()
            .map(|g| g.configs() * g.rounds.len())
            .sum()
    }

    /// End the screening: each setting's effect, largest first, and the interactions worth
    /// telling (the known pairs', and any other shown).
    /// `margin` is the smallest effect worth acting on (log scale).
    pub(crate) fn finish(&mut self, margin: f64) {
        let mut effects = Vec::new();
        let mut interactions = Vec::new();
        for g in &self.groups {
            effects.extend((0..g.factors.len()).filter_map(|j| g.effect(j, margin)));
            // Told for the known pairs, and for any other two settings screened together
            // only when their interval is clear of ×1: an unrelated group's "no interaction"
            // is noise in the report.
            if g.factors.len() == 2
                && let Some(i) = g.interaction()
                && (super::pair::is_known(&i.a, &i.b) || i.ratio_low > 1.0 || i.ratio_high < 1.0)
            {
                interactions.push(i);
            }
        }
        effects.sort_by(|a, b| b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()));
        self.effects = effects;
        self.interactions = interactions;
        self.done = true;
    }

    pub fn effect(&self, setting: &str) -> Option<&Effect> {
        self.effects.iter().find(|e| e.setting == setting)
    }

    /// The settings to race, largest effect first.
    pub(crate) fn moved(&self) -> Vec<&str> {
        self.effects
            .iter()
            .filter(|e| e.moved)
            .map(|e| e.setting.as_str())
            .collect()
    }
}

impl Group {
    pub(crate) fn configs(&self) -> usize {
        1 << self.factors.len()
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.factors.iter().map(|f| f.setting.as_str()).collect()
    }

    /// Each factor's values in the order round `r` runs them (a product, first factor
    /// outermost): factor j's `[low, high]` reversed in the rounds whose bit j is set, so no
    /// configuration always runs first.
    pub(crate) fn order(&self, r: usize) -> Vec<(String, Vec<String>)> {
        self.factors
            .iter()
            .enumerate()
            .map(|(j, f)| {
                let mut v = vec![f.low.clone(), f.high.clone()];
                if (r >> j) & 1 == 1 {
                    v.reverse();
                }
                (f.setting.clone(), v)
            })
            .collect()
    }

    /// The configuration (bits) of the `i`-th combination of round `r`'s product.
    pub(crate) fn config_of(&self, r: usize, i: usize) -> usize {
        let k = self.factors.len();
        (0..k).fold(0, |bits, j| {
            let second = (i >> (k - 1 - j)) & 1 == 1;
            let reversed = (r >> j) & 1 == 1;
            bits | (usize::from(second != reversed) << j)
        })
    }

    /// A configuration as a label: `jit=off random_page_cost=1.1`.
    pub(crate) fn label(&self, bits: usize) -> String {
        self.factors
            .iter()
            .enumerate()
            .map(|(j, f)| {
                let v = if (bits >> j) & 1 == 1 {
                    &f.high
                } else {
                    &f.low
                };
                format!("{}={v}", f.setting)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Record round `r`'s measures, by the product's index; false when one is missing.
    pub(crate) fn add_round(&mut self, measures: &BTreeMap<usize, f64>) -> bool {
        let r = self.rounds.len();
        let mut row = vec![f64::NAN; self.configs()];
        for i in 0..self.configs() {
            let Some(m) = measures.get(&i) else {
                return false;
            };
            row[self.config_of(r, i)] = *m;
        }
        self.rounds.push(row);
        true
    }

    /// Per round, the mean log measure of the configurations where `sign(bits)` is +1 minus
    /// the mean where it is −1 (rounds with a value that is not usable are left out).
    fn contrasts(&self, sign: impl Fn(usize) -> bool) -> Vec<f64> {
        self.rounds
            .iter()
            .filter(|row| row.iter().all(|m| m.is_finite() && *m > 0.0))
            .map(|row| {
                let half = (row.len() / 2) as f64;
                row.iter()
                    .enumerate()
                    .map(|(c, m)| if sign(c) { m.ln() } else { -m.ln() })
                    .sum::<f64>()
                    / half
            })
            .collect()
    }

    /// Factor `j`'s effect: its high end against its low end, averaged over the others'.
    pub(crate) fn effect(&self, j: usize, margin: f64) -> Option<Effect> {
        let d = self.contrasts(|c| (c >> j) & 1 == 1);
        if d.len() < 2 {
            return None;
        }
        let (point, low, high) = paired::interval(&d, SCREEN_LEVEL);
        let f = &self.factors[j];
        Some(Effect {
            setting: f.setting.clone(),
            low: f.low.clone(),
            high: f.high.clone(),
            ratio: point.exp(),
            ratio_low: low.exp(),
            ratio_high: high.exp(),
            level: SCREEN_LEVEL,
            rounds: d.len(),
            moved: low > 0.0 || high < 0.0 || point.abs() >= margin,
        })
    }

    /// A two-setting group's interaction: the effect of the first at the second's high end
    /// over its effect at the low end (×1: they act alone).
    pub(crate) fn interaction(&self) -> Option<Interaction> {
        let d = self.contrasts(|c| c == 0 || c == 3);
        if d.len() < 2 {
            return None;
        }
        // The contrast above is (ln m11 + ln m00 − ln m01 − ln m10) / 2: twice it is the
        // log of the ratio of ratios.
        let d: Vec<f64> = d.iter().map(|x| 2.0 * x).collect();
        let (point, low, high) = paired::interval(&d, SCREEN_LEVEL);
        Some(Interaction {
            a: self.factors[0].setting.clone(),
            b: self.factors[1].setting.clone(),
            ratio: point.exp(),
            ratio_low: low.exp(),
            ratio_high: high.exp(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(name: &str, apply: Apply, values: &[&str]) -> SettingPlan {
        SettingPlan {
            name: name.into(),
            apply,
            candidates: values
                .iter()
                .map(|v| (v.to_string(), "test".to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_ends_are_the_most_distant_values() {
        let f = factor_of(&plan("work_mem", Apply::Session, &["4MB", "32MB", "8MB"])).unwrap();
        assert_eq!((f.low.as_str(), f.high.as_str()), ("4MB", "32MB"));
        let f = factor_of(&plan(
            "random_page_cost",
            Apply::Session,
            &["4", "1.1", "2"],
        ))
        .unwrap();
        assert_eq!((f.low.as_str(), f.high.as_str()), ("1.1", "4"));
        let f = factor_of(&plan(
            "checkpoint_timeout",
            Apply::Reload,
            &["5min", "15min", "30min"],
        ))
        .unwrap();
        assert_eq!((f.low.as_str(), f.high.as_str()), ("5min", "30min"));
        let f = factor_of(&plan("jit", Apply::Session, &["on", "off"])).unwrap();
        assert_eq!((f.low.as_str(), f.high.as_str()), ("on", "off"));
        assert!(factor_of(&plan("jit", Apply::Session, &["on"])).is_none());
    }

    #[test]
    fn pairs_go_together_and_restart_settings_share_their_runs() {
        let p = vec![
            plan("work_mem", Apply::Session, &["4MB", "64MB"]),
            plan("shared_buffers", Apply::Restart, &["128MB", "2GB"]),
            plan("jit", Apply::Session, &["on", "off"]),
            plan("wal_buffers", Apply::Restart, &["4MB", "16MB"]),
            plan("hash_mem_multiplier", Apply::Session, &["2", "8"]),
            plan("random_page_cost", Apply::Session, &["4", "1.1"]),
            plan("max_connections", Apply::Restart, &["100", "50"]),
        ];
        let gs = groups(&p);
        let names: Vec<Vec<&str>> = gs.iter().map(|g| g.names()).collect();
        assert_eq!(
            names,
            vec![
                vec!["work_mem", "hash_mem_multiplier"],
                vec!["shared_buffers", "wal_buffers"],
                vec!["max_connections"],
                vec!["jit", "random_page_cost"],
            ]
        );
        let s = Screen::new(&p);
        assert_eq!(s.passes_left(), (4 + 4 + 2 + 4) * SCREEN_ROUNDS);
    }

    #[test]
    fn every_configuration_runs_once_a_round_and_none_always_first() {
        let p = vec![
            plan("jit", Apply::Session, &["on", "off"]),
            plan("random_page_cost", Apply::Session, &["4", "1.1"]),
        ];
        let g = &groups(&p)[0];
        let mut firsts = std::collections::BTreeSet::new();
        for r in 0..4 {
            let configs: std::collections::BTreeSet<usize> =
                (0..4).map(|i| g.config_of(r, i)).collect();
            assert_eq!(configs.len(), 4, "round {r}");
            firsts.insert(g.config_of(r, 0));
            // The product's first combination is the first values of the round's order.
            let o = g.order(r);
            let c = g.config_of(r, 0);
            for (j, f) in g.factors.iter().enumerate() {
                let v = if (c >> j) & 1 == 1 { &f.high } else { &f.low };
                assert_eq!(&o[j].1[0], v);
            }
        }
        assert_eq!(firsts.len(), 4);
    }

    /// Drift between rounds, a setting that speeds the pass by 30% and one that does nothing:
    /// the first ranks first and moved, the second did not move, and there is no
    /// interaction.
    #[test]
    fn the_factorial_ranks_a_real_effect_first_and_sees_no_effect_where_there_is_none() {
        use crate::measure::simulate::Noise;
        let p = vec![
            plan("jit", Apply::Session, &["on", "off"]),
            plan("random_page_cost", Apply::Session, &["4", "1.1"]),
        ];
        let mut s = Screen::new(&p);
        let mut n = Noise::new(7);
        while let Some(gi) = s.next_group() {
            let g = &mut s.groups[gi];
            let drift = n.trial(1.0, 0.15);
            let r = g.rounds.len();
            let m: BTreeMap<usize, f64> = (0..g.configs())
                .map(|i| {
                    let c = g.config_of(r, i);
                    // random_page_cost (bit 1) at its high end (4) is 30% slower.
                    let truth = if c & 2 == 2 { 13.0 } else { 10.0 };
                    (i, n.trial(truth * drift, 0.02))
                })
                .collect();
            assert!(g.add_round(&m));
        }
        s.finish(0.05f64.ln_1p());
        assert_eq!(s.effects[0].setting, "random_page_cost");
        assert!(
            s.effects[0].moved && s.effects[0].ratio_low > 1.2,
            "{:?}",
            s.effects
        );
        let jit = s.effect("jit").unwrap();
        assert!(!jit.moved, "{jit:?}");
        assert!(jit.ratio_low < 1.0 && jit.ratio_high > 1.0);
        assert_eq!(s.moved(), ["random_page_cost"]);
        // jit × random_page_cost is no known pair, and no interaction was seen: not told.
        assert!(s.interactions.is_empty(), "{:?}", s.interactions);
        let i = s.groups[0].interaction().unwrap();
        assert!(i.ratio_low < 1.0 && i.ratio_high > 1.0, "{i:?}");
    }
}
