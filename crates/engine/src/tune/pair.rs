//! Interacting pairs raced together. `work_mem` × `hash_mem_multiplier` (a hash's memory is
//! their product), `shared_buffers` × `effective_cache_size` (the planner's idea of the cache
//! and the cache itself) and `max_wal_size` × `checkpoint_timeout` (whichever triggers the
//! checkpoint first): raced one after the other, the first race runs with the second setting
//! at its start value and may pick a value that is only best there. When the screening saw
//! both move, the pair races as one: a small grid of its joint values — each setting's value
//! in effect and the end the screening measured better, four configurations run together in
//! one run a round (the product, the order rotating) — and the decision is split back into a
//! line per setting, both with the pair's evidence.

use std::collections::BTreeMap;

use super::candidates::{cheaper, is_cheaper, same_value};
use super::decide::{Decision, Why};
use super::race::Race;
use super::screen::{Effect, PAIRS};
use super::state::TuneState;
use crate::measure::verdict::Better;

const JOIN: &str = " × ";

/// True when `a` and `b` are a known pair (either order).
pub(crate) fn is_known(a: &str, b: &str) -> bool {
    PAIRS
        .iter()
        .any(|(x, y)| (*x == a && *y == b) || (*x == b && *y == a))
}

/// True when the race is a pair's.
pub(crate) fn is_pair(race: &Race) -> bool {
    race.setting.contains(JOIN)
}

/// The two settings of a pair race's name.
pub(crate) fn names(setting: &str) -> Vec<String> {
    setting.split(JOIN).map(str::to_string).collect()
}

/// The pair race due next: the setting up next and the one after it are a known pair and
/// the screening saw both move (they stand together in the plan then).
pub(crate) fn race_for(st: &TuneState, better: Better) -> Option<Race> {
    let i = st.decisions.len();
    let (a, b) = (st.plan.get(i)?, st.plan.get(i + 1)?);
    let screen = st.screen.as_ref()?;
    let (ea, eb) = (screen.effect(&a.name)?, screen.effect(&b.name)?);
    if !(is_known(&a.name, &b.name) && ea.moved && eb.moved) {
        return None;
    }
    let va = two_values(&a.candidates.first()?.0, ea, better);
    let vb = two_values(&b.candidates.first()?.0, eb, better);
    let mut combos = Vec::new();
    for x in &va {
        for y in &vb {
            combos.push((format!("{}={x} {}={y}", a.name, b.name), "pair".to_string()));
        }
    }
    Some(Race::new(&format!("{}{JOIN}{}", a.name, b.name), combos))
}

/// A setting's values in its pair's grid: the value in effect, and the end the screening
/// measured better (the other end when that is the value in effect).
fn two_values(start: &str, e: &Effect, better: Better) -> Vec<String> {
    let high_better = match better {
        Better::Lower => e.ratio < 1.0,
        Better::Higher => e.ratio > 1.0,
    };
    let (best, other) = if high_better {
        (&e.high, &e.low)
    } else {
        (&e.low, &e.high)
    };
    let pick = if best == start { other } else { best };
    vec![start.to_string(), pick.clone()]
}

/// A pair race's axes: each setting with its values, in the candidates' order.
fn axes(race: &Race) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for c in &race.candidates {
        for (j, part) in c.value.split(' ').enumerate() {
            let (n, v) = part.split_once('=').unwrap_or((part, ""));
            if out.len() <= j {
                out.push((n.to_string(), Vec::new()));
            }
            if !out[j].1.iter().any(|x| x == v) {
                out[j].1.push(v.to_string());
            }
        }
    }
    out
}

/// The round's product (first setting outermost), each setting's values rotated so no
/// configuration always runs first, and the candidate label of each of its combinations.
pub(crate) fn round(race: &Race) -> (Vec<(String, Vec<String>)>, Vec<String>) {
    let mut order = axes(race);
    let mut turn = race.rounds;
    for (_, values) in order.iter_mut().rev() {
        let n = values.len().max(1);
        values.rotate_left(turn % n);
        turn /= n;
    }
    let mut labels = vec![String::new()];
    for (name, values) in &order {
        labels = labels
            .iter()
            .flat_map(|l| {
                values.iter().map(move |v| {
                    let sep = if l.is_empty() { "" } else { " " };
                    format!("{l}{sep}{name}={v}")
                })
            })
            .collect();
    }
    (order, labels)
}

/// The partner of `setting` in a known pair.
pub(crate) fn partner(setting: &str) -> Option<&'static str> {
    PAIRS.iter().find_map(|(a, b)| {
        if *a == setting {
            Some(*b)
        } else if *b == setting {
            Some(*a)
        } else {
            None
        }
    })
}

