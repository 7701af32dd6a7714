//! What the standby charts (`chart_commit`, `chart_over_time`) draw of a growth run that swept
//! a `synchronous_commit` level, the standby's distance or ran a standby fault: one trial per
//! combination of swept settings, with its version writes' COMMIT latency over every step, the
//! rows written per second of its write phases laid end to end (as `experiment::growth::commits`
//! defines them, so its stall seconds are the table's), and the first fault that happened
//! beside it, moved onto those seconds. A run without such an axis has no trial: the growth
//! writes of one configuration have nothing to compare.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::experiment::growth::{GrowthReport, StepCommits, WriteTiming};
use crate::experiment::ingest::SyncCommit;
use crate::experiment::lab::commit_cost::stalls_of;
use crate::experiment::lab::standby_fault::FaultWindow;
use crate::experiment::lab::standby_fields::SYNC_COMMIT;
use crate::experiment::lab::standby_rtt;

use super::chart_load::{LoadCharts, LoadTrial, varying};
use super::chart_plot::Marker;

/// The commit chart's y axis for growth.
pub(crate) const GROWTH_COMMIT_AXIS: &str = "time of a version write's COMMIT (log scale)";
/// The chart over time's y axis for growth.
pub(crate) const WRITTEN_AXIS: &str = "rows written per second of the write phases, end to end";

/// The run swept the level or the distance, or ran a standby fault.
fn load_axis(b: &GrowthReport) -> bool {
    b.params.fault.is_some()
        || b.params
            .set
            .items
            .iter()
            .any(|i| i.name == SYNC_COMMIT || i.name == standby_rtt::NAME)
}

/// Seconds `at` of a write round's clock (from the start of its turn) on the clock of the
/// write phases laid end to end, whose round starts at `offset`: the time its writes had run by
/// then (gaps between writes count for nothing).
fn on_writes_clock(at: f64, offset: f64, round: &[&WriteTiming]) -> f64 {
    offset
        + round
            .iter()
            .map(|w| (at - w.at_s).clamp(0.0, w.seconds.max(0.0)))
            .sum::<f64>()
}

/// The first fault of these steps that happened, its window moved onto the clock of their
/// writes laid end to end.
fn fault_on_series(steps: &[&StepCommits]) -> Option<FaultWindow> {
    let mut offset = 0.0;
    for s in steps {
        if let Some(f) = s.fault.as_ref()
            && let (Some(from), Some(to)) = (f.window.from_s, f.window.to_s)
        {
            let before: f64 = s
                .writes
                .iter()
                .take_while(|w| w.round < f.round)
                .map(|w| w.seconds.max(0.0))
                .sum();
            let round: Vec<&WriteTiming> = s.writes.iter().filter(|w| w.round == f.round).collect();
            return Some(FaultWindow {
                from_s: Some(on_writes_clock(from, offset + before, &round)),
                to_s: Some(on_writes_clock(to, offset + before, &round)),
                ..f.window.clone()
            });
        }
        offset += s.writes.iter().map(|w| w.seconds.max(0.0)).sum::<f64>();
    }
    None
}

/// One combination's trial (None: it wrote nothing).
fn combo_trial<'a>(
    steps: &[&'a StepCommits],
    all: &[&'a BTreeMap<String, String>],
) -> Option<LoadTrial<'a>> {
    let first = steps.first()?;
    let writes: Vec<WriteTiming> = steps
        .iter()
        .flat_map(|s| s.writes.iter().cloned())
        .collect();
    let latency = crate::experiment::growth::commit_ms(&writes)?;
    let series = crate::experiment::growth::rows_per_second(&writes);
    let level = first
        .settings
        .get(SYNC_COMMIT)
        .and_then(|l| SyncCommit::parse(l).ok());
    let config = varying(&first.settings, all.iter().copied());
    let mut parts: Vec<String> = level
        .iter()
        .map(|l| format!("sync {}", l.as_str()))
        .collect();
    parts.extend(config.iter().cloned());
    Some(LoadTrial {
        name: match parts.is_empty() {
            true => "version writes".to_string(),
            false => parts.join(" · "),
        },
        config,
        level,
        latency,
        rtt: first.settings.get(standby_rtt::NAME).map(String::as_str),
        stall_seconds: stalls_of(&series).0,
        series: Cow::Owned(series),
        decay_pct: None,
        fault: fault_on_series(steps).map(Cow::Owned),
        marker: Marker::Circle,
    })
}

/// A growth report's combinations as trials, in the sweep's order (none without a load axis).
pub(crate) fn of_growth(b: &GrowthReport) -> LoadCharts<'_> {
    let mut combos: Vec<usize> = b.commits.iter().map(|s| s.combo).collect();
    combos.sort_unstable();
    combos.dedup();
    let firsts: Vec<&BTreeMap<String, String>> = combos
        .iter()
        .filter_map(|c| b.commits.iter().find(|s| s.combo == *c))
        .map(|s| &s.settings)
        .collect();
    let trials = match load_axis(b) {
        true => combos
            .iter()
            .filter_map(|c| {
                let steps: Vec<&StepCommits> = b.commits.iter().filter(|s| s.combo == *c).collect();
                combo_trial(&steps, &firsts)
            })
            .collect(),
        false => Vec::new(),
    };
    LoadCharts {
        commit_caption:
            "growth: COMMIT latency by synchronous_commit (a version write's COMMIT, every step)"
                .into(),
        commit_axis: GROWTH_COMMIT_AXIS,
        experiment: "growth",
        rate: "rows/s",
        rate_axis: WRITTEN_AXIS,
        stalled: "no row was written",
        confidence: b.params.decision.confidence,
        titles: [
            "COMMIT latency of a version write by synchronous_commit level",
            "Rows per second of the version writes, stalls and standby faults marked",
        ],
        trials,
    }
}
