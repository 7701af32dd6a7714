//! The growth decision on hand-made numbers: the rules that weigh the core's verdicts with the
//! projections, and whole reports built from steps whose fits can be computed by hand.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use super::*;
use crate::experiment::growth::project::project_rest;
use crate::experiment::growth::{Design, GrowthReport, GrowthSpec, GrowthStep};
use crate::experiment::lab::field::ParamText;
use crate::experiment::lab::record::SCHEMA_VERSION;
use crate::experiment::lab::spec::ExperimentKind;
use crate::experiment::{ExperimentSpec, Outcome, ReportBody, RunReport};
use crate::measure::fit::{Projected, Shape};
use crate::measure::verdict::Verdict;
use crate::report::growth_timing::{Apart, Measured, apart, weigh};

/// pulp-quick's spec: 1000 units, steps 0, 10, 100 versions, projected to 1e9 rows.
fn spec() -> GrowthSpec {
    let mut p = ExperimentKind::Growth.defaults();
    p.extend(ParamText::from([
        ("units".to_string(), "1k".to_string()),
        ("steps".to_string(), "0,10,100".to_string()),
        ("target-rows".to_string(), "1e9".to_string()),
        ("repeat".to_string(), "4".to_string()),
    ]));
    GrowthSpec::parse(&p).unwrap()
}

/// A measured step: (table, index) bytes and the repeats of each timing.
fn step(
    spec: &GrowthSpec,
    design: Design,
    versions: u64,
    (table, index): (u64, u64),
    writes: &[f64],
    reads: &[f64],
) -> GrowthStep {
    let median = |v: &[f64]| crate::measure::stats::median(v);
    GrowthStep {
        pairs: spec.pairs(versions),
        write_seconds: median(writes),
        write_repeats: writes.to_vec(),
        read_seconds: median(reads),
        read_repeats: reads.to_vec(),
        read_rows: Some(1000),
        read_versions: vec![versions.max(1)],
        content_digest: Some("0123456789abcdef".into()),
        table_bytes: table,
        index_bytes: BTreeMap::from([("pk".to_string(), index)]),
        ..GrowthStep::blank(design, versions, spec.rows(design, versions))
    }
}

/// A finished growth run of these steps: summarized, projected to the target as a run does.
fn run_of(spec: &GrowthSpec, steps: Vec<GrowthStep>) -> RunReport {
    let mut b = GrowthReport::new(spec);
    b.steps = steps;
    project_rest(&mut b, 100, 1 << 30, None);
    b.steps.sort_by_key(|s| (s.versions, s.design));
    b.summarize(&[], false);
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).single().unwrap();
    RunReport {
        whatif: None,
        schema_version: SCHEMA_VERSION,
        run_id: "g1".into(),
        pglab_version: env!("CARGO_PKG_VERSION").into(),
        outcome: Outcome::Finished,
        error: None,
        started_at: at,
        finished_at: at,
        preset: Some("pulp-quick".into()),
        tune: None,
        target: "sandbox".into(),
        server: Some(crate::report::example::server()),
        host: crate::report::example::host(),
        spec_key: ExperimentSpec::Growth(spec.clone()).spec_key(),
        notes: vec![],
        body: ReportBody::Growth(Box::new(b)),
    }
}

fn growth(r: &RunReport) -> &GrowthReport {
    match &r.body {
        ReportBody::Growth(b) => b,
        _ => unreachable!(),
    }
}

/// Each value with three neighbours: ±1% and itself, four repeats.
fn four(c: f64) -> [f64; 4] {
    [c, c * 1.01, c * 0.99, c]
}

/// The sizes pulp-quick measured (table, indexes) at 0, 10, 100 versions.
const SNAPSHOT_BYTES: [(u64, u64); 3] = [(0, 32_768), (802_816, 1_048_576), (7_654_604, 9_646_899)];
const RANGES_BYTES: [(u64, u64); 3] = [(0, 24_576), (114_688, 131_072), (221_184, 212_992)];

/// The repeats of one timing at each of the three steps.
type PerStep<'a> = &'a dyn Fn(usize) -> Vec<f64>;

/// pulp-quick's six steps (both designs at 0, 10, 100 versions, its sizes) with these timings:
/// (writes, reads) for snapshot, then for ranges.
fn pulp_steps(
    spec: &GrowthSpec,
    snapshot: (PerStep, PerStep),
    ranges: (PerStep, PerStep),
) -> Vec<GrowthStep> {
    let mut steps = Vec::new();
    for (i, v) in [0u64, 10, 100].into_iter().enumerate() {
        steps.push(step(
            spec,
            Design::Snapshot,
            v,
            SNAPSHOT_BYTES[i],
            &snapshot.0(i),
            &snapshot.1(i),
        ));
        steps.push(step(
            spec,
            Design::Ranges,
            v,
            RANGES_BYTES[i],
            &ranges.0(i),
            &ranges.1(i),
        ));
    }
    steps
}

