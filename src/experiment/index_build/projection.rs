//! A sampled index-build on an existing table projects each setting's build time to the
//! whole table: the builds at the three sample sizes are fitted with
//! [`crate::measure::projection::project_nlogn`] and the time at the table's row count is
//! given with its prediction interval. Every sentence that shows a projected figure says it
//! is projected, from what, and how far; what the samples could not show (a sort that spills
//! only at full size, copies narrower than the table) is said as a confounder.

use super::own_table::ProjectionLine;
use super::report::IndexBuildReport;
use super::spec::Order;
use super::summary::{seconds_of, setting_label, settings};
use crate::experiment::lab::decision::format_percent;
use crate::measure::projection::project_nlogn;
use crate::measure::units::{format_bytes, format_count, format_seconds};

/// What the projection says: the lines, the findings that show them, the confounders.
pub struct Projected {
    pub lines: Vec<ProjectionLine>,
    pub findings: Vec<String>,
    pub confounders: Vec<String>,
}

/// Project every setting that ran at two sample sizes or more.
pub fn project(r: &IndexBuildReport) -> Projected {
    let mut out = Projected {
        lines: Vec::new(),
        findings: Vec::new(),
        confounders: Vec::new(),
    };
    let Some(own) = &r.own else {
        return out;
    };
    let samples: Vec<_> = r
        .datasets
        .iter()
        .filter(|d| matches!(d.order, Order::Copy(ppm) if ppm < 1_000_000))
        .collect();
    if samples.len() < 2 {
        return out;
    }
    let Some(n) = own.target_rows(&r.datasets) else {
        return out;
    };
    let how_many = if own.rows_counted {
        format!("{} rows", format_count(n))
    } else {
        format!("≈{} rows by the planner's estimate", format_count(n))
    };
    let spec = &r.params;
    let confidence = spec.decision.confidence;
    for (c, w, m) in settings(spec) {
        let label = setting_label(spec, c, w, &m.text);
        let points: Vec<(f64, f64)> = samples
            .iter()
            .flat_map(|d| {
                seconds_of(r, d.order, (c, w, m.bytes))
                    .into_iter()
                    .map(move |s| (d.rows as f64, s))
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let Some(p) = project_nlogn(&points, n, confidence) else {
            out.findings.push(format!(
                "{label}: no projection to the whole table: the build time did not grow with the sample size (samples this small time mostly fixed costs: use a larger sample)"
            ));
            continue;
        };
        out.findings.push(format!(
            "{label}: projected for the whole table ({how_many}, ×{:.0} the largest sample): {} [{}, {}] ({} prediction interval of one build; {} fitted to {} builds at {} sample sizes, r² {:.2})",
            p.reach,
            format_seconds(p.value),
            format_seconds(p.low),
            format_seconds(p.high),
            format_percent(p.confidence),
            p.model,
            p.trials,
            p.sizes,
            p.r2
        ));
        if let Some(why) = spill_ahead(r, (c, w, m.bytes), n) {
            out.confounders.push(format!("{label}: {why}"));
        }
        out.lines.push(ProjectionLine {
            setting: label,
            workers: w,
            maintenance_work_mem: m.text.clone(),
            maintenance_work_mem_bytes: m.bytes,
            combo: c,
            projection: p,
        });
    }
    if let Some(why) = narrower_copies(r) {
        out.confounders.push(why);
    }
    out
}

/// When the largest sample sorted in memory but the whole table's sort would not fit in
/// `maintenance_work_mem`: a regime the projection never saw.
fn spill_ahead(r: &IndexBuildReport, (c, w, bytes): (usize, u32, u64), n: f64) -> Option<String> {
    let largest = r
        .datasets
        .iter()
        .filter(|d| matches!(d.order, Order::Copy(_)))
        .max_by_key(|d| d.rows)?;
    let kb = r
        .trials
        .iter()
        .filter(|t| {
            !t.warmup
                && t.order == largest.order
                && t.combo == c
                && t.workers_requested == w
                && t.maintenance_work_mem_bytes == bytes
        })
        .filter_map(|t| {
            t.sort
                .as_deref()?
                .strip_prefix("in-memory sort, ")?
                .split(' ')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))?;
    let need = kb * 1024.0 * n / largest.rows.max(1) as f64;
    (need > bytes as f64).then(|| {
        format!(
            "the largest sample sorted in memory, but the whole table's sort needs about {} and maintenance_work_mem is {}: its build will sort on disk, which no sample showed, so expect it slower than projected",
            format_bytes(need as u64),
            format_bytes(bytes)
        )
    })
}

/// Copies that hold only the indexed columns scan fewer bytes per row than the table.
fn narrower_copies(r: &IndexBuildReport) -> Option<String> {
    let own = r.own.as_ref()?;
    if own.on_sandbox {
        return None;
    }
    let table_rows = own.rows? as f64;
    let copy = r
        .datasets
        .iter()
        .filter(|d| matches!(d.order, Order::Copy(_)) && d.rows > 0)
        .max_by_key(|d| d.rows)?;
    let per_copy = copy.heap_bytes as f64 / copy.rows as f64;
    let per_table = own.heap_bytes as f64 / table_rows.max(1.0);
    let ratio = per_table / per_copy.max(1.0);
    (ratio > 1.2).then(|| {
        format!(
            "the copies hold only the indexed column(s) ({:.0} bytes of heap per row against the table's {:.0}): building on the table scans {ratio:.1}× more per row than the copies did, so it takes longer than measured or projected here",
            per_copy, per_table
        )
    })
}
