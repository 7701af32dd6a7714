//! pgtune's set measured, in words: what the confirmation showed of the formula's whole set
//! against the starting configuration, and what each of its values did in its own race. A
//! tune that recommends nothing still says this, because "pgtune's set is ×1.51 slower here"
//! is the finding that stops a formula's output going into production unmeasured.

use super::confirm::Confirm;
use super::output::{comparison_text, ratio_text};
use super::state::TuneState;
use crate::experiment::lab::whatif::Apply;
use crate::measure::verdict::Verdict;

/// The formula's verdict, or why there is none (None: the formula was not measured). The
/// verdict carries any harm shown: a statement shown slower under pgtune's set is named in
/// the verdict itself, so "too few trials" overall never reads as "no harm seen".
pub(crate) fn sentence(st: &TuneState) -> Option<String> {
    let c = st.confirmation()?;
    if c.formula.is_empty() {
        return None;
    }
    let set: Vec<String> = c.formula.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let rounds = c.formula_trials.len();
    let races = race_evidence(st, c);
    let staged = c
        .formula_stage_text()
        .map(|t| format!("; {t}"))
        .unwrap_or_default();
    Some(format!(
        "{} against the starting configuration, {rounds} round{} interleaved ({}){}{staged}{}",
        verdict(c),
        if rounds == 1 { "" } else { "s" },
        set.join(", "),
        harm(c),
        if races.is_empty() {
            String::new()
        } else {
            format!("; in their races: {}", races.join(", "))
        }
    ))
}

/// pgtune's whole set against the start: "pgtune's set worse: ×1.38 (…)"; when the pass is
/// undecided but a statement was shown slower, "pgtune's set: not shown faster overall
/// (too few trials: ×1.07 …)", the statement named after it ([`harm`]).
fn verdict(c: &Confirm) -> String {
    let Some(cmp) = &c.formula_comparison else {
        return "pgtune's set: no verdict (no round of it finished)".into();
    };
    let decided = matches!(cmp.verdict, Verdict::Faster | Verdict::Slower);
    if decided || statements_slowed(c).is_empty() {
        format!("pgtune's set {}", comparison_text(cmp))
    } else {
        format!(
            "pgtune's set: not shown faster overall ({})",
            comparison_text(cmp)
        )
    }
}

/// The harm the verdict carries: "; statement q7 ×1.36 slower [×1.27, ×1.46]" ("; yet …"
/// after a set shown faster overall). Empty when no statement was shown slower.
fn harm(c: &Confirm) -> String {
    let slowed = statements_slowed(c);
    if slowed.is_empty() {
        return String::new();
    }
    let faster = c
        .formula_comparison
        .as_ref()
        .is_some_and(|x| x.verdict == Verdict::Faster);
    format!(
        "; {}{}",
        if faster { "yet " } else { "" },
        slowed.join("; ")
    )
}

