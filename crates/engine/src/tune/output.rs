//! The tune's result as a script to review: `tune.sql`, one `ALTER SYSTEM SET` per
//! recommended setting, each preceded by its evidence (medians with intervals and their
//! level before and after, trials, the verdict), what it needs to take effect, and where it
//! was measured; or "no change recommended". pglab never runs it outside its sandbox.

use serde::{Deserialize, Serialize};

use super::candidates::durability_loss;
use super::confirm::{Confirm, Side};
use super::decide::{Decision, Why};
use super::objective::Objective;
use super::state::TuneState;
use crate::experiment::lab::whatif::Apply;
use crate::measure::interval::Estimate;
use crate::measure::verdict::{Comparison, Verdict};

/// Where the tune ran, for the "measured on" line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredOn {
    pub host: String,
    /// `PostgreSQL 15.18, pglab's sandbox` or `… on user@host:port/db`.
    pub server: String,
    /// The workload's data: rows and what the experiment creates.
    pub data: String,
    pub workload: String,
}

/// One recommended setting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recommendation<'a> {
    pub decision: &'a Decision,
    pub apply: Apply,
}

/// `×1.23`, `×0.87`.
pub(crate) fn ratio_text(r: f64) -> String {
    format!("×{r:.2}")
}

fn estimate_text(obj: &Objective, e: &Estimate) -> String {
    format!(
        "median {}, {:.0}% interval {} … {} ({} trials)",
        obj.format(e.median),
        e.level * 100.0,
        obj.format(e.ci_low),
        obj.format(e.ci_high),
        e.n
    )
}

/// "faster: ×1.23 (interval ×1.15 … ×1.31 at 98.8%)".
pub fn comparison_text(c: &Comparison) -> String {
    let words = match c.verdict {
        Verdict::Faster => "better",
        Verdict::Slower => "worse",
        Verdict::NoSignificantDifference => "no significant difference",
        Verdict::TooFewTrials => "too few trials",
        Verdict::NotComparable => "not comparable",
    };
    let (low, high) = (c.ratio_low, c.ratio_high);
    // An interval that leaves the direction open and spans more than the core's "too wide"
    // factor says nothing: its point is not a figure to quote (two rounds can give
    // ×0.00 … ×48854462.89).
    if low < 1.0 && high > 1.0 && (low <= 0.0 || high / low > crate::measure::finding::TOO_WIDE) {
        return format!(
            "{words}: too wide to say (interval {} … {} at {:.1}%)",
            bound_text(low),
            bound_text(high),
            c.level * 100.0
        );
    }
    format!(
        "{words}: {} (interval {} … {} at {:.1}%)",
        ratio_text(c.ratio),
        ratio_text(low),
        ratio_text(high),
        c.level * 100.0
    )
}

/// An interval's end in a too-wide interval: beyond ×100 (or below ×0.01) it is only a side.
fn bound_text(r: f64) -> String {
    if r > 100.0 {
        "above ×100".into()
    } else if r < 0.01 {
        "below ×0.01".into()
    } else {
        ratio_text(r)
    }
}

/// Why the tuned set is not recommended, when it is not: the confirmation decides the whole
/// set, as a race decided each value. The set goes in when the confirmation shows it better
/// than the starting configuration, or shown equivalent when every change was only
/// "equivalent and cheaper" (then the set is cheaper at no shown cost). Anything else —
/// shown worse, equivalent where a change promised better, undecided, not run — holds the
/// script back: changes each within the noise of their race may add up to a loss only the
/// whole set shows, and "not shown worse" is not "as good".
pub(crate) fn withheld(st: &TuneState) -> Option<String> {
    withheld_by(&st.decisions, st.confirmation()).or_else(|| {
        let (line, refused) = memory_line(st);
        refused.then_some(line)
    })
}

/// The worst-case memory of the tuned set (the decisions' values), and whether `--max-memory`
/// refuses it.
pub(crate) fn memory_line(st: &TuneState) -> (String, bool) {
    let set: Vec<(String, String)> = st
        .decisions
        .iter()
        .filter(|d| d.value != d.start && d.why != Why::NotShown)
        .map(|d| (d.setting.clone(), d.value.clone()))
        .collect();
    super::memory::verdict(
        &st.memory,
        &set,
        st.plan_nodes,
        st.hardware.ram,
        st.max_memory,
    )
}

