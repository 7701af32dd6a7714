//! One correction across the races of one tune. Each race keeps its own error within α
//! (Bonferroni over its pairs of values and its looks, [`super::race`]); a tune runs several
//! races, and each could change a setting for nothing, so seven races at α each would give a
//! tune of seven settings about seven times the chance of a false change. The tune's error
//! is split over its races (Bonferroni): each race runs at α/R, R the races the screening
//! sent on ([`super::screen`]), so the whole tune changes a setting for nothing with
//! probability at most α.
//!
//! R is counted after the screening, on which the choice of races depends; the races measure
//! on trials of their own (the screening's are not reused), so given the choice each race's
//! error is still at most α/R, and so is the tune's at most α. A tune without a screening (a
//! state saved by an older pglab, a single setting) splits α over every setting of its plan.

use crate::measure::rules::Rules;

/// The rules each race of a tune of `races` races is judged by: the confidence's error split
/// evenly over them.
pub(crate) fn race_rules(rules: &Rules, races: usize) -> Rules {
    Rules {
        confidence: 1.0 - (1.0 - rules.confidence) / races.max(1) as f64,
        ..*rules
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::experiment::lab::whatif::Apply;
    use crate::measure::simulate::Noise;
    use crate::measure::verdict::Better;
    use crate::tune::decide::Why;
    use crate::tune::race::Race;
    use crate::tune::screen::Screen;
    use crate::tune::state::SettingPlan;

    /// Seven session settings a query tune searches, each with its candidates (the value in
    /// effect first).
    fn plan() -> Vec<SettingPlan> {
        [
            ("work_mem", &["4MB", "64MB", "16MB"][..]),
            ("random_page_cost", &["4", "1.1", "2"]),
            ("jit", &["on", "off"]),
            ("effective_cache_size", &["4GB", "12GB", "1GB"]),
            ("effective_io_concurrency", &["1", "200", "32"]),
            ("max_parallel_workers_per_gather", &["2", "0", "4"]),
            ("hash_mem_multiplier", &["2", "8"]),
        ]
        .iter()
        .map(|(n, v)| SettingPlan {
            name: n.to_string(),
            apply: Apply::Session,
            candidates: v.iter().map(|v| (v.to_string(), "sim".into())).collect(),
        })
        .collect()
    }

    /// The simulated workload: seconds a pass, 10 s at the start, `gain` the factor one
    /// value of one setting brings (1.0 everywhere: an A/A tune).
    struct World {
        gain: Option<(&'static str, &'static str, f64)>,
        drift: f64,
        noise: f64,
    }

    impl World {
        fn truth(&self, config: &BTreeMap<String, String>) -> f64 {
            let mut t = 10.0;
            if let Some((s, v, g)) = self.gain
                && config.get(s).is_some_and(|x| x == v)
            {
                t *= g;
            }
            t
        }
    }

    /// One simulated tune, the way the engine runs it: the screening's rounds, each group
    /// a run of its factorial with a drift shared by the round; then a race per setting that
    /// moved, largest effect first, at the tune-wide corrected rules, each carrying what the
    /// races before it chose; ten rounds planned a race. Returns the decisions that changed a
    /// value because it was shown better, and the passes spent.
    fn tune(
        world: &World,
        seed: u64,
        rules: &Rules,
        across: bool,
    ) -> (Vec<(String, String)>, usize) {
        let mut n = Noise::new(seed);
        let plan = plan();
        let mut screen = Screen::new(&plan);
        while let Some(gi) = screen.next_group() {
            let g = &mut screen.groups[gi];
            let shared = n.trial(1.0, world.drift);
            let r = g.rounds.len();
            let m: BTreeMap<usize, f64> = (0..g.configs())
                .map(|i| {
                    let c = g.config_of(r, i);
                    let config = g
                        .factors
                        .iter()
                        .enumerate()
                        .map(|(j, f)| {
                            let v = if (c >> j) & 1 == 1 { &f.high } else { &f.low };
                            (f.setting.clone(), v.clone())
                        })
                        .collect();
                    (i, n.trial(world.truth(&config) * shared, world.noise))
                })
                .collect();
            g.add_round(&m);
        }
        screen.finish(rules.margin());
        let mut passes = screen.passes();
        let moved = screen.moved();
        let race_rules = race_rules(rules, if across { moved.len() } else { 1 });
        let mut carried: BTreeMap<String, String> = BTreeMap::new();
        let mut changed = Vec::new();
        for setting in moved {
            let p = plan.iter().find(|p| p.name == setting).unwrap();
            let mut race = Race::new(setting, p.candidates.clone());
            race.plan_looks(race_rules.confidence, 10);
            while !race.settled(Better::Lower, &race_rules) {
                let shared = n.trial(1.0, world.drift);
                let m: Vec<(String, f64)> = race
                    .next_order()
                    .into_iter()
                    .map(|v| {
                        let mut config = carried.clone();
                        config.insert(setting.to_string(), v.clone());
                        let t = n.trial(world.truth(&config) * shared, world.noise);
                        (v, t)
                    })
                    .collect();
                passes += m.len();
                race.add_round(&m);
                race.look(Better::Lower, &race_rules);
            }
            let d = race.decide(Better::Lower, &race_rules);
            if d.why == Why::Better {
                changed.push((d.setting.clone(), d.value.clone()));
            }
            if d.value != d.start {
                carried.insert(d.setting, d.value);
            }
        }
        (changed, passes)
    }

    /// A/A tunes (every value of every setting the same) that changed a setting, and tunes
    /// where one value 10% faster was found, of 200 each; the most passes a tune spent.
    fn rates(rules: &Rules, across: bool) -> (usize, usize, usize) {
        let aa = World {
            gain: None,
            drift: 0.15,
            noise: 0.02,
        };
        let real = World {
            gain: Some(("work_mem", "64MB", 0.90)),
            ..aa
        };
        let (mut false_tunes, mut found, mut most) = (0, 0, 0);
        for seed in 0..200 {
            let (changed, passes) = tune(&aa, seed, rules, across);
            false_tunes += usize::from(!changed.is_empty());
            most = most.max(passes);
            let (changed, passes) = tune(&real, 50_000 + seed, rules, across);
            found += usize::from(changed.contains(&("work_mem".into(), "64MB".into())));
            most = most.max(passes);
        }
        (false_tunes, found, most)
    }

    /// Issue 37: a tune of seven settings must not get seven times a race's chance of a false
    /// change. Simulated (seeded; a real tune takes minutes a round): 15% drift between
    /// rounds and 2% noise within one, like the race's own simulation. In A/A tunes no value
    /// is shown better in at least 95% of the tunes; with one setting's value 10% faster (the
    /// low end of the 10–20%), the tune finds it in at least 80%; and each tune
    /// spends under 30% of a grid over the same values (at the race's first-look trials per
    /// configuration). Twice: with the default rules, where the screening sends few settings
    /// on, and with no smallest effect (every interval clear of 1 counts), where every
    /// setting moves and is raced: there the seven races without the correction across them
    /// change a setting in more than 5% of A/A tunes, and with it in fewer. A value "shown
    /// equivalent and cheaper" is not counted as a change: in an A/A world that claim is true.
    #[test]
    fn a_tune_of_seven_settings_changes_nothing_in_aa_and_finds_a_single_real_gain() {
        let grid: usize = plan().iter().map(|p| p.candidates.len()).product::<usize>()
            * crate::tune::looks::FIRST_LOOK;
        let strict = Rules {
            min_effect: 0.0,
            ..Rules::default()
        };
        for rules in [Rules::default(), strict] {
            let (false_tunes, found, most) = rates(&rules, true);
            assert!(
                false_tunes * 20 <= 200,
                "{false_tunes} of 200 A/A tunes changed a setting"
            );
            assert!(
                found * 10 >= 200 * 8,
                "found the 10% gain in {found} of 200 tunes"
            );
            assert!(most * 10 <= grid * 3, "{most} passes of a grid of {grid}");
        }
        let (uncorrected, _, _) = rates(&strict, false);
        assert!(
            uncorrected * 20 > 200,
            "{uncorrected} of 200 without the correction"
        );
    }

    #[test]
    fn the_error_is_split_over_the_races() {
        let r = race_rules(&Rules::default(), 5);
        assert!((r.confidence - 0.99).abs() < 1e-12);
        assert_eq!(race_rules(&Rules::default(), 0), Rules::default());
    }
}