#[test]
fn ranges_reads_measured_alike_but_projected_far_slower_make_a_trade_off_that_says_so() {
    // The run: snapshot writes 22/23/28 ms; reads alike at 100 versions, but ranges
    // reads rise with every range added (0.30, 0.40, 0.48 ms at 0, 1090, 1990 rows), a growth
    // its projection carries to 10M rows.
    let spec = spec();
    let snapshot_reads = |_| vec![0.00040, 0.00045, 0.00050, 0.00045];
    let steps = pulp_steps(
        &spec,
        (
            &|i| four([0.022, 0.023, 0.028][i]).to_vec(),
            &snapshot_reads,
        ),
        (&|_| four(0.004).to_vec(), &|i| {
            four([0.00030, 0.00040, 0.00048][i]).to_vec()
        }),
    );
    let r = run_of(&spec, steps);
    let b = growth(&r);
    // The read verdict at 100 versions is not slower (the core decides which word).
    let read = b
        .summary
        .comparisons
        .iter()
        .find(|c| c.versions == 100 && c.timed == Timed::Read)
        .unwrap();
    assert_ne!(read.verdict, Verdict::Slower, "{read:?}");
    // Snapshot's writes grow along a line; ranges' reads too; both with intervals.
    let fit = |d: Design| b.fit.iter().find(|f| f.design == d).unwrap();
    assert_eq!(fit(Design::Snapshot).write.unwrap().shape, Shape::Linear);
    assert_eq!(fit(Design::Ranges).read.unwrap().shape, Shape::Linear);
    let target = b
        .steps
        .iter()
        .find(|s| s.design == Design::Ranges && s.projected)
        .unwrap();
    let pr = b.projection(target).unwrap();
    let read = pr.read.unwrap();
    // 0.30 ms + 0.18 ms per 1990 rows, carried to 10M rows: about 0.9 s.
    assert!((0.5..1.5).contains(&read.value), "{read:?}");
    assert!(read.low < read.value && read.value < read.high);
    assert_eq!(pr.words(), "extrapolated ×5000");

    let rec = recommendations(&r, b);
    let text = &rec[0].text;
    assert!(text.starts_with("A trade-off, not a winner"), "{text}");
    assert!(text.contains("but ranges is slower"), "{text}");
    // Four reads a design do not decide at 100 versions (the verdict says so and how many
    // would); the projection does.
    assert!(
        text.contains("too few trials at 100 versions (19 each would decide) but projected"),
        "{text}"
    );
    assert!(
        text.contains("projected 2011× slower at 1M versions"),
        "{text}"
    );
    assert!(
        text.contains("Choose snapshot if reading versions is the hot path"),
        "{text}"
    );
    assert!(
        text.contains("This rests on projections extrapolated ×10000"),
        "{text}"
    );
    for never in ["as fast or faster", "not slower", "points to **ranges**"] {
        assert!(!text.contains(never), "{never}: {text}");
    }
    assert!(rec[0].sql.is_empty());
    // Every projected figure in the decision table says how far it was carried.
    let g = decision_grid(&r, b).unwrap();
    for row in &g.rows {
        assert!(row[1].starts_with("extrapolated ×"), "{row:?}");
    }
    // With their intervals (a point when it rounds to one: ranges' 4.0 ms writes).
    assert!(
        g.rows[0][5].contains(" [") && g.rows[1][6].contains(" ["),
        "{:?}",
        g.rows
    );
    assert_eq!(g.headers.last().unwrap(), "projected along");
    assert_eq!(
        g.rows[0].last().unwrap(),
        "sizes linear · write linear · read flat"
    );
}

#[test]
fn a_flat_ranges_read_carried_far_is_a_floor_and_keeps_time_open() {
    // Reads alike everywhere and flat in both designs: the ranges projection cannot show the
    // growth its scan will have, so time stays open and larger steps would decide it.
    let spec = spec();
    let reads = |_| vec![0.00040, 0.00045, 0.00050, 0.00045];
    let steps = pulp_steps(
        &spec,
        (&|_| four(0.06).to_vec(), &reads),
        (&|_| four(0.004).to_vec(), &reads),
    );
    let r = run_of(&spec, steps);
    let b = growth(&r);
    let text = &recommendations(&r, b)[0].text;
    assert!(
        text.starts_with("On size, the evidence points to **ranges**"),
        "{text}"
    );
    assert!(text.contains("its flat projection is a floor"), "{text}");
    assert!(
        text.contains("measuring larger steps (--steps) would decide it"),
        "{text}"
    );
    assert!(!text.contains("as fast or faster"), "{text}");
}

