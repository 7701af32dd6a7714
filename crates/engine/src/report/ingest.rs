//! ingest result tables in reading order, with units and human numbers: rows/s per
//! configuration (median and interval over the repeats, its place on its batch curve), the
//! batch curves' knees, and every trial. The stored record's raw fields stay in JSON and CSV.

use crate::experiment::ingest::{ConfigStat, IngestReport, IngestTrial, Question};
use crate::measure::stats::median;
use crate::measure::units::{format_bytes_short, format_count};
use crate::measure::verdict::Verdict;

use super::charts::Chart;
use super::content::Content;
use super::grid::Grid;
use super::kind_view::KindView;
use crate::experiment::RunReport;
use crate::experiment::lab::findings::Decided;

/// rows/s as people read them: "812", "16.1k".
pub(crate) fn rate(v: f64) -> String {
    format_count(v.round())
}

/// Milliseconds with the precision their size needs.
pub(crate) fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// The trials of one configuration.
pub(crate) fn trials_of<'a>(b: &'a IngestReport, c: &ConfigStat) -> Vec<&'a IngestTrial> {
    b.trials
        .iter()
        .filter(|t| t.config() == c.config())
        .collect()
}

/// Median of a per-trial value over a configuration's trials.
pub(crate) fn median_of(trials: &[&IngestTrial], f: impl Fn(&IngestTrial) -> f64) -> Option<f64> {
    let v: Vec<f64> = trials.iter().map(|t| f(t)).collect();
    median(&v)
}

/// Where a configuration stands on its batch curve: best, knee, shown as good as the best,
/// below it, or undecided (with about how many trials would decide).
fn on_curve(b: &IngestReport, c: &ConfigStat) -> String {
    let Some(g) = b.summary.groups.iter().find(|g| {
        g.question == Question::Batch
            && g.method == Some(c.method)
            && g.clients == Some(c.clients)
            && g.synchronous_commit == Some(c.synchronous_commit)
    }) else {
        return String::new();
    };
    let label = c.batch.to_string();
    let Some(s) = g.settings.iter().find(|s| s.label == label) else {
        return String::new();
    };
    let knee = b.summary.knees.iter().any(|k| {
        k.method == c.method
            && k.clients == c.clients
            && k.synchronous_commit == c.synchronous_commit
            && k.knee_batch == Some(c.batch)
    });
    let mut marks = Vec::new();
    if g.best.as_deref() == Some(label.as_str()) {
        marks.push("best".to_string());
    } else {
        match (s.verdict, s.ratio) {
            (Some(Verdict::Slower), Some(r)) => {
                marks.push(format!("slower ({:.0}% of best)", r * 100.0))
            }
            (Some(Verdict::NoSignificantDifference), _) => {
                marks.push("as good as the best (no significant difference)".into())
            }
            (Some(Verdict::TooFewTrials), _) => marks.push(match s.trials_needed {
                Some(n) => format!("undecided: too few trials (about {n} each would decide)"),
                None => "undecided: too few trials".into(),
            }),
            _ => {}
        }
    }
    if knee {
        marks.push("knee".into());
    }
    marks.join(", ")
}

/// The ingest tables in reading order (configurations, batch curves, trials), each only when
/// it has rows.
pub(crate) fn grids(b: &IngestReport) -> Vec<Grid> {
    [configs_grid(b), knees_grid(b), trials_grid(b)]
        .into_iter()
        .filter(|g| !g.rows.is_empty())
        .collect()
}

/// Rows/s per configuration: median, interval, batch latencies, WAL and its place on its
/// batch curve (and the settings, when the run swept some).
fn configs_grid(b: &IngestReport) -> Grid {
    let mut configs = Grid::new(
        "Rows per second by configuration (median over the repeats)",
        &[
            ("method", false),
            ("batch", true),
            ("clients", true),
            ("synchronous_commit", false),
            ("trials", true),
            ("rows/s", true),
            ("interval", true),
            ("batch p50", true),
            ("batch p99", true),
            ("WAL per row", true),
            ("on its batch curve", false),
        ],
    );
    for c in &b.summary.configs {
        let t = trials_of(b, c);
        let lat = |f: fn(&IngestTrial) -> f64| median_of(&t, f).map(ms).unwrap_or_default();
        configs.rows.push(vec![
            c.method.as_str().into(),
            c.batch.to_string(),
            c.clients.to_string(),
            c.synchronous_commit.as_str().into(),
            c.rows_per_s.n.to_string(),
            rate(c.rows_per_s.median),
            if c.rows_per_s.n >= 2 {
                format!(
                    "{}–{} ({})",
                    rate(c.rows_per_s.ci_low),
                    rate(c.rows_per_s.ci_high),
                    crate::measure::wording::format_level(c.rows_per_s.level)
                )
            } else {
                "one trial".into()
            },
            lat(|t| t.latency_ms.p50),
            lat(|t| t.latency_ms.p99),
            median_of(&t, |t| t.wal_bytes_per_row)
                .map(|w| format!("{w:.0} B"))
                .unwrap_or_default(),
            on_curve(b, c),
        ]);
    }
    if !b.params.set.is_empty() {
        configs.with_column(
            "settings",
            b.summary.configs.iter().map(|c| c.settings.clone()),
        );
    }
    configs
}

