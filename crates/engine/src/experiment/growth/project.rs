//! Projection: the growth of size and time against the rows of each design's table (see
//! [`crate::measure::fit`] for the shapes and their intervals), the projected steps they give,
//! and the disk a step needs (tables, indexes, WAL, sort space).

use std::collections::BTreeMap;

use super::cost::{index_bytes_per_row, wal_allowance};
use super::kinds::{Design, GrowMode};
use super::report::{DesignFit, GrowthReport, GrowthStep};
use super::spec::GrowthSpec;
use crate::measure::fit::{Trend, reach};

/// Bytes per content-table row (int8 + short text, with overhead).
const CONTENT_ROW_BYTES: u64 = 48;

/// Steps with fewer rows than this do not set per-row sizes (a few pages say little).
const PER_ROW_MIN_ROWS: u64 = 1000;

/// The steps a design's fits are made from: measured, under the first combination of swept
/// settings (the one the growth runs under; later ones answer for the same steps).
fn fitted_steps(report: &GrowthReport, design: Design) -> Vec<&GrowthStep> {
    report.measured(design).filter(|s| s.combo == 0).collect()
}

/// Fit a design's measured steps against its rows, to project to `to_rows`. None without a
/// measured step.
pub(crate) fn fit_design(report: &GrowthReport, design: Design, to_rows: u64) -> Option<DesignFit> {
    let steps = fitted_steps(report, design);
    let from = steps.iter().map(|s| s.rows).max()?;
    let confidence = report.params.decision.rules().confidence;
    let sizes = |f: &dyn Fn(&GrowthStep) -> u64| {
        let pts: Vec<(f64, f64)> = steps.iter().map(|s| (s.rows as f64, f(s) as f64)).collect();
        Trend::of_sizes(&pts)
    };
    // Every repeat is a point (the median alone where no repeats were kept).
    let times = |repeats: &dyn Fn(&GrowthStep) -> &[f64],
                 median: &dyn Fn(&GrowthStep) -> Option<f64>| {
        let pts: Vec<(f64, f64)> = steps
            .iter()
            .flat_map(|s| {
                let r = repeats(s);
                let ys: Vec<f64> = if r.is_empty() {
                    median(s).into_iter().collect()
                } else {
                    r.to_vec()
                };
                ys.into_iter().map(|y| (s.rows as f64, y))
            })
            .collect();
        Trend::of_times(&pts, confidence)
    };
    let to = to_rows.max(from);
    Some(DesignFit {
        design,
        x: "rows".into(),
        measured_steps: steps.len(),
        from_rows: from,
        to_rows: to,
        reach: (from > 0).then(|| reach(to as f64, from as f64)),
        table: sizes(&|s| s.table_bytes),
        index: sizes(&|s| s.index_total()),
        write: times(&|s| &s.write_repeats, &|s| s.write_seconds),
        read: times(&|s| &s.read_repeats, &|s| s.read_seconds),
    })
}

/// Heap and per-index bytes per row from the largest measured step, or the conservative
/// constants before one exists.
fn per_row(
    spec: &GrowthSpec,
    report: &GrowthReport,
    design: Design,
) -> (f64, BTreeMap<String, f64>) {
    let last = report
        .measured(design)
        .filter(|s| s.rows >= PER_ROW_MIN_ROWS)
        .max_by_key(|s| s.rows);
    match last {
        Some(s) => (
            s.table_bytes as f64 / s.rows as f64,
            s.index_bytes
                .iter()
                .map(|(k, v)| (k.clone(), *v as f64 / s.rows as f64))
                .collect(),
        ),
        None => (
            design.heap_bytes_per_row(spec.key_shape) as f64,
            spec.index_names(design)
                .into_iter()
                .map(|n| (n.to_string(), index_bytes_per_row(spec.key_shape) as f64))
                .collect(),
        ),
    }
}

