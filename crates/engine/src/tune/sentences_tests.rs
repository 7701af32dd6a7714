//! A tune report must not say two things (issue 52 item 3): checked on generated tune states,
//! varied over what the tune ended with — a screening whose moved settings were raced or not
//! reached, a pgtune set decided or undecided with a statement shown slower or not — each
//! report's sentences read back against the state's own facts.

use super::confirm::{Confirm, Side};
use super::decide::{Decision, Why};
use super::output::ratio_text;
use super::phase::TunePhase;
use super::screen::{Effect, Screen};
use super::state::{STATE_VERSION, TuneState};
use crate::experiment::ExperimentSpec;
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

pub(super) fn state(statements: &str) -> TuneState {
    let spec = ExperimentSpec::Query(Box::new(crate::experiment::query::test_spec(&[(
        "sql", statements,
    )])));
    TuneState {
        version: STATE_VERSION,
        id: "tune-test".into(),
        workload: "w.sql".into(),
        spec,
        target: "sandbox".into(),
        on_sandbox: true,
        budget_s: 480.0,
        spent_s: 480.0,
        hardware: super::candidates::Hardware {
            ram: 8 << 30,
            cores: 2,
            ssd: true,
            max_connections: 100,
        },
        pgtune: Vec::new(),
        formula: Vec::new(),
        memory: Default::default(),
        plan_nodes: None,
        max_memory: None,
        plan: Vec::new(),
        decisions: Vec::new(),
        phase: TunePhase::Done(None),
        screen: None,
        pace: Default::default(),
        plans: None,
        named: false,
        cache: Default::default(),
        path: Vec::new(),
        trials: 0,
        experiment_trials: 0,
        sampled: Vec::new(),
        runs: Vec::new(),
        notes: Vec::new(),
        measured_on: super::output::MeasuredOn {
            host: "this host".into(),
            server: "PostgreSQL 15, pglab's sandbox".into(),
            data: "tables t".into(),
            workload: "w.sql".into(),
        },
    }
}

fn effect(setting: &str, ratio: f64, moved: bool) -> Effect {
    Effect {
        setting: setting.into(),
        low: "4MB".into(),
        high: "32MB".into(),
        ratio,
        ratio_low: ratio * 0.98,
        ratio_high: ratio * 1.02,
        level: 0.9,
        rounds: 3,
        moved,
    }
}

fn decision(setting: &str, rounds: usize) -> Decision {
    Decision {
        setting: setting.into(),
        start: "4MB".into(),
        value: "4MB".into(),
        why: Why::NotShown,
        comparison: None,
        confidence: 0.95,
        rounds,
        trials: rounds * 2,
    }
}

/// The screening table's word for `setting` in the report, and its Decisions line.
fn table_and_decision(md: &str, setting: &str) -> (String, String) {
    let row = md
        .lines()
        .find(|l| l.starts_with("| ") && l.contains(&format!("| {setting} |")))
        .unwrap_or_else(|| panic!("{setting}'s row\n{md}"))
        .to_string();
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("- {setting}: ")))
        .unwrap_or_else(|| panic!("{setting}'s decision\n{md}"))
        .to_string();
    (row, line)
}

/// Every combination of moved or not and raced or not: a setting the table calls `raced` has
/// a race in Decisions; one whose race did not run is "not raced (budget)" in both, never
/// `raced` beside "not searched".
#[test]
fn the_screening_table_and_the_decisions_say_the_same_of_each_setting() {
    for (moved, rounds) in [(true, 6), (true, 0), (false, 0)] {
        let mut st = state("SELECT 1");
        st.screen = Some(Screen {
            groups: Vec::new(),
            done: true,
            effects: vec![effect("work_mem", if moved { 1.27 } else { 1.0 }, moved)],
            interactions: Vec::new(),
        });
        st.decisions.push(decision("work_mem", rounds));
        let md = crate::report::tune::markdown(&st, None);
        let (row, line) = table_and_decision(&md, "work_mem");
        let raced = row.contains("| raced |");
        assert_eq!(raced, moved && rounds > 0, "{row}");
        if raced {
            assert!(line.contains("6 rounds"), "{line}");
        }
        if moved && rounds == 0 {
            assert!(row.contains("| moved; not raced (budget) |"), "{row}");
            assert!(
                line.contains("moved; not raced (budget) (×1.27 [×1.24, ×1.30])"),
                "{line}"
            );
        }
        assert!(!line.contains("not searched"), "{line}");
        if !moved {
            assert!(row.contains("screened: no effect seen") && line.contains("no effect"));
        }
        let sql = super::output::script(&st, &st.measured_on);
        assert_eq!(sql.contains(", raced"), raced, "{sql}");
    }
}