/// [`withheld`] on the decisions and the confirmation alone.
fn withheld_by(decisions: &[Decision], confirm: Option<&Confirm>) -> Option<String> {
    let changed: Vec<&Decision> = decisions
        .iter()
        .filter(|d| d.value != d.start && d.why != Why::NotShown)
        .collect();
    if changed.is_empty() {
        return None;
    }
    let Some(c) = confirm else {
        return Some(
            "the confirmation of the tuned set did not run (the budget ran out first): give a larger --budget or --resume".into(),
        );
    };
    let Some(cmp) = c.comparison.as_ref() else {
        return Some("no round of the confirmation finished: give a larger --budget".into());
    };
    let all_cheaper = changed.iter().all(|d| d.why == Why::EquivalentCheaper);
    match cmp.verdict {
        Verdict::Faster => None,
        Verdict::NoSignificantDifference if all_cheaper => None,
        Verdict::NoSignificantDifference => Some(
            "the confirmation showed the tuned set equivalent to the starting configuration, not better as its races promised".into(),
        ),
        Verdict::Slower => Some(
            "the confirmation showed the tuned set worse than the starting configuration".into(),
        ),
        Verdict::TooFewTrials | Verdict::NotComparable => Some(format!(
            "the confirmation's {} rounds could not tell the tuned set from the starting configuration ({}): measure the set with pglab run --set before applying it",
            c.rounds,
            comparison_text(cmp)
        )),
    }
}

/// The settings to recommend: each race's value when it was shown (better, or equivalent and
/// cheaper) — none when the confirmation did not confirm the set ([`withheld`]).
pub(crate) fn recommended(st: &TuneState) -> Vec<Recommendation<'_>> {
    if withheld(st).is_some() {
        return Vec::new();
    }
    st.decisions
        .iter()
        .filter(|d| d.value != d.start && d.why != Why::NotShown)
        .map(|d| Recommendation {
            decision: d,
            apply: st
                .plan
                .iter()
                .find(|p| p.name == d.setting)
                .map(|p| p.apply)
                .unwrap_or(Apply::Reload),
        })
        .collect()
}

pub(super) fn needs(apply: Apply) -> &'static str {
    match apply {
        Apply::Session | Apply::Reload | Apply::Standby => {
            "takes effect after a reload: SELECT pg_reload_conf(); (new sessions)"
        }
        Apply::Restart => "takes effect after a restart of the server",
    }
}

/// The script's text.
pub fn script(st: &TuneState, on: &MeasuredOn) -> String {
    let obj = Objective::of(&st.spec);
    let mut out = String::new();
    push_header(&mut out, st, &obj, on);
    push_confirmation(&mut out, st, &obj);
    push_line(&mut out, &format!("-- {}", memory_line(st).0));
    if let Some(s) = super::sampled::sentence(st) {
        push_line(&mut out, &format!("-- {s}"));
    }
    for l in super::screen_report::sql_lines(st) {
        push_line(&mut out, &l);
    }
    for n in &st.notes {
        push_line(&mut out, &format!("-- note: {n}"));
    }
    push_line(&mut out, "");
    if let Some(lines) = super::formula::recommendation_lines(st) {
        for l in lines {
            push_line(&mut out, &l);
        }
        push_also_searched(&mut out, st, &[]);
        return out;
    }
    let recs = recommended(st);
    if recs.is_empty() {
        push_no_change(&mut out, st);
    }
    for r in &recs {
        push_recommendation(&mut out, &obj, r);
    }
    push_also_searched(&mut out, st, &recs);
    out
}

/// What the script is, where it was measured, and what the tune spent on it.
fn push_header(out: &mut String, st: &TuneState, obj: &Objective, on: &MeasuredOn) {
    let mut line = |s: &str| push_line(out, s);
    line("-- pglab tune: settings measured on a workload, each with its evidence.");
    line("-- Review before applying; pglab never applies this outside its own sandbox.");
    line(&format!(
        "-- measured on {}, {}, data: {}, workload: {}",
        on.host, on.server, on.data, on.workload
    ));
    line(&format!(
        "-- objective: {} ({} is better); {} passes of the workload in {} runs, {} of a {} budget",
        obj.what,
        match obj.better {
            crate::measure::verdict::Better::Higher => "higher",
            crate::measure::verdict::Better::Lower => "lower",
        },
        st.trials,
        st.runs.len(),
        crate::measure::units::format_seconds(st.spent_s),
        crate::measure::units::format_seconds(st.budget_s)
    ));
}

