//! Projection: least-squares fits of size and time against (version, content) pairs, the
//! projected steps they give, and the disk a step needs (tables, indexes, WAL, sort space).

use std::collections::BTreeMap;

use super::cost::{index_bytes_per_row, wal_allowance};
use super::kinds::{Design, GrowMode};
use super::report::{DesignFit, GrowthReport, GrowthStep};
use super::spec::GrowthSpec;
use crate::measure::fit::LinearFit;

/// Bytes per content-table row (int8 + short text, with overhead).
const CONTENT_ROW_BYTES: u64 = 48;

/// Steps with fewer rows than this do not set per-row sizes (a few pages say little).
const PER_ROW_MIN_ROWS: u64 = 1000;

/// A time fit is extrapolated only when it rises and explains the measurements (r² at least
/// this); otherwise the measured mean is carried forward (noise is not a trend).
pub const TREND_R2: f64 = 0.9;

/// How a time is projected: "linear" along its fit, or "mean" of the measurements.
pub fn time_model(fit: Option<&LinearFit>) -> &'static str {
    match fit {
        Some(f) if f.slope > 0.0 && f.r2 >= TREND_R2 => "linear",
        _ => "mean",
    }
}

/// Fit a design's measured steps (x = pairs). None without a measured step.
pub fn fit_design(report: &GrowthReport, design: Design, to_pairs: u64) -> Option<DesignFit> {
    let steps: Vec<&GrowthStep> = report.measured(design).collect();
    let from = steps.iter().map(|s| s.pairs).max()?;
    let fit = |f: &dyn Fn(&GrowthStep) -> Option<f64>| {
        let pts: Vec<(f64, f64)> = steps
            .iter()
            .filter_map(|s| f(s).map(|y| (s.pairs as f64, y)))
            .collect();
        LinearFit::of(&pts)
    };
    let write_seconds = fit(&|s| s.write_seconds);
    let read_seconds = fit(&|s| s.read_seconds);
    Some(DesignFit {
        design,
        write_model: time_model(write_seconds.as_ref()).into(),
        read_model: time_model(read_seconds.as_ref()).into(),
        x: "pairs".into(),
        measured_steps: steps.len(),
        from_pairs: from,
        to_pairs: to_pairs.max(from),
        reach: (from > 0).then(|| to_pairs.max(from) as f64 / from as f64),
        table_bytes: fit(&|s| Some(s.table_bytes as f64)),
        index_bytes: fit(&|s| Some(s.index_total() as f64)),
        write_seconds,
        read_seconds,
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

/// Projected table and index sizes of a design at `versions`: the fit where there is one,
/// the per-row sizes otherwise; `conservative` takes the larger of the two.
fn sizes_at(
    spec: &GrowthSpec,
    report: &GrowthReport,
    fit: Option<&DesignFit>,
    design: Design,
    versions: u64,
    conservative: bool,
) -> (u64, BTreeMap<String, u64>) {
    let rows = spec.rows(design, versions) as f64;
    let x = spec.pairs(versions) as f64;
    let (heap_pr, index_pr) = per_row(spec, report, design);
    let by_rows_table = heap_pr * rows;
    let by_rows_index: f64 = index_pr.values().sum::<f64>() * rows;
    let fitted = |f: Option<&LinearFit>| f.map(|f| f.at(x).max(0.0));
    let (mut table, mut index) = match fit {
        Some(f) => (
            fitted(f.table_bytes.as_ref()).unwrap_or(by_rows_table),
            fitted(f.index_bytes.as_ref()).unwrap_or(by_rows_index),
        ),
        None => (by_rows_table, by_rows_index),
    };
    if conservative {
        table = table.max(by_rows_table);
        index = index.max(by_rows_index);
    }
    // Split the index total as the largest measured step did.
    let share_total: f64 = index_pr.values().sum();
    let split = index_pr
        .iter()
        .map(|(k, v)| {
            let share = if share_total > 0.0 {
                v / share_total
            } else {
                1.0 / index_pr.len() as f64
            };
            (k.clone(), (index * share).round() as u64)
        })
        .collect();
    (table.round() as u64, split)
}

/// A step that is not run, projected from the fit.
pub fn project_step(
    spec: &GrowthSpec,
    report: &GrowthReport,
    fit: Option<&DesignFit>,
    design: Design,
    versions: u64,
) -> GrowthStep {
    let x = spec.pairs(versions) as f64;
    let (table_bytes, index_bytes) = sizes_at(spec, report, fit, design, versions, false);
    let rows = spec.rows(design, versions);
    // Times: along the fit when it is a trend (see `time_model`), else the measured mean.
    let measured = |get: &dyn Fn(&GrowthStep) -> Option<f64>| -> Vec<f64> {
        report.measured(design).filter_map(get).collect()
    };
    let time = |f: Option<&LinearFit>, values: Vec<f64>| match (time_model(f), f) {
        ("linear", Some(f)) => Some(f.at(x).max(0.0)),
        _ if !values.is_empty() => Some(values.iter().sum::<f64>() / values.len() as f64),
        _ => None,
    };
    let write_seconds = time(
        fit.and_then(|f| f.write_seconds.as_ref()),
        measured(&|s| s.write_seconds),
    );
    let read_seconds = time(
        fit.and_then(|f| f.read_seconds.as_ref()),
        measured(&|s| s.read_seconds),
    );
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
        write_seconds,
        write_repeats: vec![],
        read_seconds,
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
            .filter(|f| f.from_pairs > 0)
            .map(|f| x / f.from_pairs as f64),
    }
}

/// Disk a run needs once every design holds `versions` versions, grown from `from`:
/// the tables and indexes of all designs and the content table, plus sort space for an
/// index rebuild and the WAL of the growth. Conservative (the larger of fit and per-row).
pub fn disk_needed(
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
    use crate::experiment::field::ParamText;

    fn step(
        design: Design,
        versions: u64,
        units: u64,
        table: u64,
        index: u64,
        write: f64,
    ) -> GrowthStep {
        GrowthStep {
            combo: 0,
            settings: Default::default(),
            checkpoint: None,
            design,
            versions,
            rows: versions * units,
            pairs: versions * units,
            projected: false,
            write_seconds: Some(write),
            write_repeats: vec![],
            read_seconds: Some(0.005),
            read_repeats: vec![],
            read_cold_seconds: None,
            read_cold_repeats: vec![],
            read_rows: None,
            read_versions: vec![],
            content_digest: None,
            table_bytes: table,
            node_bytes: Vec::new(),
            index_bytes: BTreeMap::from([
                ("pk".to_string(), index / 2),
                ("content".to_string(), index / 2),
            ]),
            bytes_per_row: None,
            grow: None,
            disk_needed_bytes: None,
            fits_disk: None,
            reach: None,
        }
    }

    #[test]
    fn projects_along_the_line_and_says_how_far() {
        let mut p = crate::experiment::spec::ExperimentKind::Growth.defaults();
        p.extend(ParamText::from([
            ("units".to_string(), "100".to_string()),
            ("design".to_string(), "snapshot".to_string()),
            ("indexes".to_string(), "pk,content".to_string()),
        ]));
        let spec = GrowthSpec::parse(&p).unwrap();
        let mut r = GrowthReport::new(&spec);
        r.steps
            .push(step(Design::Snapshot, 10, 100, 50_000, 40_000, 0.1));
        r.steps
            .push(step(Design::Snapshot, 100, 100, 500_000, 400_000, 0.2));
        let fit = fit_design(&r, Design::Snapshot, 100_000).unwrap();
        assert_eq!(fit.from_pairs, 10_000);
        assert_eq!(fit.reach, Some(10.0));
        let p = project_step(&spec, &r, Some(&fit), Design::Snapshot, 1000);
        assert!(p.projected);
        assert_eq!(p.rows, 100_000);
        assert!(
            (p.table_bytes as f64 - 5_000_000.0).abs() < 10.0,
            "{}",
            p.table_bytes
        );
        assert!((p.index_total() as f64 - 4_000_000.0).abs() < 10.0);
        assert!((p.write_seconds.unwrap() - (0.1 + 0.1 / 9000.0 * 99_000.0)).abs() < 1e-6);
        assert_eq!(p.reach, Some(10.0));
        // Reads did not grow with size: projected flat at their mean, not along noise.
        assert!((p.read_seconds.unwrap() - 0.005).abs() < 1e-12);
        let need = disk_needed(&spec, &r, &[fit], 1000, 100, 1 << 30);
        assert!(need > 9_000_000, "{need}");
    }
}
