//! The screening in words: the table of `tune.md`, the comment lines of `tune.sql`, the
//! sentence for a setting the screening did not send on, and the trials spent against a full
//! grid. The TUI's tune view shows the same lines.

use super::decide::Decision;
use super::output::ratio_text;
use super::screen::{Effect, SCREEN_LEVEL, SCREEN_ROUNDS, Screen};
use super::state::TuneState;

/// `×0.71 [×0.65, ×0.78]`.
pub(crate) fn interval_text(e: &Effect) -> String {
    format!(
        "{} [{}, {}]",
        ratio_text(e.ratio),
        ratio_text(e.ratio_low),
        ratio_text(e.ratio_high)
    )
}

/// `moved` or `screened: no effect seen`: the screening's own word, before any race (the
/// TUI's view while the tune runs).
pub(crate) fn outcome(e: &Effect) -> &'static str {
    if e.moved {
        "moved"
    } else {
        "screened: no effect seen"
    }
}

/// The screening's word as the tune ended it, so the table and Decisions say one thing:
/// `raced` only when the setting's race ran; a setting that moved but whose race the budget
/// did not reach is `moved; not raced (budget)`, as its Decisions line says.
pub(crate) fn outcome_in(st: &TuneState, e: &Effect) -> &'static str {
    if !e.moved {
        return outcome(e);
    }
    match st.decisions.iter().find(|d| d.setting == e.setting) {
        Some(d) if d.rounds > 0 => "raced",
        Some(_) => NOT_RACED,
        None if st.is_done() => NOT_RACED,
        None => "moved: to be raced",
    }
}

const NOT_RACED: &str = "moved; not raced (budget)";

/// One setting's line: `work_mem 4MB → 64MB: ×0.71 [×0.65, ×0.78], moved`.
pub fn effect_line(e: &Effect) -> String {
    line_with(e, outcome(e))
}

/// [`effect_line`] with the outcome as the tune ended it ([`outcome_in`]).
pub(crate) fn effect_line_in(st: &TuneState, e: &Effect) -> String {
    line_with(e, outcome_in(st, e))
}

fn line_with(e: &Effect, outcome: &str) -> String {
    format!(
        "{} {} → {}: {}, {outcome}",
        e.setting,
        e.low,
        e.high,
        interval_text(e)
    )
}

/// What the screening is, in a sentence.
pub fn method(s: &Screen) -> String {
    format!(
        "each setting at the two ends of its values, screened in groups (a two-level factorial: every combination of a group's ends in one run), {SCREEN_ROUNDS} paired rounds; the ratio is the measure at the high end over the measure at the low end, its interval at {:.0}%; {} passes",
        SCREEN_LEVEL * 100.0,
        s.passes()
    )
}

/// The word for a setting not raced (a decision of no rounds): screened out with its
/// effect, or not reached by the budget.
pub(crate) fn not_raced(st: &TuneState, d: &Decision) -> String {
    if d.why == super::decide::Why::PlanGuided {
        return format!("{} → {}: {}", d.start, d.value, d.why.as_str());
    }
    match st.screen.as_ref().and_then(|s| s.effect(&d.setting)) {
        Some(e) if !e.moved => format!("screened: no effect seen ({})", interval_text(e)),
        Some(e) => format!("screened: {NOT_RACED} ({})", interval_text(e)),
        None => "not searched (budget)".into(),
    }
}

/// The script's screening lines (none without a screening).
pub(crate) fn sql_lines(st: &TuneState) -> Vec<String> {
    let Some(s) = &st.screen else {
        return Vec::new();
    };
    let mut out = vec![format!("-- screening: {}", method(s))];
    out.extend(
        s.effects
            .iter()
            .enumerate()
            .map(|(i, e)| format!("--   {}. {}", i + 1, effect_line_in(st, e))),
    );
    out.extend(s.interactions.iter().map(|i| {
        format!(
            "--   {} × {} interaction: ×{:.2} [×{:.2}, ×{:.2}] (the effect of one at the other's high end over its effect at the low end)",
            i.a, i.b, i.ratio, i.ratio_low, i.ratio_high
        )
    }));
    out
}

/// The report's screening section: the table, largest effect first.
pub(crate) fn markdown(st: &TuneState) -> String {
    let Some(s) = &st.screen else {
        return String::new();
    };
    let mut m = format!(
        "## Screening\n\n{}.\n\n| rank | setting | low → high | ratio | interval ({:.0}%) | rounds | |\n|---|---|---|---|---|---|---|\n",
        capitalised(&method(s)),
        SCREEN_LEVEL * 100.0
    );
    for (i, e) in s.effects.iter().enumerate() {
        m.push_str(&format!(
            "| {} | {} | {} → {} | {} | {} … {} | {} | {} |\n",
            i + 1,
            e.setting,
            e.low,
            e.high,
            ratio_text(e.ratio),
            ratio_text(e.ratio_low),
            ratio_text(e.ratio_high),
            e.rounds,
            outcome_in(st, e)
        ));
    }
    for i in &s.interactions {
        m.push_str(&format!(
            "\nInteraction {} × {}: {} [{}, {}] (×1: each acts alone).\n",
            i.a,
            i.b,
            ratio_text(i.ratio),
            ratio_text(i.ratio_low),
            ratio_text(i.ratio_high)
        ));
    }
    m.push('\n');
    m
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Passes spent in the screening (0 without one).
pub(crate) fn passes(st: &TuneState) -> usize {
    st.screen.as_ref().map_or(0, Screen::passes)
}
