//! The screening in words: the table of `tune.md`, the comment lines of `tune.sql`, the
//! sentence for a setting the screening did not send on, and the trials spent against a full
//! grid. The TUI's tune view shows the same lines.

use super::decide::Decision;
use super::output::ratio_text;
use super::screen::{Effect, SCREEN_LEVEL, SCREEN_ROUNDS, Screen};
use super::state::TuneState;

/// `×0.71 [×0.65, ×0.78]`.
pub fn interval_text(e: &Effect) -> String {
    format!(
        "{} [{}, {}]",
        ratio_text(e.ratio),
        ratio_text(e.ratio_low),
        ratio_text(e.ratio_high)
    )
}

/// `raced` or `screened: no effect seen`.
pub fn outcome(e: &Effect) -> &'static str {
    if e.moved {
        "raced"
    } else {
        "screened: no effect seen"
    }
}

/// One setting's line: `work_mem 4MB → 64MB: ×0.71 [×0.65, ×0.78], raced`.
pub fn effect_line(e: &Effect) -> String {
    format!(
        "{} {} → {}: {}, {}",
        e.setting,
        e.low,
        e.high,
        interval_text(e),
        outcome(e)
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
pub fn not_raced(st: &TuneState, d: &Decision) -> String {
    match st.screen.as_ref().and_then(|s| s.effect(&d.setting)) {
        Some(e) if !e.moved => format!("screened: no effect seen ({})", interval_text(e)),
        _ => "not searched (budget)".into(),
    }
}

/// The script's screening lines (none without a screening).
pub fn sql_lines(st: &TuneState) -> Vec<String> {
    let Some(s) = st.screen.as_ref().filter(|s| s.done) else {
        return Vec::new();
    };
    let mut out = vec![format!("-- screening: {}", method(s))];
    out.extend(
        s.effects
            .iter()
            .enumerate()
            .map(|(i, e)| format!("--   {}. {}", i + 1, effect_line(e))),
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
pub fn markdown(st: &TuneState) -> String {
    let Some(s) = st.screen.as_ref().filter(|s| s.done) else {
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
            outcome(e)
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
pub fn passes(st: &TuneState) -> usize {
    st.screen.as_ref().map_or(0, Screen::passes)
}