/// How much evidence a decision rests on: `6 rounds, 24 trials in its race`; for a member of
/// a pair's race whose trials are counted on the other member, which race they were.
pub(crate) fn evidence(d: &Decision) -> String {
    match partner(&d.setting) {
        Some(p) if d.trials == 0 && d.rounds > 0 => format!(
            "{} rounds of its pair's race with {p} (the trials counted there)",
            d.rounds
        ),
        _ => format!("{} rounds, {} trials in its race", d.rounds, d.trials),
    }
}

/// A pair configuration's settings: `work_mem=4MB hash_mem_multiplier=2` by name.
fn settings_of(label: &str) -> BTreeMap<String, String> {
    label
        .split(' ')
        .filter_map(|p| p.split_once('='))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// True when configuration `a` of a pair costs less than `b`: no member dearer, at least one
/// cheaper (so `64MB, 1` is cheaper than `64MB, 2`, and `64MB, 1` against `4MB, 2` is
/// neither: one member cheaper, the other dearer). A member without a cheaper direction
/// (`effective_cache_size`: the planner's estimate, no memory) costs the same at any value.
pub(crate) fn combo_cheaper(a: &str, b: &str) -> bool {
    let (a, b) = (settings_of(a), settings_of(b));
    let mut any_cheaper = false;
    for (name, va) in &a {
        let Some(vb) = b.get(name) else {
            return false;
        };
        if same_value(va, vb) || cheaper(name).is_none() {
            continue;
        }
        if !is_cheaper(name, va, vb) {
            return false;
        }
        any_cheaper = true;
    }
    any_cheaper
}

/// A pair's decision as one decision per setting, each with the pair's evidence: the trials
/// counted once, on the first member the choice changes (on the first when none changes); a
/// member the choice leaves as it was was not shown anything itself, so it carries no
/// comparison.
pub(crate) fn split(d: Decision) -> Vec<Decision> {
    let (start, value) = (settings_of(&d.start), settings_of(&d.value));
    let members = names(&d.setting);
    let changed = |n: &String| start.get(n) != value.get(n);
    let counted = members.iter().position(changed).unwrap_or(0);
    members
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let (from, to) = (start.get(&n).cloned(), value.get(&n).cloned());
            let stays = from == to;
            Decision {
                why: if stays { Why::NotShown } else { d.why },
                comparison: if stays { None } else { d.comparison.clone() },
                start: from.unwrap_or_default(),
                value: to.unwrap_or_default(),
                setting: n,
                trials: if i == counted { d.trials } else { 0 },
                ..d.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(setting: &str, low: &str, high: &str, ratio: f64) -> Effect {
        Effect {
            setting: setting.into(),
            low: low.into(),
            high: high.into(),
            ratio,
            ratio_low: ratio * 0.9,
            ratio_high: ratio * 1.1,
            level: 0.9,
            rounds: 3,
            moved: true,
        }
    }

    #[test]
    fn the_grid_is_each_start_and_its_better_end_and_every_combination_runs_a_round() {
        // Seconds: work_mem at 64MB ran faster, hash_mem_multiplier at 8 too.
        let wm = two_values(
            "4MB",
            &effect("work_mem", "4MB", "64MB", 0.7),
            Better::Lower,
        );
        assert_eq!(wm, ["4MB", "64MB"]);
        let hm = two_values(
            "2",
            &effect("hash_mem_multiplier", "1", "8", 1.2),
            Better::Lower,
        );
        assert_eq!(hm, ["2", "1"], "the low end measured better");
        let mut race = Race::new(
            "work_mem × hash_mem_multiplier",
            [
                "work_mem=4MB hash_mem_multiplier=2",
                "work_mem=4MB hash_mem_multiplier=1",
                "work_mem=64MB hash_mem_multiplier=2",
                "work_mem=64MB hash_mem_multiplier=1",
            ]
            .iter()
            .map(|v| (v.to_string(), "pair".to_string()))
            .collect(),
        );
        assert!(is_pair(&race));
        let mut firsts = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let (order, labels) = round(&race);
            assert_eq!(order[0].0, "work_mem");
            let mut sorted = labels.clone();
            sorted.sort();
            let mut all: Vec<String> = race.candidates.iter().map(|c| c.value.clone()).collect();
            all.sort();
            assert_eq!(sorted, all);
            firsts.insert(labels[0].clone());
            race.add_round(&[]);
        }
        assert_eq!(firsts.len(), 4, "no configuration always first");
    }

    #[test]
    fn a_pair_decision_becomes_a_line_per_setting() {
        let d = Decision {
            setting: "work_mem × hash_mem_multiplier".into(),
            start: "work_mem=4MB hash_mem_multiplier=2".into(),
            value: "work_mem=64MB hash_mem_multiplier=2".into(),
            why: Why::Better,
            comparison: None,
            confidence: 0.99,
            rounds: 6,
            trials: 24,
        };
        let s = split(d);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (
                s[0].setting.as_str(),
                s[0].start.as_str(),
                s[0].value.as_str(),
                s[0].trials
            ),
            ("work_mem", "4MB", "64MB", 24)
        );
        assert_eq!(
            (
                s[1].setting.as_str(),
                s[1].start.as_str(),
                s[1].value.as_str(),
                s[1].trials
            ),
            ("hash_mem_multiplier", "2", "2", 0)
        );
        assert_eq!((s[0].why, s[1].why), (Why::Better, Why::NotShown));
        assert_eq!(evidence(&s[0]), "6 rounds, 24 trials in its race");
        assert_eq!(
            evidence(&s[1]),
            "6 rounds of its pair's race with work_mem (the trials counted there)"
        );
        assert!(is_known("effective_cache_size", "shared_buffers"));
        assert!(!is_known("work_mem", "jit"));
    }

    /// When only the second member changes, the trials are counted on it, and the first
    /// (left as it was) carries no comparison of its own.
    #[test]
    fn the_trials_go_to_the_member_the_choice_changes() {
        let d = Decision {
            setting: "work_mem × hash_mem_multiplier".into(),
            start: "work_mem=4MB hash_mem_multiplier=2".into(),
            value: "work_mem=4MB hash_mem_multiplier=1".into(),
            why: Why::EquivalentCheaper,
            comparison: None,
            confidence: 0.99,
            rounds: 5,
            trials: 20,
        };
        let s = split(d);
        assert_eq!((s[0].trials, s[1].trials), (0, 20));
        assert_eq!(
            (s[0].why, s[1].why),
            (Why::NotShown, Why::EquivalentCheaper)
        );
        assert!(s[0].comparison.is_none());
        assert_eq!(
            evidence(&s[0]),
            "5 rounds of its pair's race with hash_mem_multiplier (the trials counted there)"
        );
    }

    #[test]
    fn a_configuration_is_cheaper_when_no_member_is_dearer() {
        let c = |a: &str, b: &str| combo_cheaper(a, b);
        assert!(c(
            "shared_buffers=1GB effective_cache_size=4GB",
            "shared_buffers=6GB effective_cache_size=4GB"
        ));
        assert!(c(
            "shared_buffers=1GB effective_cache_size=4GB",
            "shared_buffers=6GB effective_cache_size=16GB"
        ));
        assert!(
            c(
                "shared_buffers=1GB effective_cache_size=16GB",
                "shared_buffers=6GB effective_cache_size=4GB"
            ),
            "effective_cache_size costs nothing"
        );
        assert!(
            !c(
                "work_mem=64MB hash_mem_multiplier=1",
                "work_mem=4MB hash_mem_multiplier=2"
            ),
            "one member cheaper, the other dearer: not comparable"
        );
        assert!(
            !c(
                "shared_buffers=1GB effective_cache_size=4GB",
                "shared_buffers=1024MB effective_cache_size=4GB"
            ),
            "the same configuration is not cheaper than itself"
        );
    }

    /// Both configurations with work_mem at 64MB beat the start by half and neither is shown
    /// worse than the other: the race takes the cheaper, the smaller hash_mem_multiplier,
    /// although the dearer one measured a hair faster.
    #[test]
    fn a_pair_race_takes_the_cheapest_of_the_configurations_that_may_be_best() {
        use crate::measure::rules::Rules;
        const NOISE: [f64; 8] = [1.0, 0.99, 1.01, 0.98, 1.02, 1.0, 0.995, 1.005];
        let truths = [
            ("work_mem=4MB hash_mem_multiplier=2", 10.0),
            ("work_mem=4MB hash_mem_multiplier=1", 10.0),
            ("work_mem=64MB hash_mem_multiplier=2", 4.98),
            ("work_mem=64MB hash_mem_multiplier=1", 5.0),
        ];
        let mut race = Race::new(
            "work_mem × hash_mem_multiplier",
            truths
                .iter()
                .map(|(v, _)| (v.to_string(), "pair".to_string()))
                .collect(),
        );
        let rules = Rules::default();
        race.plan_looks(rules.confidence, 8);
        let mut i = 0;
        while !race.settled(Better::Lower, &rules) {
            let m: Vec<(String, f64)> = race
                .next_order()
                .into_iter()
                .map(|v| {
                    i += 1;
                    let t = truths.iter().find(|(n, _)| *n == v).unwrap().1;
                    (v, t * NOISE[i % NOISE.len()])
                })
                .collect();
            race.add_round(&m);
            race.look(Better::Lower, &rules);
        }
        let d = race.decide(Better::Lower, &rules);
        assert_eq!(d.why, Why::Better, "{d:?}");
        assert_eq!(d.value, "work_mem=64MB hash_mem_multiplier=1", "{d:?}");
    }
}