/// The statements the formula's whole set was shown to make slower, each with its interval:
/// "statement q7 ×1.36 slower [×1.27, ×1.46]". Empty when none.
fn statements_slowed(c: &Confirm) -> Vec<String> {
    c.statements
        .iter()
        .filter_map(|s| {
            let x = s.formula_vs_start.as_ref()?;
            (x.verdict == Verdict::Slower).then(|| {
                format!(
                    "statement {} {} slower [{}, {}]",
                    s.name,
                    ratio_text(x.ratio),
                    ratio_text(x.ratio_low),
                    ratio_text(x.ratio_high)
                )
            })
        })
        .collect()
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

/// When the confirmation showed pgtune's whole set better than the starting configuration and
/// better than the tuned set (or there was no tuned set): the set to recommend instead, with
/// the sentence that says why. The tune's own races may have missed what the formula's set
/// holds (a gain within a race's noise, several settings that only gain together); a set
/// measured better on this workload is evidence, and a tune must not leave a DBA with a set
/// the formula beats. Refused like any set when `--max-memory` refuses its worst case.
pub(crate) fn preferred(st: &TuneState) -> Option<(Vec<(String, String)>, String)> {
    let c = st.confirmation()?;
    let why = preference(c)?;
    let (_, refused) = super::memory::verdict(
        &st.memory,
        &c.formula,
        st.plan_nodes,
        st.hardware.ram,
        st.max_memory,
    );
    (!refused).then(|| (c.formula.clone(), why))
}

/// Why the confirmation prefers pgtune's set, when it does: shown better than the start, and
/// than the tuned set when there is one.
fn preference(c: &Confirm) -> Option<String> {
    let vs_start = c.formula_comparison.as_ref()?;
    if c.formula.is_empty() || vs_start.verdict != Verdict::Faster {
        return None;
    }
    let against_tuned = match (&c.formula_vs_tuned, c.tuned.is_empty()) {
        (_, true) => String::new(),
        (Some(t), false) if t.verdict == Verdict::Faster => {
            format!(", and {} against the tuned set", comparison_text(t))
        }
        _ => return None,
    };
    Some(format!(
        "pgtune's set measured {} against the starting configuration{against_tuned}: recommended as a whole, as measured (which of its values gains was not isolated)",
        comparison_text(vs_start)
    ))
}

/// Whether a setting of the formula's set takes a restart (it is not in the tune's plan, so
/// its apply kind is known from its name).
pub(crate) fn needs_restart(name: &str) -> bool {
    matches!(name, "shared_buffers" | "wal_buffers" | "max_connections")
}

/// The script's lines for [`preferred`]: the reason, the memory line of that set, what it
/// needs to take effect, then its `ALTER SYSTEM SET` lines.
pub(crate) fn recommendation_lines(st: &TuneState) -> Option<Vec<String>> {
    let (set, why) = preferred(st)?;
    let (memory, _) = super::memory::verdict(
        &st.memory,
        &set,
        st.plan_nodes,
        st.hardware.ram,
        st.max_memory,
    );
    let apply = if set.iter().any(|(n, _)| needs_restart(n)) {
        Apply::Restart
    } else {
        Apply::Reload
    };
    let mut out = vec![
        format!("-- {why}"),
        format!("--   {memory}"),
        format!("--   {}", super::output::needs(apply)),
    ];
    out.extend(
        set.iter()
            .map(|(n, v)| crate::sql::settings::alter_system_line(n, v)),
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rules::Rules;
    use crate::measure::verdict::Better;

    /// Seconds per pass: start, tuned, formula, six rounds with a little noise.
    fn confirmed(start: f64, tuned: Option<f64>, formula: f64) -> Confirm {
        let set = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        let mut c = Confirm::new(
            tuned.map_or_else(Vec::new, |_| set("random_page_cost", "2")),
            set("shared_buffers", "6GB"),
        );
        for n in [1.0, 0.99, 1.01, 0.995, 1.005, 1.0] {
            let m: Vec<(Side, f64)> = c
                .order()
                .into_iter()
                .map(|s| match s {
                    Side::Start => (s, start * n),
                    Side::Tuned => (s, tuned.unwrap_or(start) * n),
                    Side::Formula => (s, formula * n),
                })
                .collect();
            c.add_measures(&m);
        }
        c.judge(Better::Lower, &Rules::default());
        c
    }

    use super::super::confirm::Side;

    /// pgtune's set is preferred only when shown better than the start and than the tuned
    /// set: 64 ms against a tuned 123 ms and a start of 169 ms, yes; as fast as the tuned set,
    /// or slower than the start, no; with no tuned set, better than the start is enough.
    #[test]
    fn the_formula_is_preferred_only_when_it_beats_the_start_and_the_tuned_set() {
        let why = preference(&confirmed(0.169, Some(0.123), 0.064)).expect("preferred");
        assert!(why.contains("against the tuned set"), "{why}");
        assert!(why.starts_with("pgtune's set measured better"), "{why}");
        assert_eq!(preference(&confirmed(0.169, Some(0.064), 0.064)), None);
        assert_eq!(preference(&confirmed(0.169, Some(0.123), 0.25)), None);
        let alone = preference(&confirmed(0.169, None, 0.064)).expect("no tuned set");
        assert!(!alone.contains("tuned set"), "{alone}");
    }
}