/// Projected table and index bytes of a design at `versions`: the fits' estimate, or the
/// per-row sizes where there is no fit; `conservative` takes the top of the fits' intervals
/// and never less than the per-row sizes.
fn sizes_at(
    spec: &GrowthSpec,
    report: &GrowthReport,
    fit: Option<&DesignFit>,
    design: Design,
    versions: u64,
    conservative: bool,
) -> (u64, BTreeMap<String, u64>) {
    let rows = spec.rows(design, versions) as f64;
    let (heap_pr, shares) = per_row(spec, report, design);
    let by_rows_table = heap_pr * rows;
    let by_rows_index: f64 = shares.values().sum::<f64>() * rows;
    let from = |t: Option<&Trend>, fallback: f64| match t.map(|t| t.at(rows)) {
        Some(p) if conservative => p.high.max(fallback),
        Some(p) => p.value,
        None => fallback,
    };
    let table = from(fit.and_then(|f| f.table.as_ref()), by_rows_table);
    let index = from(fit.and_then(|f| f.index.as_ref()), by_rows_index);
    // Split the index total as the largest measured step did.
    let share_total: f64 = shares.values().sum();
    let split = shares
        .iter()
        .map(|(k, v)| {
            let share = if share_total > 0.0 {
                v / share_total
            } else {
                1.0 / shares.len() as f64
            };
            (k.clone(), (index * share).round() as u64)
        })
        .collect();
    (table.round() as u64, split)
}

/// A step that is not run, projected along the design's fits.
pub(crate) fn project_step(
    spec: &GrowthSpec,
    report: &GrowthReport,
    fit: Option<&DesignFit>,
    design: Design,
    versions: u64,
) -> GrowthStep {
    let rows = spec.rows(design, versions);
    let (table_bytes, index_bytes) = sizes_at(spec, report, fit, design, versions, false);
    let time = |t: Option<&Trend>| t.map(|t| t.at(rows as f64).value);
    let total: u64 = table_bytes + index_bytes.values().sum::<u64>();
    GrowthStep {
        combo: 0,
        settings: Default::default(),
        checkpoint: None,
        design,
        versions,
        rows,
        pairs: spec.pairs(versions),
        projected: true,
        write_seconds: time(fit.and_then(|f| f.write.as_ref())),
        write_repeats: vec![],
        read_seconds: time(fit.and_then(|f| f.read.as_ref())),
        read_repeats: vec![],
        read_cold_seconds: None,
        read_cold_repeats: vec![],
        read_rows: None,
        read_versions: vec![],
        content_digest: None,
        table_bytes,
        index_bytes,
        node_bytes: Vec::new(),
        bytes_per_row: (rows > 0).then(|| total as f64 / rows as f64),
        grow: None,
        disk_needed_bytes: None,
        fits_disk: None,
        reach: fit
            .filter(|f| f.from_rows > 0)
            .map(|f| reach(rows as f64, f.from_rows as f64)),
        replicas: Vec::new(),
        host: None,
    }
}

/// Project every point of the spec that a design did not measure: fit each design's measured
/// steps (kept in the report), then add a projected step per design and point, with the disk
/// it needs once `measured_max` versions are there and whether that fits `budget`. Returns
/// the steps added.
pub(crate) fn project_rest(
    report: &mut GrowthReport,
    measured_max: u64,
    max_wal: u64,
    budget: Option<u64>,
) -> Vec<GrowthStep> {
    let spec = report.params.clone();
    let points = spec.points();
    let last_point = points.last().copied().unwrap_or(0);
    let fits: Vec<DesignFit> = spec
        .designs
        .iter()
        .filter_map(|&d| fit_design(report, d, spec.rows(d, last_point)))
        .collect();
    let mut added = Vec::new();
    for &v in &points {
        let need = disk_needed(&spec, report, &fits, v, measured_max.min(v), max_wal);
        for &d in &spec.designs {
            if report.measured(d).any(|s| s.versions == v) {
                continue;
            }
            let fit = fits.iter().find(|f| f.design == d);
            let mut step = project_step(&spec, report, fit, d, v);
            step.disk_needed_bytes = Some(need);
            step.fits_disk = budget.map(|b| need <= b);
            added.push(step);
        }
    }
    report.steps.extend(added.iter().cloned());
    report.fit = fits;
    added
}

