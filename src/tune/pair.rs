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

use super::race::{Decision, Race, Why};
use super::screen::{Effect, PAIRS};
use super::state::TuneState;
use crate::measure::verdict::Better;

const JOIN: &str = " × ";

/// True when `a` and `b` are a known pair (either order).
pub fn is_known(a: &str, b: &str) -> bool {
    PAIRS
        .iter()
        .any(|(x, y)| (*x == a && *y == b) || (*x == b && *y == a))
}

/// True when the race is a pair's.
pub fn is_pair(race: &Race) -> bool {
    race.setting.contains(JOIN)
}

/// The two settings of a pair race's name.
pub fn names(setting: &str) -> Vec<String> {
    setting.split(JOIN).map(str::to_string).collect()
}

/// The pair race due next: the setting up next and the one after it are a known pair and
/// the screening saw both move (they stand together in the plan then).
pub fn race_for(st: &TuneState, better: Better) -> Option<Race> {
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
pub fn round(race: &Race) -> (Vec<(String, Vec<String>)>, Vec<String>) {
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
pub fn partner(setting: &str) -> Option<&'static str> {
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

/// How much evidence a decision rests on: `6 rounds, 24 trials`; for the second setting of a
/// pair's race (its trials are counted once, on the first), which race they were.
pub fn evidence(d: &Decision) -> String {
    match partner(&d.setting) {
        Some(p) if d.trials == 0 && d.rounds > 0 => format!(
            "{} rounds of its pair's race with {p}, the trials counted there",
            d.rounds
        ),
        _ => format!("{} rounds, {} trials", d.rounds, d.trials),
    }
}

/// A pair's decision as one decision per setting, each with the pair's evidence (its trials
/// counted once, on the first).
pub fn split(d: Decision) -> Vec<Decision> {
    let parse = |label: &str| -> BTreeMap<String, String> {
        label
            .split(' ')
            .filter_map(|p| p.split_once('='))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    };
    let (start, value) = (parse(&d.start), parse(&d.value));
    names(&d.setting)
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let (from, to) = (start.get(&n).cloned(), value.get(&n).cloned());
            Decision {
                // A member the pair's choice leaves as it was was not shown better itself.
                why: if from == to { Why::NotShown } else { d.why },
                start: from.unwrap_or_default(),
                value: to.unwrap_or_default(),
                setting: n,
                trials: if i == 0 { d.trials } else { 0 },
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
        assert_eq!(evidence(&s[0]), "6 rounds, 24 trials");
        assert_eq!(
            evidence(&s[1]),
            "6 rounds of its pair's race with work_mem, the trials counted there"
        );
        assert!(is_known("effective_cache_size", "shared_buffers"));
        assert!(!is_known("work_mem", "jit"));
    }
}