/// The confirmation's sides against the starting configuration, its verdict, and the
/// statements and pgtune sentences; or that it did not run.
fn push_confirmation(out: &mut String, st: &TuneState, obj: &Objective) {
    let mut line = |s: &str| push_line(out, s);
    let Some(c) = st.confirmation() else {
        line("-- confirmation: not run (no setting changed)");
        return;
    };
    line(&format!(
        "-- confirmation: {} against the starting configuration, {} rounds interleaved",
        match (c.tuned.is_empty(), c.formula.is_empty()) {
            (false, false) => "the tuned set and pgtune's set",
            (false, true) => "the tuned set",
            _ => "pgtune's set",
        },
        c.rounds
    ));
    let est = |t: &[f64]| crate::measure::interval::estimate(t, 0.95);
    if let Some(e) = est(&c.start_trials) {
        line(&format!(
            "--   starting configuration: {}",
            estimate_text(obj, &e)
        ));
    }
    if let Some(e) = est(&c.tuned_trials) {
        line(&format!(
            "--   tuned set:              {}",
            estimate_text(obj, &e)
        ));
    }
    if !c.tuned.is_empty() {
        match &c.comparison {
            Some(cmp) => line(&format!("--   verdict: tuned set {}", comparison_text(cmp))),
            None => line("--   verdict: none (no round of the confirmation finished)"),
        }
    }
    if let Some(e) = est(&c.formula_trials) {
        line(&format!(
            "--   pgtune's set:           {}",
            estimate_text(obj, &e)
        ));
    }
    if let Some(s) = super::statements::sentence(&c.statements, Side::Tuned) {
        line(&format!("--   tuned set, {s}"));
    }
    if let Some(f) = super::formula::sentence(st) {
        line(&format!("--   {f}"));
    }
    if let Some(s) = super::statements::sentence(&c.statements, Side::Formula) {
        line(&format!("--   pgtune's set, {s}"));
    }
}

/// Nothing recommended, and why ([`withheld`], or no setting shown).
fn push_no_change(out: &mut String, st: &TuneState) {
    push_line(out, "-- no change recommended:");
    let why = withheld(st).unwrap_or_else(|| {
        "no setting was shown better, or equivalent and cheaper, than its current value".into()
    });
    push_line(out, &format!("--   {why}."));
}

/// One recommended setting: its evidence, what it needs to take effect, what durability it
/// gives up, then its `ALTER SYSTEM SET` line.
fn push_recommendation(out: &mut String, obj: &Objective, r: &Recommendation<'_>) {
    let mut line = |s: &str| push_line(out, s);
    let d = r.decision;
    line(&format!(
        "-- {}: {} -> {} ({})",
        d.setting,
        d.start,
        d.value,
        d.why.as_str()
    ));
    if let Some(c) = &d.comparison {
        line(&format!(
            "--   before ({}): {}",
            d.start,
            estimate_text(obj, &c.b)
        ));
        line(&format!(
            "--   after  ({}): {}",
            d.value,
            estimate_text(obj, &c.a)
        ));
        line(&format!(
            "--   verdict: {}; {}, family-wise and sequentially corrected",
            comparison_text(c),
            super::pair::evidence(d)
        ));
    }
    line(&format!("--   {}", needs(r.apply)));
    if let Some(loss) = durability_loss(&d.setting) {
        line(&format!("--   durability: {loss}"));
    }
    line(&crate::sql::settings::alter_system_line(
        &d.setting, &d.value,
    ));
}