fn m(verdict: Verdict) -> Measured {
    Measured {
        verdict,
        ratio: 1.0,
        versions: 100,
        trials_needed: None,
    }
}

fn p(value: f64, low: f64, high: f64) -> Projected {
    Projected {
        shape: Shape::Linear,
        value,
        low,
        high,
    }
}

#[test]
fn projections_count_only_when_their_intervals_are_apart() {
    assert_eq!(
        apart(&p(35.0, 20.0, 60.0), &p(0.4, 0.36, 0.45)),
        Apart::RangesSlower
    );
    assert_eq!(
        apart(&p(0.1, 0.05, 0.2), &p(0.4, 0.36, 0.45)),
        Apart::RangesFaster
    );
    assert_eq!(
        apart(&p(0.42, 0.3, 0.5), &p(0.4, 0.36, 0.45)),
        Apart::Overlap
    );
}

#[test]
fn measured_and_projected_answers_are_weighed_in_one_rule() {
    use Verdict::*;
    let nsd = m(NoSignificantDifference);
    // The case: no significant difference measured at 100 versions, ranges reads
    // projected far slower at the target: slower, and it rests on the projection.
    assert_eq!(
        weigh(Some(&nsd), Some(Apart::RangesSlower)),
        (AtTarget::Slower, true)
    );
    // Not shown different is not "as good": too few trials stays open…
    assert_eq!(
        weigh(Some(&m(TooFewTrials)), Some(Apart::Overlap)),
        (AtTarget::Open, false)
    );
    assert_eq!(weigh(Some(&m(TooFewTrials)), None), (AtTarget::Open, false));
    // …and only the core's equivalence, with projections that agree, is.
    assert_eq!(
        weigh(Some(&nsd), Some(Apart::Overlap)),
        (AtTarget::Equivalent, false)
    );
    assert_eq!(weigh(Some(&nsd), None), (AtTarget::Equivalent, false));
    // A measured verdict stands unless the projection contradicts it.
    assert_eq!(
        weigh(Some(&m(Faster)), Some(Apart::Overlap)),
        (AtTarget::Faster, false)
    );
    assert_eq!(
        weigh(Some(&m(Faster)), Some(Apart::RangesFaster)),
        (AtTarget::Faster, false)
    );
    assert_eq!(
        weigh(Some(&m(Faster)), Some(Apart::RangesSlower)),
        (AtTarget::Open, false)
    );
    assert_eq!(
        weigh(Some(&m(Slower)), Some(Apart::RangesFaster)),
        (AtTarget::Open, false)
    );
    assert_eq!(weigh(Some(&m(Slower)), None), (AtTarget::Slower, false));
    // Nothing measured on both: a separated projection still speaks, as a projection.
    assert_eq!(
        weigh(None, Some(Apart::RangesFaster)),
        (AtTarget::Faster, true)
    );
    assert_eq!(weigh(None, Some(Apart::Overlap)), (AtTarget::Open, false));
}

#[test]
fn a_design_is_named_only_where_size_or_time_decides() {
    // Ranges smaller and not slower; still open; slower on some timing.
    assert_eq!(choose(true, false, false, false, false), Choice::Ranges);
    assert_eq!(
        choose(true, false, false, false, true),
        Choice::RangesOnSizeTimeOpen
    );
    assert_eq!(
        choose(true, false, false, true, false),
        Choice::TradeOffRangesSmaller
    );
    // Snapshot smaller: named only when ranges is not faster on a timing.
    assert_eq!(choose(false, true, false, false, false), Choice::Snapshot);
    assert_eq!(
        choose(false, true, true, false, false),
        Choice::TradeOffSnapshotSmaller
    );
    // Sizes within the smallest effect: time decides, or nothing is named.
    assert_eq!(
        choose(false, false, true, false, false),
        Choice::RangesOnTime
    );
    assert_eq!(
        choose(false, false, false, true, false),
        Choice::SnapshotOnTime
    );
    assert_eq!(choose(false, false, false, false, false), Choice::Neither);
    assert_eq!(choose(false, false, true, true, false), Choice::Neither);
}
