//! growth result tables in reading order, with units and human numbers: every step of every
//! design (measured or projected: rows, write and read time, sizes, bytes per row), the
//! timings as medians with their intervals, and ranges against snapshot in the verdict
//! vocabulary. The stored record's raw fields stay in JSON and CSV.

use crate::experiment::growth::{GrowthReport, GrowthStep, StepProjection, Timed};
use crate::measure::fit::Projected;
use crate::measure::units::{format_bytes_short, format_count, format_seconds};

use super::charts::Chart;
use super::content::Content;
use super::grid::Grid;
use super::kind_view::KindView;
use crate::experiment::RunReport;
use crate::experiment::lab::findings::Decided;

/// Seconds for a table cell, sub-millisecond reads still readable.
pub(crate) fn time(s: f64) -> String {
    if s < 0.001 {
        format!("{:.2} ms", s * 1000.0)
    } else if s < 0.01 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format_seconds(s)
    }
}

pub(crate) fn size(b: u64) -> String {
    format_bytes_short(b as f64)
}

/// Bytes per row of a part of a step ("77 B"), or "–" for an empty table.
pub(crate) fn per_row(bytes: u64, s: &GrowthStep) -> String {
    if s.rows == 0 {
        "–".into()
    } else {
        format!("{:.0} B", bytes as f64 / s.rows as f64)
    }
}

/// "write", "read", "read cold".
pub(crate) fn timed_name(t: Timed) -> &'static str {
    match t {
        Timed::Write => "write",
        Timed::Read => "read",
        Timed::ReadCold => "read cold",
    }
}

fn opt_time(v: Option<f64>) -> String {
    v.map(time).unwrap_or_else(|| "–".into())
}

/// Steps in the order a reader follows them: by design, then versions.
pub(crate) fn ordered(b: &GrowthReport) -> Vec<&GrowthStep> {
    let mut v: Vec<&GrowthStep> = b.steps.iter().collect();
    v.sort_by_key(|s| (s.design, s.versions, s.combo));
    v
}

/// The growth tables in reading order: every step, the timings with their intervals, and
/// ranges against snapshot (each only when it has rows).
pub(crate) fn grids(b: &GrowthReport) -> Vec<Grid> {
    [
        steps_grid(b),
        timings_grid(b),
        comparison_grid(b),
        super::growth_commits::commits_grid(b),
    ]
    .into_iter()
    .filter(|g| !g.rows.is_empty())
    .collect()
}

/// Every step of every design, measured or projected: rows, times, sizes and bytes per row
/// (and the settings, when the run swept some).
fn steps_grid(b: &GrowthReport) -> Grid {
    let mut steps = Grid::new(
        "Steps (projected rows are carried along the measured ones' growth, times with their interval)",
        &[
            ("design", false),
            ("versions", true),
            ("rows", true),
            ("", false),
            ("write one version", true),
            ("read one version", true),
            ("read cold", true),
            ("table", true),
            ("indexes", true),
            ("table per row", true),
            ("indexes per row", true),
            ("each index", false),
        ],
    );
    for s in ordered(b) {
        steps.rows.push(step_row(b, s));
    }
    if !b.params.set.is_empty() {
        steps.with_column(
            "settings",
            ordered(b)
                .into_iter()
                .map(|s| super::index_build::shown(&s.settings)),
        );
    }
    steps
}

/// One step as a row of the steps table; a projected time carries its interval and the row
/// says how far it was carried.
fn step_row(b: &GrowthReport, s: &GrowthStep) -> Vec<String> {
    let each: Vec<String> = s
        .index_bytes
        .iter()
        .map(|(k, v)| format!("{k} {}", size(*v)))
        .collect();
    // A projected time carries its interval; the row says how far it was carried.
    let p = b.projection(s);
    let timed = |v: Option<f64>, pick: &dyn Fn(&StepProjection) -> Option<Projected>| match p
        .as_ref()
        .and_then(pick)
    {
        Some(x) => x.show(&time),
        None => opt_time(v),
    };
    vec![
        s.design.as_str().into(),
        format_count(s.versions as f64),
        format_count(s.rows as f64),
        match &p {
            Some(p) => p.words(),
            None => "measured".into(),
        },
        timed(s.write_seconds, &|p| p.write),
        timed(s.read_seconds, &|p| p.read),
        opt_time(s.read_cold_seconds),
        size(s.table_bytes),
        size(s.index_total()),
        per_row(s.table_bytes, s),
        per_row(s.index_total(), s),
        each.join(" · "),
    ]
}

