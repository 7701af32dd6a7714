//! growth against the real sandbox, at toy sizes: exact row counts, both designs holding the
//! same content, sizes that grow, steps beyond the disk projected instead of run, repeats
//! giving per-step estimates and design verdicts (`repeat auto` within its cap), and a
//! cancel mid-growth that leaves nothing behind.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use pglab::experiment::growth::{Design, GrowthReport, GrowthSpec};
use pglab::experiment::{
    ExperimentKind, ExperimentSpec, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};
use pglab::server::Target;

fn spec(pairs: &[(&str, &str)]) -> GrowthSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match ExperimentKind::Growth.parse_spec(&p) {
        Ok(ExperimentSpec::Growth(s)) => s,
        other => panic!("{other:?}"),
    }
}

fn opts(schema: &str) -> RunOptions {
    RunOptions {
        schema: schema.into(),
        local_data_dir: Some(common::lab().sandbox.root.clone()),
        ..RunOptions::default()
    }
}

/// Run to the end; every event, the final report last.
async fn run(
    target: Arc<Target>,
    spec: GrowthSpec,
    opts: RunOptions,
    cancel_when: Option<&dyn Fn(&RunEvent) -> bool>,
) -> (Vec<RunEvent>, RunReport) {
    let mut h = pglab::experiment::spawn(target, ExperimentSpec::Growth(spec), opts);
    let mut events = Vec::new();
    let report = loop {
        let ev = tokio::time::timeout(Duration::from_secs(300), h.events.recv())
            .await
            .expect("the run made progress within 5 minutes")
            .expect("a final event");
        if let Some(when) = cancel_when
            && when(&ev)
        {
            h.cancel.cancel();
        }
        match ev {
            RunEvent::Finished(r) | RunEvent::Cancelled(r) => break *r,
            RunEvent::Failed { error, report } => panic!("run failed: {error}\n{report:#?}"),
            other => events.push(other),
        }
    };
    (events, report)
}

fn body(r: &RunReport) -> &GrowthReport {
    match &r.body {
        ReportBody::Growth(g) => g,
        _ => panic!("not a growth report"),
    }
}

async fn lab_tables(target: &Target, schema: &str) -> Vec<String> {
    let c = target.connect().await.unwrap();
    c.query(
        "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind = 'r'",
        &[&schema],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

fn validate(report: &RunReport) {
    let schema: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/schema/growth.schema.json"
    )))
    .unwrap();
    let instance = serde_json::to_value(report).unwrap();
    let v = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = v
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // And it reads back.
    let back: RunReport = serde_json::from_value(instance).unwrap();
    assert_eq!(body(&back).steps.len(), body(report).steps.len());
}

#[tokio::test]
async fn both_designs_grow_exactly_and_agree() {
    let lab = common::lab();
    let target = lab.target();
    let s = spec(&[
        ("units", "100"),
        ("steps", "0,10,100"),
        ("churn", "5%"),
        ("repeat", "2"),
        ("target-rows", "1M"),
    ]);
    let (events, report) = run(target.clone(), s.clone(), opts("growth_a"), None).await;
    let g = body(&report);
    let samples = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Sample(_)))
        .count();
    assert_eq!(samples, s.samples(), "one sample per step per design");
    assert!(matches!(events[0], RunEvent::Started { .. }));
    for d in [Design::Snapshot, Design::Ranges] {
        let measured: Vec<_> = g.measured(d).collect();
        assert_eq!(measured.len(), 3, "{d:?}");
        for st in &measured {
            // Exact: counted by the server as rows were written.
            assert_eq!(st.rows, s.rows(d, st.versions), "{d:?} at {}", st.versions);
            assert_eq!(st.read_rows, Some(100), "every version holds U units");
            assert!(st.write_seconds.is_some() && st.read_seconds.is_some());
        }
        assert_eq!(
            measured.iter().map(|s| s.versions).collect::<Vec<_>>(),
            [0, 10, 100]
        );
        for w in measured.windows(2) {
            assert!(w[1].table_bytes >= w[0].table_bytes, "{d:?} table shrank");
            assert!(
                w[1].index_total() >= w[0].index_total(),
                "{d:?} indexes shrank"
            );
        }
        let projected: Vec<_> = g
            .steps
            .iter()
            .filter(|st| st.design == d && st.projected)
            .collect();
        assert_eq!(projected.len(), 1);
        assert_eq!(projected[0].pairs, 1_000_000);
        // How far past the largest table measured, in rows of this design's table.
        let largest = measured.iter().map(|st| st.rows).max().unwrap() as f64;
        assert_eq!(
            projected[0].reach,
            Some(projected[0].rows as f64 / largest),
            "{d:?}"
        );
        assert!(projected[0].reach.unwrap() > 10.0);
    }
    assert_eq!(g.summary.same_content, Some(true), "{:#?}", g.summary);
    // The same versions were read from both designs, with the same content.
    let snap = g.measured(Design::Snapshot).last().unwrap();
    let ranges = g.measured(Design::Ranges).last().unwrap();
    assert_eq!(snap.read_versions, ranges.read_versions);
    assert_eq!(snap.content_digest, ranges.content_digest);
    assert_eq!(g.fit.len(), 2);
    assert!(
        g.summary.cold_reads,
        "the sandbox is local: cold reads are possible"
    );
    assert!(!g.summary.findings.is_empty());
    assert!(lab_tables(&target, "growth_a").await.is_empty());
    validate(&report);
}

