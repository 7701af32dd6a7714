//! index-build result tables: the summary (per setting the median, its interval and the
//! verdict against the best of its order) and every trial.

use crate::experiment::index_build::{IndexBuildReport, OrderSummary};
use crate::experiment::lab::decision::format_percent;
use crate::measure::units::{format_bytes, format_seconds};
use crate::measure::verdict::Verdict;

use super::charts::Chart;
use super::content::Content;
use super::grid::Grid;
use super::kind_view::KindView;
use crate::experiment::RunReport;
use crate::experiment::lab::findings::Decided;

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

/// A confidence reached, as `75%` or `96.9%`.
pub(super) fn reached(l: f64) -> String {
    let p = l * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// The "vs best" cell: `best`, the verdict against the best in the core's words, and for a
/// decided difference the ratio of its time to the best's with its interval (`×1.24
/// [×1.10, ×1.40]`).
fn vs_best(o: &OrderSummary, i: usize) -> String {
    let f = &o.finding;
    let s = &f.settings[i];
    match &s.vs_best {
        None if s.estimate.is_some() && f.settings.len() > 1 => {
            if f.winner.as_ref() == Some(&s.label) {
                "best (faster)".into()
            } else {
                "best".into()
            }
        }
        None => String::new(),
        Some(c) => match c.verdict {
            Verdict::Slower | Verdict::Faster => format!(
                "{} {}",
                c.verdict,
                crate::measure::wording::format_ratio_interval(c.ratio, c.ratio_low, c.ratio_high)
            ),
            v => v.to_string(),
        },
    }
}

/// Swept settings as SHOW reported them: `shared_buffers=256MB max_wal_size=2GB`.
pub(crate) fn shown(settings: &std::collections::BTreeMap<String, String>) -> String {
    settings
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The index-build tables in reading order: the summary, the datasets, the projections to a
/// whole table, and every trial (each only when it has rows).
pub(crate) fn grids(b: &IndexBuildReport) -> Vec<Grid> {
    let mut out = Vec::new();
    let summary = summary_grid(b);
    if !summary.rows.is_empty() {
        out.push(summary);
    }
    if !b.datasets.is_empty() {
        out.push(datasets_grid(b));
    }
    if let Some(p) = projections(b) {
        out.push(p);
    }
    let trials = trials_grid(b);
    if !trials.rows.is_empty() {
        out.push(trials);
    }
    out
}

/// Per setting of each order: the median and its interval, the level reached and the verdict
/// against the best, at the level the title names (and the settings, when the run swept some).
fn summary_grid(b: &IndexBuildReport) -> Grid {
    let level = verdict_level(b);
    let mut summary = Grid::new(
        &format!(
            "Summary (seconds: median and its interval over the repeats, reached level beside it; verdicts at {level})"
        ),
        &[
            ("order", false),
            ("workers", true),
            ("maintenance_work_mem", true),
            ("n", true),
            ("median", true),
            ("interval", true),
            ("reached", true),
            ("vs best", false),
        ],
    );
    let mut summary_settings = Vec::new();
    for o in &b.summary.orders {
        for (i, (r, s)) in o.settings.iter().zip(&o.finding.settings).enumerate() {
            let Some(e) = s.estimate else { continue };
            summary_settings.push(crate::experiment::lab::whatif::combo_label(&r.settings));
            let noisy = b
                .summary
                .groups
                .iter()
                .filter(|g| g.order == o.order && g.workers == r.workers)
                .flat_map(|g| &g.by_mwm)
                .any(|m| m.maintenance_work_mem_bytes == r.maintenance_work_mem_bytes && m.noisy);
            let vs = vs_best(o, i);
            summary.rows.push(vec![
                o.order.name(),
                r.workers.to_string(),
                r.maintenance_work_mem.clone(),
                e.n.to_string(),
                secs(e.median),
                format!("{}..{}", secs(e.ci_low), secs(e.ci_high)),
                reached(e.level),
                match (noisy, vs.is_empty()) {
                    (true, true) => "(noisy)".into(),
                    (true, false) => format!("{vs} (noisy)"),
                    _ => vs,
                },
            ]);
        }
    }
    if !b.params.set.is_empty() {
        summary.with_column("settings", summary_settings);
    }
    summary
}

/// The level the summary's verdicts are at: every order of a run compares the same settings,
/// so one family says it (else the confidence asked for).
fn verdict_level(b: &IndexBuildReport) -> String {
    b.summary
        .orders
        .iter()
        .map(|o| o.finding.level_words())
        .max_by_key(|w| w.len())
        .unwrap_or_else(|| {
            format!(
                "{} confidence",
                format_percent(b.params.decision.confidence)
            )
        })
}

/// Every trial: its setting, repeat (or warm-up), time, index size, temp written and sort
/// (and the settings as SHOW reported them, when the run swept some).
fn trials_grid(b: &IndexBuildReport) -> Grid {
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
    if !b.params.set.is_empty() {
        trials.with_column("settings", b.trials.iter().map(|t| shown(&t.settings)));
    }
    trials
}

/// The tables the run built its indexes on: rows, heap, correlation and how long each took
/// to make (or that it was reused).
fn datasets_grid(b: &IndexBuildReport) -> Grid {
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
    ds
}

/// A sampled run on an existing table: each setting's build time projected to the whole
/// table, said to be projected in the title and in every row.
fn projections(b: &IndexBuildReport) -> Option<Grid> {
    let own = b.own.as_ref().filter(|o| !o.projections.is_empty())?;
    let mut g = Grid::new(
        &format!(
            "Projected to the whole of {} (fitted to the samples, not measured)",
            own.table
        ),
        &[
            ("setting", false),
            ("rows", true),
            ("projected s", true),
            ("interval", true),
            ("level", true),
            ("fit", false),
            ("beyond largest sample", true),
        ],
    );
    for l in &own.projections {
        let p = &l.projection;
        g.rows.push(vec![
            l.setting.clone(),
            crate::measure::units::format_count(p.to_n),
            format!("{} (projected)", secs(p.value)),
            format!("{}..{}", secs(p.low), secs(p.high)),
            format_percent(p.confidence),
            format!(
                "{}, {} builds at {} sizes, r² {:.2}",
                p.model, p.trials, p.sizes, p.r2
            ),
            format!("×{:.0}", p.reach),
        ]);
    }
    Some(g)
}

impl KindView for IndexBuildReport {
    fn add_body(&self, c: &mut Content, report: &RunReport) {
        // Which data the run measured: an imported table says where it came from.
        if let Some(o) = &self.own {
            c.run.push((
                "data".into(),
                match &o.imported {
                    Some(rec) => rec.describe(),
                    None => format!(
                        "{} ({}), built on {}",
                        o.table,
                        o.columns.join(", "),
                        o.built_on
                    ),
                },
            ));
        }
        c.grids = grids(self);
        c.findings = self.summary.findings.clone();
        c.confounders = self.summary.confounders.clone();
        c.recommendations = super::recommend::index_build_recommendations(report, self);
    }

    fn charts(&self, report: &RunReport) -> Vec<Chart> {
        super::chart::svg(report)
            .map(|svg| Chart {
                suffix: String::new(),
                title: "CREATE INDEX time by maintenance_work_mem".into(),
                svg,
            })
            .into_iter()
            .collect()
    }

    fn set_lines(&self, report: &RunReport, d: &Decided, _rec: &str) -> Vec<String> {
        self.summary
            .orders
            .iter()
            .find(|o| o.order.name() == d.question)
            .map(|o| super::recommend::order_sql(report, self, o))
            .unwrap_or_default()
    }
}
