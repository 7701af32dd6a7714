//! The growth record with every field it can write, against `assets/schema/growth.schema.json`:
//! a swept run (`--sync-commit`, `--standby-fault`) whose steps, COMMIT timings, standbys,
//! Citus shards, fits and summary are all present.

use std::collections::BTreeMap;

use super::commits::{GrowthFault, StepCommits, WriteTiming, per_combo};
use super::kinds::{Design, GrowMode};
use super::report::{DesignFit, FillBaseline, GrowStats, GrowthReport, GrowthStep, NodeBytes};
use super::sharding::ShardComparison;
use super::spec::GrowthSpec;
use super::verdicts::Timed;
use crate::experiment::lab::record::ReportBody;
use crate::experiment::lab::record_schema::{assert_fits, fault_window, full_envelope, replica};
use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};
use crate::experiment::lab::standby_fault::FaultWindow;
use crate::measure::fit::{Line, Shape, Trend};
use crate::measure::verdict::Verdict;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../assets/schema/growth.schema.json"
));

/// Every optional parameter given: a sweep of synchronous_commit and a standby fault.
fn spec() -> GrowthSpec {
    let mut p = ExperimentKind::Growth.defaults();
    for (k, v) in [
        ("units", "100"),
        ("steps", "0,2"),
        ("indexes", "pk,version,content,version_content"),
        ("design", "snapshot,ranges"),
        ("key-shape", "uuid"),
        ("churn", "5%"),
        ("repeat", "3"),
        ("sync-commit", "local,on"),
        ("checkpoint", "on"),
        ("grow-mode", "keep"),
        ("fill-limit", "2"),
        ("target-rows", "1e6"),
        ("baseline", "on"),
        ("standby-fault", "stop-at=0s,for=1s"),
    ] {
        p.insert(k.into(), v.into());
    }
    match ExperimentKind::Growth.parse_spec(&p) {
        Ok(ExperimentSpec::Growth(spec)) => spec,
        other => panic!("the parameters parse: {other:?}"),
    }
}

/// A measured step with every field present.
fn step(design: Design, versions: u64, combo: usize) -> GrowthStep {
    let settings = BTreeMap::from([("synchronous_commit".into(), ["local", "on"][combo].into())]);
    GrowthStep {
        pairs: versions * 100,
        write_seconds: Some(0.05),
        write_repeats: vec![0.05, 0.04, 0.06],
        read_seconds: Some(0.001),
        read_repeats: vec![0.001, 0.002, 0.001],
        read_cold_seconds: Some(0.01),
        read_cold_repeats: vec![0.01, 0.02, 0.01],
        read_rows: Some(100),
        read_versions: vec![1, 2],
        content_digest: Some("0123456789abcdef".into()),
        table_bytes: 8192,
        index_bytes: BTreeMap::from([("pk".into(), 8192), ("all indexes".into(), 16384)]),
        node_bytes: vec![NodeBytes {
            node: "localhost:9701".into(),
            bytes: 8192,
        }],
        bytes_per_row: Some(40.0),
        grow: Some(GrowStats {
            mode: GrowMode::Keep,
            from_versions: 0,
            rows: 200,
            seconds: 0.3,
            copy_seconds: 0.1,
            index_seconds: 0.15,
            vacuum_seconds: 0.05,
            copy_rows_per_second: 2000.0,
            rows_per_second: 666.0,
        }),
        disk_needed_bytes: Some(1 << 20),
        fits_disk: Some(true),
        reach: Some(1.0),
        combo,
        settings,
        replicas: vec![replica()],
        checkpoint: Some(true),
        ..GrowthStep::blank(design, versions, versions * 100)
    }
}