#[tokio::test]
async fn other_methods_and_kept_indexes_agree_too() {
    let lab = common::lab();
    let target = lab.target();
    for method in ["multi", "copy"] {
        let s = spec(&[
            ("units", "50"),
            ("steps", "0,5,20"),
            ("churn", "10%"),
            ("repeat", "1"),
            ("write-method", method),
            ("grow-mode", "keep"),
            ("indexes", "pk,version_content"),
        ]);
        let (_, report) = run(target.clone(), s.clone(), opts("growth_b"), None).await;
        let g = body(&report);
        assert_eq!(g.summary.same_content, Some(true), "{method}");
        for st in &g.steps {
            assert!(!st.projected);
            assert_eq!(st.rows, s.rows(st.design, st.versions), "{method}");
            assert_eq!(st.read_rows, Some(50));
        }
        let snap = g.measured(Design::Snapshot).last().unwrap();
        assert_eq!(
            snap.index_bytes.keys().collect::<Vec<_>>(),
            ["pk", "version_content"]
        );
    }
    assert!(lab_tables(&target, "growth_b").await.is_empty());
}

#[tokio::test]
async fn a_step_beyond_free_disk_is_projected_not_run() {
    let lab = common::lab();
    let target = lab.target();
    let s = spec(&[
        ("units", "100"),
        ("steps", "0,100,1000"),
        ("design", "snapshot"),
        ("churn", "0"),
        ("repeat", "1"),
    ]);
    // 10k rows fit in 15 MB; 100k rows with four indexes, WAL and sort space do not.
    let budget = 15 * 1024 * 1024;
    assert_eq!(s.planned_steps(Some(budget)), [0, 100]);
    // The one pre-run check both front ends call costs only the steps that will run.
    let pf = pglab::experiment::lab::preflight::preflight(
        &ExperimentSpec::Growth(s.clone()),
        Some(budget),
        None,
        pglab::experiment::lab::preflight::CONFIRM_ABOVE,
    );
    assert_eq!(
        pf.cost.rows, 10_000,
        "the estimate covers the steps that run"
    );
    assert!(pf.refuse.is_none(), "{pf:?}");
    let o = RunOptions {
        disk_budget: Some(budget),
        ..opts("growth_c")
    };
    let (_, report) = run(target.clone(), s, o, None).await;
    let g = body(&report);
    let last = g.steps.iter().find(|st| st.versions == 1000).unwrap();
    assert!(last.projected, "{last:#?}");
    assert_eq!(last.fits_disk, Some(false));
    assert!(last.grow.is_none() && last.write_repeats.is_empty());
    assert!(last.table_bytes > 0 && last.disk_needed_bytes.unwrap() > 15 * 1024 * 1024);
    let measured: Vec<u64> = g.measured(Design::Snapshot).map(|st| st.versions).collect();
    assert_eq!(measured, [0, 100]);
    // Never grown past the measured step (plus the one version written there).
    assert!(
        g.steps
            .iter()
            .filter_map(|st| st.grow.as_ref())
            .all(|gr| gr.rows <= 10_000)
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("projected, not run")),
        "{:?}",
        report.notes
    );
    assert!(lab_tables(&target, "growth_c").await.is_empty());
    validate(&report);
}