/// Disk a run needs once every design holds `versions` versions, grown from `from`:
/// the tables and indexes of all designs and the content table, plus sort space for an
/// index rebuild and the WAL of the growth. Conservative (the larger of fit and per-row).
pub(crate) fn disk_needed(
    spec: &GrowthSpec,
    report: &GrowthReport,
    fits: &[DesignFit],
    versions: u64,
    from: u64,
    max_wal: u64,
) -> u64 {
    let mut total = 0;
    let mut largest_index = 0;
    let mut written = 0;
    for &d in &spec.designs {
        let fit = fits.iter().find(|f| f.design == d);
        let (table, idx) = sizes_at(spec, report, fit, d, versions, true);
        let (t0, i0) = sizes_at(spec, report, fit, d, from.min(versions), true);
        let isum: u64 = idx.values().sum();
        total += table + isum;
        largest_index = largest_index.max(idx.values().copied().max().unwrap_or(0));
        written += (table + isum).saturating_sub(t0 + i0.values().sum::<u64>());
    }
    let content = if versions == 0 {
        0
    } else {
        spec.units + spec.churn_per_version() * (versions - 1)
    };
    total += content * CONTENT_ROW_BYTES;
    let temp = match spec.grow_mode {
        GrowMode::Rebuild => largest_index,
        GrowMode::Keep => 0,
    };
    total + temp + wal_allowance(written, max_wal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::field::ParamText;
    use crate::measure::fit::Shape;

    fn step(
        design: Design,
        versions: u64,
        units: u64,
        (table, index): (u64, u64),
        writes: &[f64],
        reads: &[f64],
    ) -> GrowthStep {
        let median = |v: &[f64]| crate::measure::stats::median(v);
        GrowthStep {
            write_seconds: median(writes),
            write_repeats: writes.to_vec(),
            read_seconds: median(reads),
            read_repeats: reads.to_vec(),
            table_bytes: table,
            index_bytes: BTreeMap::from([
                ("pk".to_string(), index / 2),
                ("content".to_string(), index / 2),
            ]),
            ..GrowthStep::blank(design, versions, versions * units)
        }
    }

    #[test]
    fn projects_along_the_shapes_shown_and_says_how_far() {
        let mut p = crate::experiment::lab::spec::ExperimentKind::Growth.defaults();
        p.extend(ParamText::from([
            ("units".to_string(), "100".to_string()),
            ("design".to_string(), "snapshot".to_string()),
            ("indexes".to_string(), "pk,content".to_string()),
        ]));
        let spec = GrowthSpec::parse(&p).unwrap();
        let mut r = GrowthReport::new(&spec);
        // Writes rise by exactly 10 µs a row (0.1 s, 0.11 s, 0.2 s at 0, 1000, 10k rows),
        // each repeat within ±1 ms; reads stay at 5 ms.
        let around = |c: f64| [c, c + 0.001, c - 0.001, c];
        let reads = [0.005, 0.0051, 0.0049, 0.005];
        r.steps.push(step(
            Design::Snapshot,
            0,
            100,
            (8192, 16_384),
            &around(0.1),
            &reads,
        ));
        r.steps.push(step(
            Design::Snapshot,
            10,
            100,
            (50_000, 40_000),
            &around(0.11),
            &reads,
        ));
        r.steps.push(step(
            Design::Snapshot,
            100,
            100,
            (500_000, 400_000),
            &around(0.2),
            &reads,
        ));
        let fit = fit_design(&r, Design::Snapshot, 100_000).unwrap();
        assert_eq!((fit.from_rows, fit.to_rows), (10_000, 100_000));
        assert_eq!(fit.reach, Some(10.0));
        assert_eq!(fit.write.unwrap().shape, Shape::Linear);
        assert_eq!(fit.read.unwrap().shape, Shape::Flat);
        let p = project_step(&spec, &r, Some(&fit), Design::Snapshot, 1000);
        assert!(p.projected);
        assert_eq!(p.rows, 100_000);
        // 500 kB + 50 B a row (the last steps' rate) × 90k rows.
        assert!(
            (p.table_bytes as f64 - 5_000_000.0).abs() < 10.0,
            "{}",
            p.table_bytes
        );
        assert!((p.index_total() as f64 - 4_000_000.0).abs() < 10.0);
        assert!(
            (p.write_seconds.unwrap() - 1.1).abs() < 1e-6,
            "{:?}",
            p.write_seconds
        );
        assert_eq!(p.reach, Some(10.0));
        // Reads did not grow with size: flat at the median of every repeat, not along noise.
        assert!((p.read_seconds.unwrap() - 0.005).abs() < 1e-12);
        r.fit = vec![fit.clone()];
        let pr = r.projection(&p).unwrap();
        assert_eq!(pr.words(), "projected");
        // The table's interval runs from the first steps' 41.8 B a row to the last ones' 50.
        let t = pr.table.unwrap();
        assert!(
            (t.low - (500_000.0 + 41.808 * 90_000.0)).abs() < 10.0,
            "{t:?}"
        );
        assert!((t.high - 5_000_000.0).abs() < 10.0, "{t:?}");
        let need = disk_needed(&spec, &r, &[fit], 1000, 100, 1 << 30);
        assert!(need > 9_000_000, "{need}");
    }
}