/// One combination's writes at a step, with the standby fault beside the first round.
fn commits(versions: u64, combo: usize) -> StepCommits {
    let w = |round, at_s| WriteTiming {
        design: Design::Snapshot,
        round,
        at_s,
        seconds: 1.4,
        commit_seconds: 1.1,
        rows: 100,
    };
    let writes = vec![w(1, 0.0), w(1, 1.4), w(2, 0.0)];
    let window = FaultWindow {
        from_s: Some(0.0),
        to_s: Some(1.0),
        ..fault_window("stop-at=0s,for=1s")
    };
    let fault = GrowthFault::of(window, 1, &writes);
    let settings = BTreeMap::from([("synchronous_commit".into(), "on".into())]);
    let c = StepCommits::of(
        (versions, combo),
        settings,
        writes,
        vec![replica()],
        Some(fault),
    );
    c.expect("writes were timed")
}

fn trend(shape: Shape) -> Trend {
    let line = Line {
        intercept: 1.0,
        slope: 0.5,
    };
    Trend {
        shape,
        fit: line,
        low: line,
        high: line,
        level: 0.9,
        points: 2,
        x_max: 200.0,
    }
}

/// The report's fits, baseline, free space and Citus comparison.
fn fill_the_rest(body: &mut GrowthReport) {
    body.fit = vec![DesignFit {
        design: Design::Snapshot,
        x: "rows".into(),
        measured_steps: 2,
        from_rows: 200,
        to_rows: 1_000_000,
        reach: Some(5000.0),
        table: Some(trend(Shape::Linear)),
        index: Some(trend(Shape::Linear)),
        write: Some(trend(Shape::Logarithmic)),
        read: Some(trend(Shape::Flat)),
    }];
    body.baseline = Some(FillBaseline {
        design: Design::Snapshot,
        rows: 200,
        seconds: 0.1,
        rows_per_second: 2000.0,
        growth_copy_rows_per_second: 1800.0,
        growth_rows_per_second: 600.0,
        copy_ratio: 0.9,
        total_ratio: 0.3,
    });
    body.free_bytes = Some(1 << 30);
    body.summary.distributed = vec![ShardComparison {
        design: Design::SnapshotByContent,
        versions: 2,
        timed: Timed::ReadCold,
        verdict: Verdict::TooFewTrials,
        ratio: 1.2,
        ratio_low: 0.9,
        ratio_high: 1.5,
        median: 0.012,
        plain_median: 0.01,
        trials_needed: Some(8),
        finding: "snapshot by content reads alike".into(),
    }];
}

/// A swept run's growth record, every field present.
pub(crate) fn full_record() -> crate::experiment::lab::record::RunReport {
    let spec = spec();
    let mut body = GrowthReport::new(&spec);
    for combo in 0..2 {
        for design in [Design::Snapshot, Design::Ranges] {
            body.steps
                .extend([step(design, 0, combo), step(design, 2, combo)]);
        }
        body.commits.extend([commits(0, combo), commits(2, combo)]);
    }
    body.steps.push(GrowthStep {
        projected: true,
        grow: None,
        ..step(Design::Snapshot, 10_000, 0)
    });
    fill_the_rest(&mut body);
    body.summarize(&["a confounder".into()], true);
    let labels = ["local".to_string(), "on".to_string()];
    body.summary.commits = per_combo(&body.commits, &labels);
    full_envelope(
        ReportBody::Growth(Box::new(body)),
        ExperimentSpec::Growth(spec).spec_key(),
    )
}

#[test]
fn every_field_a_swept_run_writes_is_in_the_schema() {
    let r = full_record();
    let ReportBody::Growth(g) = &r.body else {
        unreachable!()
    };
    // The record really is full: a sweep's findings, COMMIT timings with a fault.
    assert!(!g.summary.settings.is_empty(), "{:?}", g.summary);
    assert!(!g.summary.commits.is_empty() && !g.summary.estimates.is_empty());
    assert!(
        g.commits
            .iter()
            .all(|c| c.fault.is_some() && !c.shape.series.is_empty())
    );
    assert!(g.commits.iter().all(|c| c.shape.worst_second.is_some()));
    assert_fits(SCHEMA, &r);
}
