//! What the standby charts (`chart_commit`, `chart_over_time`) draw, taken from an ingest or a
//! query report (a growth report's in `chart_load_growth`): per trial its configuration but the
//! level (the group it joins), its `synchronous_commit` level, its latency percentiles, its
//! per-second series with its stall seconds, and the standby fault's window; per report the
//! words the charts say it in (rows or transactions, a batch or a statement). The charts know
//! nothing else of the reports.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::experiment::ingest::{IngestReport, IngestTrial, LatencyMs, Method, SyncCommit};
use crate::experiment::lab::standby_fault::FaultWindow;
use crate::experiment::lab::standby_fields::SYNC_COMMIT;
use crate::experiment::lab::standby_rtt;
use crate::experiment::query::{QueryReport, QueryTrial, clients_name};
use crate::measure::units::{format_count, format_seconds};

use super::chart_ingest::{curve_name, marker};
use super::chart_plot::Marker;
use super::charts::Chart;

/// One trial as the charts see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadTrial<'a> {
    /// Its configuration but the level, a line each part (`4 clients`, `RTT 2ms`): trials with
    /// the same lines are one group of the commit latency chart.
    pub config: Vec<String>,
    /// Its `synchronous_commit` (None: the run did not set it; not in the commit chart).
    pub level: Option<SyncCommit>,
    /// Its latency percentiles, ms (p50 0: nothing timed).
    pub latency: LatencyMs,
    /// The standby's emulated round trip it ran at, when the run swept it.
    pub rtt: Option<&'a str>,
    /// Rows (or transactions) per second in each second of the trial.
    pub series: Cow<'a, [f64]>,
    pub stall_seconds: u32,
    /// How much slower its last quarter ran than its first, in percent.
    pub decay_pct: Option<f64>,
    /// The standby fault's window, in the seconds of `series`.
    pub fault: Option<Cow<'a, FaultWindow>>,
    /// Its name in the legend of the chart over time.
    pub name: String,
    pub marker: Marker,
}

/// A report's trials and its words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadCharts<'a> {
    /// `ingest: commit latency by synchronous_commit (…)`.
    pub commit_caption: String,
    /// The commit chart's y axis.
    pub commit_axis: &'static str,
    /// `ingest`, `query`: the chart over time's caption starts with it.
    pub experiment: &'static str,
    /// `rows/s`, `transactions/s`.
    pub rate: &'static str,
    /// The y axis of the chart over time.
    pub rate_axis: &'static str,
    /// What a stalled second lacked: `nothing committed`.
    pub stalled: &'static str,
    pub confidence: f64,
    /// The titles of the two charts in the Markdown: commit latency, over time.
    pub titles: [&'static str; 2],
    pub trials: Vec<LoadTrial<'a>>,
}

impl LoadCharts<'_> {
    /// The two charts, where they have their data: `-commit-latency` when the run varied
    /// the level or the distance, `-over-time` when trials recorded a series.
    pub(crate) fn charts(&self) -> Vec<Chart> {
        [
            ("-commit-latency", super::chart_commit::svg(self)),
            ("-over-time", super::chart_over_time::svg(self)),
        ]
        .into_iter()
        .zip(self.titles)
        .filter_map(|((suffix, svg), title)| {
            Some(Chart {
                suffix: suffix.into(),
                title: title.into(),
                svg: svg?,
            })
        })
        .collect()
    }
}

pub const INGEST_COMMIT_AXIS: &str = "time of one batch and its commit (log scale)";
pub(crate) const QUERY_COMMIT_AXIS: &str =
    "time of one statement, an autocommit one with its commit (log scale)";
pub(crate) const ROWS_AXIS: &str = "rows loaded per second";
pub(crate) const TRANSACTIONS_AXIS: &str = "transactions finished per second";

/// The swept settings of `mine` whose value varies among `all` (one the whole run had, such
/// as the synchronous_standby_names a run sets, tells the trials apart no more), each as
/// `RTT 2ms` or `name=value`; `synchronous_commit` left out (the level is said apart).
pub(crate) fn varying<'a>(
    mine: &BTreeMap<String, String>,
    all: impl Iterator<Item = &'a BTreeMap<String, String>> + Clone,
) -> Vec<String> {
    mine.iter()
        .filter(|(n, _)| n.as_str() != SYNC_COMMIT)
        .filter(|(n, v)| all.clone().any(|o| o.get(*n) != Some(*v)))
        .map(|(n, v)| match n.as_str() {
            standby_rtt::NAME => format!("RTT {v}"),
            _ => format!("{n}={v}"),
        })
        .collect()
}