/// The settings searched but not recommended, each with why it stays.
fn push_also_searched(out: &mut String, st: &TuneState, recs: &[Recommendation<'_>]) {
    let held = if super::formula::preferred(st).is_some() {
        "pgtune's set recommended instead, see above"
    } else {
        "held back with the set, see above"
    };
    let searched: Vec<String> = st
        .decisions
        .iter()
        .filter(|d| !recs.iter().any(|r| r.decision.setting == d.setting))
        .map(|d| {
            if d.rounds == 0 {
                format!("{} ({})", d.setting, super::screen_report::not_raced(st, d))
            } else if d.value != d.start && d.why != Why::NotShown {
                format!(
                    "{} (its race: {} -> {}, {}; {held})",
                    d.setting,
                    d.start,
                    d.value,
                    d.why.as_str()
                )
            } else {
                format!("{} (stays {}: {})", d.setting, d.start, d.why.as_str())
            }
        })
        .collect();
    if !searched.is_empty() {
        push_line(out, "");
        push_line(
            out,
            &format!("-- also searched, no change: {}", searched.join("; ")),
        );
    }
}

/// Add `s` as a line of the script. A comment stays a comment: text with line breaks in it (a
/// workload's SQL among its parameters, a note) goes on over lines of their own that start
/// with `--`, so that pasting the script into psql runs only its ALTER SYSTEM lines.
fn push_line(out: &mut String, s: &str) {
    let comment = s.starts_with("--");
    for (i, part) in s.split('\n').enumerate() {
        if i > 0 && comment {
            out.push_str("--   ");
            out.push_str(part.trim_start());
        } else {
            out.push_str(part);
        }
        out.push('\n');
    }
}

/// The `(name, value)` pairs of a script's `ALTER SYSTEM SET` lines (what a test or a DBA
/// checks the script by).
pub fn parse_script(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("ALTER SYSTEM SET "))
        .filter_map(|rest| {
            let (name, value) = rest.split_once(" = ")?;
            let value = value.trim_end_matches(';').trim();
            let value = value
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .unwrap_or(value)
                .replace("''", "'");
            Some((name.trim_matches('"').to_string(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(why: Why, value: &str) -> Decision {
        Decision {
            setting: "max_wal_size".into(),
            start: "1GB".into(),
            value: value.into(),
            why,
            comparison: None,
            confidence: 0.99,
            rounds: 6,
            trials: 18,
        }
    }

    /// A confirmation of the tuned (A) against the start (B), lower is better.
    fn confirmed(tuned: &[f64], start: &[f64]) -> Confirm {
        let mut c = Confirm::new(vec![("max_wal_size".into(), "4GB".into())], Vec::new());
        for (t, s) in tuned.iter().zip(start) {
            c.add_round(*s, *t);
        }
        c.judge(
            crate::measure::verdict::Better::Lower,
            &crate::measure::rules::Rules::default(),
        );
        c
    }

    /// The script recommends the tuned set only when the confirmation confirms it; every other
    /// outcome holds it back with its own reason.
    #[test]
    fn only_a_confirmed_set_is_recommended() {
        let better = [decision(Why::Better, "4GB")];
        let cheaper = [decision(Why::EquivalentCheaper, "512MB")];
        let start = [10.0, 10.1, 9.9, 10.05, 9.95, 10.02];
        let faster = confirmed(&[8.0, 8.1, 7.9, 8.05, 7.95, 8.02], &start);
        let same = confirmed(&[10.0, 10.1, 9.9, 10.05, 9.95, 10.02], &start);
        let slower = confirmed(&[12.0, 12.1, 11.9, 12.05, 11.95, 12.02], &start);
        let open = confirmed(&[9.0, 11.5, 8.0], &start[..3]);
        assert_eq!(withheld_by(&better, Some(&faster)), None);
        assert_eq!(
            withheld_by(&cheaper, Some(&same)),
            None,
            "cheaper at no shown cost"
        );
        let why = |d: &[Decision], c: Option<&Confirm>| withheld_by(d, c).unwrap_or_default();
        assert!(why(&better, Some(&same)).contains("not better as its races promised"));
        assert!(why(&better, Some(&slower)).contains("worse"));
        assert!(why(&cheaper, Some(&slower)).contains("worse"));
        assert!(why(&better, Some(&open)).contains("could not tell"));
        assert!(why(&better, None).contains("did not run"));
        let unjudged = Confirm::new(Vec::new(), Vec::new());
        assert!(why(&better, Some(&unjudged)).contains("no round"));
        // Nothing changed: nothing to hold back (the script says no setting was shown).
        assert_eq!(withheld_by(&[decision(Why::NotShown, "1GB")], None), None);
    }

    /// A workload's SQL in a comment must not leave the comment: every line is a comment.
    #[test]
    fn a_comment_with_line_breaks_stays_a_comment() {
        let mut out = String::new();
        push_line(
            &mut out,
            "-- workload: q (setup=CREATE TABLE t AS\n  SELECT 1;sql=SELECT 2\nFROM t)",
        );
        push_line(&mut out, "ALTER SYSTEM SET work_mem = '64MB';");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "-- workload: q (setup=CREATE TABLE t AS",
                "--   SELECT 1;sql=SELECT 2",
                "--   FROM t)",
                "ALTER SYSTEM SET work_mem = '64MB';"
            ]
        );
    }

    #[test]
    fn alter_lines_parse_back() {
        let text = "-- x\nALTER SYSTEM SET max_wal_size = '4GB';\n-- y\nALTER SYSTEM SET \"work_mem\" = 'it''s';\n";
        assert_eq!(
            parse_script(text),
            vec![
                ("max_wal_size".to_string(), "4GB".to_string()),
                ("work_mem".to_string(), "it's".to_string())
            ]
        );
    }
}