/// A confirmation of `rounds` rounds: the pass's times per side (start, pgtune's) with the
/// given spread, and statement `report` slower under pgtune's set by `harm`, `lookup` alike.
fn confirmed(rounds: usize, pass: f64, spread: f64, harm: f64) -> Confirm {
    let mut c = Confirm::new(Vec::new(), vec![("shared_buffers".into(), "2GB".into())]);
    for r in 0..rounds {
        let w = 1.0 + spread * if r % 2 == 0 { 1.0 } else { -1.0 } * (1 + r % 3) as f64;
        let small = 1.0 + 0.01 * (r % 3) as f64;
        c.add_measures(&[(Side::Start, 10.0), (Side::Formula, 10.0 * pass * w)]);
        super::statements::add_round(
            &mut c.statements,
            &[
                (
                    Side::Start,
                    vec![("report".into(), 2.0), ("lookup".into(), 0.1)],
                ),
                (
                    Side::Formula,
                    vec![
                        ("report".into(), 2.0 * harm * small),
                        ("lookup".into(), 0.1 * small),
                    ],
                ),
            ],
        );
    }
    c.judge(Better::Lower, &Rules::default());
    c
}

/// pgtune's verdict carries the harm its statements show: undecided overall with a statement
/// shown slower reads "not shown faster overall … statement report ×1.36 slower [..]"; with
/// no statement slowed, the verdict stands alone; a decided pass keeps its word and still names
/// the statement.
#[test]
fn pgtunes_verdict_carries_a_statement_shown_slower() {
    let cases = [
        // (pass ratio, spread, statement harm): undecided pass, harmed statement
        (
            1.07,
            0.12,
            1.36,
            "pgtune's set: not shown faster overall (too few trials",
        ),
        // undecided, no statement harmed
        (1.0, 0.12, 1.0, "pgtune's set too few trials"),
        // decided slower, harmed
        (1.4, 0.005, 1.36, "pgtune's set worse"),
        // decided faster overall, yet one statement slower
        (0.7, 0.005, 1.36, "pgtune's set better"),
    ];
    for (pass, spread, harm, head) in cases {
        let mut st = state("SELECT 1; SELECT 2");
        st.formula = vec![("shared_buffers".into(), "2GB".into())];
        st.phase = TunePhase::Done(Some(Box::new(confirmed(5, pass, spread, harm))));
        let s = super::formula::sentence(&st).unwrap();
        assert!(s.starts_with(head), "{head:?}: {s}");
        let report = st.confirmation().unwrap().statements[0]
            .formula_vs_start
            .clone()
            .unwrap();
        let slowed = report.verdict == crate::measure::verdict::Verdict::Slower;
        assert_eq!(slowed, harm > 1.0, "{s}");
        // The statement's own comparison, in the verdict's sentence with its interval.
        let named = format!(
            "statement report {} slower [{}, {}]",
            ratio_text(report.ratio),
            ratio_text(report.ratio_low),
            ratio_text(report.ratio_high)
        );
        assert_eq!(
            s.contains(&named),
            slowed,
            "the harm is in the verdict's sentence: {s}"
        );
        if pass < 1.0 && slowed {
            assert!(s.contains("; yet statement report"), "{s}");
        }
        // The script carries the same sentence.
        let sql = super::output::script(&st, &st.measured_on);
        assert!(sql.contains(&s), "{sql}");
    }
}

/// The objective and the Pace each say what their number is: a timed query's median is one
/// execution of each statement (× its weight), the Pace the trials' wall clock.
#[test]
fn the_objective_and_the_pace_say_which_number_they_are() {
    let mut st = state("SELECT 1; SELECT 2");
    if let ExperimentSpec::Query(q) = &mut st.spec {
        q.statements[1].weight = Some(180);
    }
    st.pace.record(2.0, 1, 0.198);
    st.pace.record(2.0, 1, 0.198);
    let md = crate::report::tune::markdown(&st, None);
    let objective = md.lines().find(|l| l.starts_with("Objective: ")).unwrap();
    assert!(
        objective.contains("× its weight")
            && objective.contains("not the wall clock the Pace counts"),
        "{objective}"
    );
    let pace = md.lines().find(|l| l.contains("Pace: ")).unwrap();
    assert!(
        pace.contains("198 ms of timed work per pass (wall clock of its trials"),
        "{pace}"
    );
}

/// An interval that leaves the direction open and spans more than the core's "too wide"
/// factor is said to be too wide to say, with its ends, never quoted as a ratio: two rounds
/// of a noisy pass gave "×1.17 (interval ×0.00 … ×48854462.89)" before.
#[test]
fn an_interval_too_wide_to_say_anything_is_not_quoted_as_a_ratio() {
    let mut st = state("SELECT 1; SELECT 2");
    st.formula = vec![("shared_buffers".into(), "2GB".into())];
    st.phase = TunePhase::Done(Some(Box::new(confirmed(2, 1.17, 0.3, 1.0))));
    let s = super::formula::sentence(&st).unwrap();
    assert!(s.contains("too wide to say (interval "), "{s}");
    assert!(!s.contains("×1.17 (interval"), "{s}");
    // A narrow one keeps its ratio.
    st.phase = TunePhase::Done(Some(Box::new(confirmed(5, 1.4, 0.005, 1.0))));
    let s = super::formula::sentence(&st).unwrap();
    assert!(!s.contains("too wide"), "{s}");
}