/// An ingest trial: its group named by method and batch (when `many_methods`), clients and
/// the swept settings that differ among `all`.
fn ingest_trial<'a>(
    t: &'a IngestTrial,
    all: &'a [IngestTrial],
    many_methods: bool,
) -> LoadTrial<'a> {
    let mut config = Vec::new();
    if many_methods {
        config.push(format!("{} · batch {}", t.method.as_str(), t.batch));
    }
    config.push(clients_name(t.clients));
    let settings = varying(&t.settings, all.iter().map(|o| &o.settings));
    config.extend(settings.iter().cloned());
    let mut name = format!(
        "{} · batch {} · #{}",
        curve_name((t.method, t.clients, t.synchronous_commit)),
        t.batch,
        t.repeat
    );
    for s in settings {
        name.push_str(&format!(" · {s}"));
    }
    LoadTrial {
        config,
        level: Some(t.synchronous_commit),
        latency: t.latency_ms,
        rtt: t.settings.get(standby_rtt::NAME).map(String::as_str),
        series: Cow::Borrowed(&t.series),
        stall_seconds: t.stall_seconds,
        decay_pct: t.decay_pct,
        fault: t.fault.as_ref().map(Cow::Borrowed),
        name,
        marker: marker(t.method),
    }
}

/// An ingest report's trials and words.
pub(crate) fn of_ingest(b: &IngestReport) -> LoadCharts<'_> {
    let timed = || b.trials.iter().filter(|t| t.latency_ms.p50 > 0.0);
    let first = timed().next().map(|t| (t.method, t.batch));
    let many_methods = timed().any(|t| Some((t.method, t.batch)) != first);
    let what = if b.trials.iter().all(|t| t.method == Method::Insert) {
        "one row per commit"
    } else {
        "a batch and its commit"
    };
    LoadCharts {
        commit_caption: format!(
            "ingest: commit latency by synchronous_commit ({what}, {} rows per trial)",
            format_count(b.params.rows as f64)
        ),
        commit_axis: INGEST_COMMIT_AXIS,
        experiment: "ingest",
        rate: "rows/s",
        rate_axis: ROWS_AXIS,
        stalled: "nothing committed",
        confidence: b.params.decision.confidence,
        titles: [
            "Commit latency by synchronous_commit level",
            "Rows per second during the trials, stalls and standby faults marked",
        ],
        trials: b
            .trials
            .iter()
            .map(|t| ingest_trial(t, &b.trials, many_methods))
            .collect(),
    }
}

/// A query throughput trial: its group named by clients, candidate index and the swept
/// settings but the level that differ among `all` (None: no load record).
fn query_trial<'a>(
    b: &QueryReport,
    t: &'a QueryTrial,
    all: &[&'a QueryTrial],
) -> Option<LoadTrial<'a>> {
    let load = t.load.as_ref()?;
    let level = t
        .settings
        .get(SYNC_COMMIT)
        .and_then(|l| SyncCommit::parse(l).ok());
    let mut config = vec![t.name.clone()];
    match b.params.split_combo(t.combo).0 {
        0 => {}
        v => config.push(format!("index {v}")),
    }
    config.extend(varying(&t.settings, all.iter().map(|o| &o.settings)));
    let mut name = config[0].clone();
    if let Some(l) = level {
        name.push_str(&format!(" · sync {}", l.as_str()));
    }
    name.push_str(&format!(" · #{}", t.repeat));
    for part in &config[1..] {
        name.push_str(&format!(" · {part}"));
    }
    Some(LoadTrial {
        config,
        level,
        latency: load.statement_ms,
        rtt: t.settings.get(standby_rtt::NAME).map(String::as_str),
        series: Cow::Borrowed(&load.shape.series),
        stall_seconds: load.shape.stall_seconds,
        decay_pct: None,
        fault: load.fault.as_ref().map(Cow::Borrowed),
        name,
        marker: Marker::Circle,
    })
}

/// A query report's throughput trials (those with a load record): grouped by clients,
/// candidate index and the swept settings that differ but the level.
pub(crate) fn of_query(b: &QueryReport) -> LoadCharts<'_> {
    let loaded: Vec<&QueryTrial> = b.trials.iter().filter(|t| t.load.is_some()).collect();
    let trials = loaded
        .iter()
        .filter_map(|t| query_trial(b, t, &loaded))
        .collect();
    LoadCharts {
        commit_caption: format!(
            "query: statement latency by synchronous_commit (every execution, {} per trial)",
            format_seconds(b.params.duration_s)
        ),
        commit_axis: QUERY_COMMIT_AXIS,
        experiment: "query",
        rate: "transactions/s",
        rate_axis: TRANSACTIONS_AXIS,
        stalled: "no transaction finished",
        confidence: b.params.decision.confidence,
        titles: [
            "Statement latency by synchronous_commit level",
            "Transactions per second during the trials, stalls and standby faults marked",
        ],
        trials,
    }
}