#[tokio::test]
async fn cancel_during_growth_leaves_no_lab_tables() {
    let lab = common::lab();
    let target = lab.target();
    let s = spec(&[
        ("units", "1000"),
        ("steps", "0,3000"),
        ("design", "snapshot,ranges"),
        ("repeat", "1"),
    ]);
    let growing = |e: &RunEvent| match e {
        RunEvent::Progress(p) => p.phase.contains("growing to 3000"),
        _ => false,
    };
    let started = std::time::Instant::now();
    let (events, report) = run(target.clone(), s, opts("growth_d"), Some(&growing)).await;
    assert!(events.iter().any(growing), "the cancel came while growing");
    assert_eq!(report.outcome, pglab::experiment::Outcome::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(120));
    assert!(lab_tables(&target, "growth_d").await.is_empty());
}

#[tokio::test]
async fn repeats_give_per_step_estimates_and_design_verdicts() {
    let lab = common::lab();
    let target = lab.target();
    let s = spec(&[
        ("units", "100"),
        ("steps", "0,10"),
        ("churn", "5%"),
        ("repeat", "4"),
    ]);
    let (_, report) = run(target.clone(), s.clone(), opts("growth_r"), None).await;
    let g = body(&report);
    for st in g.steps.iter().filter(|st| !st.projected) {
        assert_eq!(
            st.write_repeats.len(),
            4,
            "{:?} at {}",
            st.design,
            st.versions
        );
        assert_eq!(st.read_repeats.len(), 4);
        assert_eq!(st.read_versions.len(), 4);
        assert_eq!(st.read_cold_repeats.len(), 4, "the sandbox is local");
    }
    // Every design reads the same versions in the same order.
    let at10: Vec<_> = g.steps.iter().filter(|st| st.versions == 10).collect();
    assert_eq!(at10.len(), 2);
    assert_eq!(at10[0].read_versions, at10[1].read_versions);
    // Estimates: 2 steps × 2 designs × (write, read, read cold), 4 trials each.
    assert_eq!(g.summary.estimates.len(), 12);
    for e in &g.summary.estimates {
        assert_eq!(e.seconds.n, 4);
        assert!(
            e.seconds.ci_low <= e.seconds.median && e.seconds.median <= e.seconds.ci_high,
            "{e:?}"
        );
    }
    // ranges against snapshot at both steps, each in the vocabulary and with a sentence.
    assert_eq!(g.summary.comparisons.len(), 6);
    for c in &g.summary.comparisons {
        // 4 a side can decide; when the spread is too wide to show the designs equivalent or
        // different, the sentence says about how many would.
        if c.verdict.as_str() == "too few trials" {
            assert!(c.finding.contains(" each would "), "{c:?}");
        }
        assert!(
            c.finding
                .starts_with(&format!("at {} versions: ", c.versions))
        );
        assert!(g.summary.findings.contains(&c.finding));
    }
    assert!(lab_tables(&target, "growth_r").await.is_empty());
    validate(&report);
}

#[tokio::test]
async fn repeat_auto_measures_within_its_cap() {
    let lab = common::lab();
    let target = lab.target();
    let s = spec(&[
        ("units", "100"),
        ("steps", "0,10"),
        ("churn", "5%"),
        ("repeat", "auto"),
        ("max-repeat", "5"),
        ("confidence", "99.5%"),
    ]);
    let (_, report) = run(target.clone(), s.clone(), opts("growth_auto"), None).await;
    let g = body(&report);
    // A cap of 5 is the one planned look: every design runs 5, then decides what it can.
    for st in g.steps.iter().filter(|st| !st.projected) {
        assert_eq!(
            st.write_repeats.len(),
            5,
            "{:?} at {}",
            st.design,
            st.versions
        );
        assert_eq!(st.read_repeats.len(), 5);
    }
    // What stays open says about how many would decide.
    for c in &g.summary.comparisons {
        if c.verdict.as_str() == "too few trials" {
            assert!(c.finding.contains("would"), "{}", c.finding);
        }
    }
    validate(&report);
}
