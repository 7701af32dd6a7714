//! The standby charts of a growth run from hand-made version writes: COMMIT latency per
//! synchronous_commit level (a label per level), rows written per second of the write phases
//! laid end to end (a shade per stalled second, the fault's window moved onto those seconds),
//! both among the report's charts, and neither for a run without a level, distance or fault.

use std::collections::BTreeMap;

use crate::experiment::ReportBody;
use crate::experiment::growth::{
    Design, GrowthFault, GrowthReport, GrowthSpec, StepCommits, WriteTiming,
};
use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};
use crate::experiment::lab::standby_fault::FaultWindow;

use super::chart_commit::{self, LEVEL_AXIS};
use super::chart_load_growth::{GROWTH_COMMIT_AXIS, WRITTEN_AXIS, of_growth};
use super::chart_over_time;
use super::chart_standby_tests::{count, said, stall_rects};

fn spec(fields: &[(&str, &str)]) -> GrowthSpec {
    let mut p = ExperimentKind::Growth.defaults();
    for (k, v) in fields {
        p.insert(k.to_string(), v.to_string());
    }
    match ExperimentKind::Growth.parse_spec(&p) {
        Ok(ExperimentSpec::Growth(s)) => s,
        other => panic!("{other:?}"),
    }
}

/// (at_s, seconds, commit_seconds, rows) of round 1.
fn w((at_s, seconds, commit_seconds, rows): (f64, f64, f64, u64)) -> WriteTiming {
    WriteTiming {
        design: Design::Snapshot,
        round: 1,
        at_s,
        seconds,
        commit_seconds,
        rows,
    }
}

fn window(from_s: Option<f64>, to_s: Option<f64>) -> FaultWindow {
    FaultWindow {
        fault: "stop-at=0s,for=2s".into(),
        standby: "pglab_standby_1".into(),
        from_s,
        to_s,
        ..Default::default()
    }
}

/// The writes of combination `combo` (0 local, 1 on) at step `versions`, with a fault window.
fn step(
    (versions, combo): (u64, usize),
    writes: &[(f64, f64, f64, u64)],
    fault: Option<FaultWindow>,
) -> StepCommits {
    let writes: Vec<WriteTiming> = writes.iter().copied().map(w).collect();
    let fault = fault.map(|f| GrowthFault::of(f, 1, &writes));
    let settings = BTreeMap::from([
        (
            "synchronous_commit".to_string(),
            ["local", "on"][combo].to_string(),
        ),
        (
            "synchronous_standby_names".to_string(),
            "pglab_standby_1".to_string(),
        ),
    ]);
    StepCommits::of((versions, combo), settings, writes, vec![], fault).unwrap()
}

/// Two steps of local (quick COMMITs) and on (2.5 s COMMITs while the standby is gone).
fn report(fields: &[(&str, &str)]) -> GrowthReport {
    let mut b = GrowthReport::new(&spec(fields));
    b.commits = vec![
        // local: 2.2 s of writes, the fault from 0.0 to 2.3 s of the round's clock.
        step(
            (0, 0),
            &[(0.0, 1.2, 0.003, 1000), (1.2, 1.0, 0.002, 1000)],
            Some(window(Some(0.0), Some(2.3))),
        ),
        // on: 0.5 s of rows, a 2.5 s COMMIT, 0.9 s of rows, a 0.1 s COMMIT; the fault never
        // began at this step.
        step(
            (0, 1),
            &[(0.0, 3.0, 2.5, 100), (3.0, 1.0, 0.1, 100)],
            Some(window(None, None)),
        ),
        step((10, 0), &[(0.0, 1.1, 0.004, 1000)], None),
        // on, after 4 s of writes: BEGIN at 0.5 s of the round, 0.5 s of rows, a 2.5 s COMMIT;
        // the fault from 1.0 to 3.0 s of the round's clock, 4.5 to 6.5 s of the writes'.
        step(
            (10, 1),
            &[(0.5, 3.0, 2.5, 100)],
            Some(window(Some(1.0), Some(3.0))),
        ),
    ];
    b.summarize(&[], false);
    b
}

