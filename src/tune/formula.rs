//! pgtune's set measured, in words: what the confirmation showed of the formula's whole set
//! against the starting configuration, and what each of its values did in its own race. A
//! tune that recommends nothing still says this, because "pgtune's set is ×1.51 slower here"
//! is the finding that stops a formula's output going into production unmeasured.

use super::confirm::Confirm;
use super::output::{comparison_text, ratio_text};
use super::state::TuneState;

/// The formula's verdict, or why there is none (None: the formula was not measured).
pub fn sentence(st: &TuneState) -> Option<String> {
    let c = st.confirm.as_ref()?;
    if c.formula.is_empty() {
        return None;
    }
    let set: Vec<String> = c.formula.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let verdict = match &c.formula_comparison {
        Some(cmp) => format!("pgtune's set {}", comparison_text(cmp)),
        None => "pgtune's set: no verdict (no round of the confirmation finished)".into(),
    };
    let races = race_evidence(st, c);
    Some(format!(
        "{verdict} against the starting configuration, {} rounds interleaved ({}){}",
        c.rounds,
        set.join(", "),
        if races.is_empty() {
            String::new()
        } else {
            format!("; in their races: {}", races.join(", "))
        }
    ))
}

/// Each formula value that ran in a race, as the ratio of its median to the race's starting
/// value's median (`work_mem=32MB: ×1.30 of 4MB's`): the medians of that race, not a verdict.
fn race_evidence(st: &TuneState, c: &Confirm) -> Vec<String> {
    let mut out = Vec::new();
    for (name, pg) in &c.formula {
        let Some(d) = st.decisions.iter().find(|d| &d.setting == name) else {
            continue;
        };
        let median_of = |value: &str| {
            st.path
                .iter()
                .find(|p| p.setting == *name && p.label == format!("{name}={value}"))
                .map(|p| p.median)
        };
        let raced = st
            .path
            .iter()
            .filter(|p| &p.setting == name)
            .filter_map(|p| p.label.split_once('=').map(|(_, v)| v.to_string()))
            .find(|v| super::candidates::is_pgtunes(pg, v));
        let (Some(v), Some(start)) = (raced, median_of(&d.start)) else {
            continue;
        };
        if let Some(m) = median_of(&v).filter(|_| start > 0.0) {
            out.push(format!(
                "{name}={v}: {} of {}'s median",
                ratio_text(m / start),
                d.start
            ));
        }
    }
    out
}