/// Each batch curve: its highest median, its knee and why.
fn knees_grid(b: &IngestReport) -> Grid {
    let mut knees = Grid::new(
        "Batch curves",
        &[
            ("curve", false),
            ("highest median at batch", true),
            ("rows/s", true),
            ("knee", true),
            ("rows/s at knee", true),
            ("why", false),
        ],
    );
    for k in &b.summary.knees {
        knees.rows.push(vec![
            k.series.clone(),
            k.best_batch.to_string(),
            rate(k.best_rows_per_s),
            k.knee_batch.map(|b| b.to_string()).unwrap_or("–".into()),
            k.knee_rows_per_s.map(rate).unwrap_or_default(),
            k.knee_note.clone(),
        ]);
    }
    knees
}

/// Every trial in the order it ran (with checkpoints during it when any happened, and the
/// settings when the run swept some).
fn trials_grid(b: &IngestReport) -> Grid {
    let mut trials = Grid::new(
        "Trials",
        &[
            ("#", true),
            ("method", false),
            ("batch", true),
            ("clients", true),
            ("synchronous_commit", false),
            ("repeat", true),
            ("rows", true),
            ("time", true),
            ("rows/s", true),
            ("batch p50", true),
            ("batch p99", true),
            ("commits/s", true),
            ("WAL per row", true),
            ("pglab CPU", true),
            ("host CPU", true),
            ("table after", true),
            ("ended by", false),
        ],
    );
    for (i, t) in b.trials.iter().enumerate() {
        trials.rows.push(trial_row(b, i, t));
    }
    if b.trials
        .iter()
        .any(|t| t.checkpoints_during.is_some_and(|c| c > 0))
    {
        trials.with_column(
            "checkpoints during",
            b.trials.iter().map(|t| {
                t.checkpoints_during
                    .map(|c| c.to_string())
                    .unwrap_or_default()
            }),
        );
    }
    if !b.params.set.is_empty() {
        trials.with_column("settings", b.trials.iter().map(|t| t.settings_label()));
    }
    trials
}

/// Trial `i` (from 0) as a row of the trials table.
fn trial_row(b: &IngestReport, i: usize, t: &IngestTrial) -> Vec<String> {
    vec![
        (i + 1).to_string(),
        t.method.as_str().into(),
        t.batch.to_string(),
        t.clients.to_string(),
        t.synchronous_commit.as_str().into(),
        t.repeat.to_string(),
        t.rows_cell(&b.params),
        crate::measure::units::format_seconds(t.seconds),
        rate(t.rows_per_s),
        ms(t.latency_ms.p50),
        ms(t.latency_ms.p99),
        rate(t.commits_per_s),
        format!("{:.0} B", t.wal_bytes_per_row),
        cpu_share(t.client_cpu_s, Some(t.client_cpu_share)),
        cpu_share(t.client_cpu_s, t.host_cpu_share),
        format_bytes_short(t.table_bytes.max(0) as f64),
        match t.stopped_by {
            crate::experiment::ingest::StopReason::Rows => "all rows".into(),
            crate::experiment::ingest::StopReason::Duration => "duration".into(),
        },
    ]
}

/// A CPU share as a percentage; a record from before pglab measured its own CPU has 0 s: no
/// share to show.
fn cpu_share(cpu_s: f64, share: Option<f64>) -> String {
    match share {
        Some(v) if cpu_s > 0.0 => format!("{:.0}%", v * 100.0),
        _ => "–".to_string(),
    }
}

impl KindView for IngestReport {
    fn add_body(&self, c: &mut Content, report: &RunReport) {
        c.grids = grids(self);
        c.findings = self.summary.findings.clone();
        c.confounders = self.summary.confounders.clone();
        c.recommendations = super::ingest_advice::recommendations(report, self);
    }

    fn charts(&self, _report: &RunReport) -> Vec<Chart> {
        super::chart_ingest::charts(self)
    }

    /// `synchronous_commit = off` is the loading session's to set, not the server's.
    fn set_lines(&self, _report: &RunReport, d: &Decided, rec: &str) -> Vec<String> {
        if d.question.ends_with("by sync-commit") && rec == "off" {
            vec!["SET synchronous_commit = off;  -- this loading session only".into()]
        } else {
            Vec::new()
        }
    }
}