/// Each design's timings per step: the median over the repeats and its interval (and the
/// settings, when the run swept some).
fn timings_grid(b: &GrowthReport) -> Grid {
    let mut est = Grid::new(
        "Timings (median over the repeats, with its interval)",
        &[
            ("design", false),
            ("versions", true),
            ("timing", false),
            ("trials", true),
            ("median", true),
            ("interval", true),
        ],
    );
    for e in &b.summary.estimates {
        est.rows.push(vec![
            e.design.as_str().into(),
            format_count(e.versions as f64),
            timed_name(e.timed).into(),
            e.seconds.n.to_string(),
            time(e.seconds.median),
            if e.seconds.n >= 2 {
                format!(
                    "{}–{} ({})",
                    time(e.seconds.ci_low),
                    time(e.seconds.ci_high),
                    crate::measure::wording::format_level(e.seconds.level)
                )
            } else {
                "one trial".into()
            },
        ]);
    }
    if !b.params.set.is_empty() {
        let combos = b.params.set.combos();
        est.with_column(
            "settings",
            b.summary.estimates.iter().map(|e| {
                combos
                    .get(e.combo)
                    .map(crate::experiment::lab::whatif::combo_label)
                    .unwrap_or_default()
            }),
        );
    }
    est
}

/// ranges against snapshot, the most versions first, in the verdict vocabulary.
fn comparison_grid(b: &GrowthReport) -> Grid {
    let mut cmp = Grid::new(
        "ranges against snapshot",
        &[
            ("versions", true),
            ("timing", false),
            ("ranges", true),
            ("snapshot", true),
            ("ratio", true),
            ("interval of the ratio", true),
            ("verdict for ranges", false),
        ],
    );
    let mut comparisons: Vec<_> = b.summary.comparisons.iter().collect();
    comparisons.sort_by_key(|c| std::cmp::Reverse(c.versions));
    for c in comparisons {
        cmp.rows.push(vec![
            format_count(c.versions as f64),
            timed_name(c.timed).into(),
            time(c.ranges_median),
            time(c.snapshot_median),
            format!("{:.2}", c.ratio),
            format!("{:.2}–{:.2}", c.ratio_low, c.ratio_high),
            c.verdict.to_string(),
        ]);
    }
    cmp
}

impl KindView for GrowthReport {
    /// The decision table first, then where each design's indexes would outgrow this host's
    /// RAM, the seed comparison, and the single-server and Citus advice.
    fn add_body(&self, c: &mut Content, report: &RunReport) {
        c.grids = grids(self);
        if let Some(d) = super::growth_advice::decision_grid(report, self) {
            c.grids.insert(0, d);
        }
        c.findings = self.summary.findings.clone();
        let ram = report.host.total_memory;
        for &d in &self.params.designs {
            if let Some(x) = super::growth_advice::ram_crossing(self, d, ram) {
                c.findings.push(format!(
                    "{}: {} ({} of RAM on this host; by the index-size projection)",
                    d.as_str(),
                    super::growth_advice::crossing_text(x),
                    format_bytes_short(ram as f64)
                ));
            }
        }
        c.findings
            .extend(super::growth_seed::seed_comparison(report, self));
        c.confounders = self.summary.confounders.clone();
        c.recommendations = super::growth_advice::recommendations(report, self);
        c.recommendations
            .extend(super::growth_citus::recommendations(report, self));
    }

    fn charts(&self, report: &RunReport) -> Vec<Chart> {
        super::chart_growth::charts(report, self)
    }

    /// Growth's advice is a design and a size, not a setting to apply.
    fn set_lines(&self, _report: &RunReport, _d: &Decided, _rec: &str) -> Vec<String> {
        Vec::new()
    }
}
