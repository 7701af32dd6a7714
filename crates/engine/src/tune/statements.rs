//! Which statements a tuned set gained and which it lost. A workload's pass is one number (the
//! weighted seconds of its statements), so a set that halves one statement while doubling
//! another can look like no change, or like a gain bought with a report that got slower. The
//! confirmation therefore keeps each statement's time per execution on every side of every
//! round, and sets each statement's tuned (and pgtune's) times against the start's.
//!
//! These are many comparisons made at once (statements × sides), so each is held to
//! `1 − α/(statements·sides)` (Bonferroni), and a statement is named as gained or lost only
//! when its interval clears the smallest effect; the rest are listed as not shown different.
//! Rounds are the confirmation's (five), so only large per-statement changes are called.

use serde::{Deserialize, Serialize};

use super::confirm::Side;
use super::output::ratio_text;
use crate::measure::rules::Rules;
use crate::measure::verdict::{Better, Comparison, Verdict, compare_at};

/// One statement's seconds per execution on each side of the confirmation, round by round,
/// and its verdicts against the start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementSides {
    pub name: String,
    pub start: Vec<f64>,
    #[serde(default)]
    pub tuned: Vec<f64>,
    #[serde(default)]
    pub formula: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned_vs_start: Option<Comparison>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula_vs_start: Option<Comparison>,
}

/// Add one finished round: each side's statements with their seconds.
pub(crate) fn add_round(all: &mut Vec<StatementSides>, round: &[(Side, Vec<(String, f64)>)]) {
    for (side, stmts) in round {
        for (name, secs) in stmts {
            let i = match all.iter().position(|s| &s.name == name) {
                Some(i) => i,
                None => {
                    all.push(StatementSides {
                        name: name.clone(),
                        ..StatementSides::default()
                    });
                    all.len() - 1
                }
            };
            let s = &mut all[i];
            match side {
                Side::Start => s.start.push(*secs),
                Side::Tuned => s.tuned.push(*secs),
                Side::Formula => s.formula.push(*secs),
            }
        }
    }
}

/// Each statement's tuned and pgtune's times against the start's, the family corrected over
/// every comparison made.
pub(crate) fn judge(all: &mut [StatementSides], rules: &Rules) {
    let r = rules.effective();
    let made = comparisons(all).max(1);
    let level = 1.0 - (1.0 - r.confidence) / made as f64;
    let margin = r.margin();
    for s in all.iter_mut() {
        // A side measured in fewer rounds (pgtune's set joining late) against the start's
        // times of those rounds: the last ones.
        let vs = |side: &[f64]| {
            let start = super::confirm::tail(&s.start, side.len());
            (!side.is_empty())
                .then(|| compare_at(side, start, Better::Lower, r.confidence, level, margin))
                .flatten()
        };
        s.tuned_vs_start = vs(&s.tuned);
        s.formula_vs_start = vs(&s.formula);
    }
}

/// What a side did to the statements, in words: "gained a ×0.62 (…), lost b ×1.40 (…); not
/// shown different: c, d". None with fewer than two statements (the pass says it all) or
/// nothing measured on that side.
pub(crate) fn sentence(all: &[StatementSides], side: Side) -> Option<String> {
    if all.len() < 2 {
        return None;
    }
    let cmp = |s: &StatementSides| match side {
        Side::Tuned => s.tuned_vs_start.clone(),
        Side::Formula => s.formula_vs_start.clone(),
        Side::Start => None,
    };
    let judged: Vec<(&str, Comparison)> = all
        .iter()
        .filter_map(|s| cmp(s).map(|c| (s.name.as_str(), c)))
        .collect();
    if judged.is_empty() {
        return None;
    }
    let named = |v: Verdict| -> Vec<String> {
        judged
            .iter()
            .filter(|(_, c)| c.verdict == v)
            .map(|(n, c)| {
                format!(
                    "{n} {} ({} … {})",
                    ratio_text(c.ratio),
                    ratio_text(c.ratio_low),
                    ratio_text(c.ratio_high)
                )
            })
            .collect()
    };
    let rest: Vec<&str> = judged
        .iter()
        .filter(|(_, c)| !matches!(c.verdict, Verdict::Faster | Verdict::Slower))
        .map(|(n, _)| *n)
        .collect();
    let (gained, lost) = (named(Verdict::Faster), named(Verdict::Slower));
    let mut parts = Vec::new();
    if !gained.is_empty() {
        parts.push(format!("faster: {}", gained.join(", ")));
    }
    if !lost.is_empty() {
        parts.push(format!("slower: {}", lost.join(", ")));
    }
    if !rest.is_empty() {
        parts.push(format!("not shown different: {}", rest.join(", ")));
    }
    let level = judged[0].1.level;
    Some(format!(
        "per statement (time per execution against the start's, each interval at {:.2}% for the {} comparisons made): {}",
        level * 100.0,
        comparisons(all),
        parts.join("; ")
    ))
}

/// The comparisons the statements make against the start: one per measured side of each.
fn comparisons(all: &[StatementSides]) -> usize {
    all.iter()
        .map(|s| usize::from(!s.tuned.is_empty()) + usize::from(!s.formula.is_empty()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(start: [f64; 3], tuned: [f64; 3]) -> Vec<(Side, Vec<(String, f64)>)> {
        let names = ["report", "lookup", "insert"];
        let side = |v: [f64; 3]| {
            names
                .iter()
                .zip(v)
                .map(|(n, x)| (n.to_string(), x))
                .collect::<Vec<_>>()
        };
        vec![(Side::Start, side(start)), (Side::Tuned, side(tuned))]
    }

    #[test]
    fn a_gain_and_a_loss_hidden_in_one_pass_are_both_named() {
        let mut all = Vec::new();
        // The report halves, the lookup doubles, the insert stays: the pass barely moves.
        for r in 0..5 {
            let wobble = 1.0 + 0.01 * r as f64;
            add_round(
                &mut all,
                &round(
                    [2.0 * wobble, 0.010 * wobble, 0.5 * wobble],
                    [1.0 * wobble, 0.020 * wobble, 0.5 / wobble],
                ),
            );
        }
        judge(&mut all, &Rules::default());
        let s = sentence(&all, Side::Tuned).unwrap();
        assert!(s.contains("faster: report ×0.50"), "{s}");
        assert!(s.contains("slower: lookup ×2.00"), "{s}");
        assert!(s.contains("not shown different: insert"), "{s}");
        // Three comparisons: each at 1 − 5%/3.
        assert!(s.contains("98.33%") && s.contains("3 comparisons"), "{s}");
        assert_eq!(
            sentence(&all, Side::Formula),
            None,
            "pgtune's set was not measured"
        );
    }

    #[test]
    fn identical_sides_call_nothing_and_one_statement_needs_no_sentence() {
        let mut all = Vec::new();
        for r in 0..5 {
            let x = 1.0 + 0.05 * ((r * 7) % 5) as f64;
            add_round(
                &mut all,
                &round([x, x / 100.0, x / 2.0], [x * 1.01, x / 99.0, x / 2.0]),
            );
        }
        judge(&mut all, &Rules::default());
        let s = sentence(&all, Side::Tuned).unwrap();
        assert!(!s.contains("faster:") && !s.contains("slower:"), "{s}");
        all.truncate(1);
        assert_eq!(sentence(&all, Side::Tuned), None);
    }
}
