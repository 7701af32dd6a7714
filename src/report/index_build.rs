//! index-build result tables: the summary (median per setting, how far from the best) and
//! every trial.

use crate::experiment::index_build::IndexBuildReport;
use crate::measure::units::{format_bytes, format_seconds};

use super::grid::Grid;

/// Seconds in a table cell: milliseconds visible for short builds.
fn secs(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

fn bytes(b: i64) -> String {
    if b < 0 {
        "–".into()
    } else {
        format_bytes(b as u64)
    }
}

pub fn grids(b: &IndexBuildReport) -> Vec<Grid> {
    let mut summary = Grid::new(
        "Summary (seconds, over the repeats)",
        &[
            ("order", false),
            ("workers", true),
            ("maintenance_work_mem", true),
            ("median", true),
            ("min", true),
            ("max", true),
            ("n", true),
            ("vs best", true),
        ],
    );
    for g in &b.summary.groups {
        for m in &g.by_mwm {
            let vs = if m.maintenance_work_mem == g.best_mwm {
                "best".to_string()
            } else if g.best_seconds > 0.0 {
                format!("{:+.0}%", (m.median / g.best_seconds - 1.0) * 100.0)
            } else {
                String::new()
            };
            summary.rows.push(vec![
                g.order.name(),
                g.workers.to_string(),
                m.maintenance_work_mem.clone(),
                secs(m.median),
                secs(m.min),
                secs(m.max),
                m.n.to_string(),
                if m.noisy { format!("{vs} (noisy)") } else { vs },
            ]);
        }
    }
    let mut trials = Grid::new(
        "Trials",
        &[
            ("#", true),
            ("order", false),
            ("workers", true),
            ("maintenance_work_mem", true),
            ("repeat", true),
            ("seconds", true),
            ("index", true),
            ("temp written", true),
            ("sort", false),
        ],
    );
    for (i, t) in b.trials.iter().enumerate() {
        let workers = if t.workers_launched == t.workers_requested {
            t.workers_requested.to_string()
        } else {
            format!("{} of {}", t.workers_launched, t.workers_requested)
        };
        trials.rows.push(vec![
            (i + 1).to_string(),
            t.order.name(),
            workers,
            t.maintenance_work_mem.clone(),
            if t.warmup {
                "warm-up".into()
            } else {
                t.repeat.to_string()
            },
            format!("{:.3}", t.seconds),
            bytes(t.index_bytes),
            bytes(t.temp_bytes),
            t.sort.clone().unwrap_or_default(),
        ]);
    }
    let mut out = Vec::new();
    if !summary.rows.is_empty() {
        out.push(summary);
    }
    if !b.datasets.is_empty() {
        let mut ds = Grid::new(
            "Datasets",
            &[
                ("table", false),
                ("order", false),
                ("rows", true),
                ("heap", true),
                ("correlation", true),
                ("made in", true),
            ],
        );
        for d in &b.datasets {
            ds.rows.push(vec![
                d.table.clone(),
                d.order.name(),
                crate::measure::units::format_count(d.rows as f64),
                bytes(d.heap_bytes),
                d.correlation.map(|c| format!("{c:.3}")).unwrap_or_default(),
                if d.reused {
                    "reused".into()
                } else {
                    format_seconds(d.generate_seconds)
                },
            ]);
        }
        out.push(ds);
    }
    if !trials.rows.is_empty() {
        out.push(trials);
    }
    out
}