fn swept() -> GrowthReport {
    report(&[
        ("sync-commit", "local,on"),
        ("standby-fault", "stop-at=0s,for=2s"),
    ])
}

#[test]
fn commit_latency_has_a_label_per_level() {
    let b = swept();
    let load = of_growth(&b);
    assert_eq!(load.trials.len(), 2);
    // The standby names every combination had tell them apart no more: one group.
    assert!(load.trials.iter().all(|t| t.config.is_empty()));
    assert_eq!(
        (load.trials[0].name.as_str(), load.trials[1].name.as_str()),
        ("sync local", "sync on")
    );
    // Over every step: on's three COMMITs, 2.5 s its median.
    assert!((load.trials[1].latency.p50 - 2500.0).abs() < 1e-6);
    let svg = chart_commit::svg(&load).expect("a chart");
    assert_eq!(count(&svg, "local"), 1, "{}", said(&svg));
    assert_eq!(count(&svg, "on"), 1, "{}", said(&svg));
    assert_eq!(count(&svg, "remote_apply"), 0);
    assert!(svg.contains(LEVEL_AXIS));
    // The SVG says the apostrophe as an entity.
    let axis = GROWTH_COMMIT_AXIS.replace('\'', "&apos;");
    assert!(svg.contains(&axis), "{}", said(&svg));
    assert!(
        said(&svg).contains("(a version write&apos;s COMMIT, every step)"),
        "{}",
        said(&svg)
    );
}

#[test]
fn over_time_marks_the_stalls_and_the_fault_on_the_writes_clock() {
    let b = swept();
    let load = of_growth(&b);
    let on = &load.trials[1];
    // Laid end to end: 100 rows in the first half second, then 2.5 s inside a COMMIT, ...
    let want = [100.0, 0.0, 0.0, 100.0, 100.0, 0.0, 0.0];
    assert_eq!(on.series.len(), want.len(), "{:?}", on.series);
    for (got, want) in on.series.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{:?}", on.series);
    }
    assert_eq!(on.stall_seconds, 4);
    // ... the table's stall seconds for the combination over every step.
    assert_eq!(b.summary.commits[1].stall_seconds, 4);
    let f = on.fault.as_deref().expect("the second step's fault");
    assert_eq!((f.from_s, f.to_s), (Some(4.5), Some(6.5)));
    let f = load.trials[0].fault.as_deref().expect("local's fault");
    assert_eq!((f.from_s, f.to_s), (Some(0.0), Some(2.2)));
    let svg = chart_over_time::svg(&load).expect("a chart");
    assert_eq!(stall_rects(&svg), 4, "on's four stalled seconds");
    let said = said(&svg);
    assert!(svg.contains(WRITTEN_AXIS));
    assert!(said.contains("growth: rows/s in each second"), "{said}");
    assert!(said.contains("no row was written (4 in all)"), "{said}");
    assert!(
        said.contains("standby fault stop-at=0s,for=2s on pglab_standby_1, from the fault (0.0–4.5 s) until the standby was back (2.2–6.5 s)"),
        "{said}"
    );
    // Among the report's charts, named as ingest's are.
    let r = super::example::with_body(ReportBody::Growth(Box::new(b)));
    let suffixes: Vec<String> = super::charts::charts(&r)
        .into_iter()
        .map(|c| c.suffix)
        .collect();
    assert!(
        suffixes.contains(&"-commit-latency".to_string()),
        "{suffixes:?}"
    );
    assert!(suffixes.contains(&"-over-time".to_string()), "{suffixes:?}");
}

#[test]
fn no_load_chart_for_a_run_without_a_level_distance_or_fault() {
    // The same writes, the run sweeping an ordinary setting.
    let b = report(&[("set", "work_mem=4MB,64MB")]);
    assert!(!b.commits.is_empty());
    let load = of_growth(&b);
    assert!(load.trials.is_empty());
    assert!(load.charts().is_empty());
    let r = super::example::with_body(ReportBody::Growth(Box::new(b)));
    assert!(
        super::charts::charts(&r)
            .iter()
            .all(|c| c.suffix != "-commit-latency" && c.suffix != "-over-time")
    );
}
