//! The standby charts of an ingest report from hand-made trials: commit latency per
//! synchronous_commit level (a label per level and group, a series per percentile, none when
//! nothing varied) and rows/s over time (points at the middle of their second, a shade per
//! stalled second, the fault's window, none without a series).

use crate::experiment::ingest::{
    IngestReport, IngestSpec, IngestTrial, LatencyMs, Method, SyncCommit, test_trial,
};
use crate::experiment::lab::standby_fault::FaultWindow;

use super::chart_commit::{self, COMMIT_AXIS, LEVEL_AXIS};
use super::chart_load::of_ingest;
use super::chart_over_time::{self, STALL_OPACITY};

fn spec() -> IngestSpec {
    IngestSpec::parse(&crate::experiment::ExperimentKind::Ingest.defaults()).unwrap()
}

/// One trial of single-row commits by `clients` at `sync`, at the standby distance `rtt`
/// (None: not swept), with commit p50 `p50` ms.
fn trial(sync: SyncCommit, clients: u32, rtt: Option<&str>, p50: f64, repeat: u32) -> IngestTrial {
    let mut settings = std::collections::BTreeMap::new();
    if let Some(r) = rtt {
        settings.insert("pglab.standby_rtt".to_string(), r.to_string());
    }
    IngestTrial {
        clients,
        combo: usize::from(rtt == Some("2ms")),
        settings,
        latency_ms: LatencyMs {
            p50,
            p95: p50 * 1.5,
            p99: p50 * 2.0,
            p999: p50 * 4.0,
            max: p50 * 10.0,
        },
        ..test_trial(Method::Insert, 1, sync, 1000.0 / p50, repeat)
    }
}

fn report(trials: Vec<IngestTrial>) -> IngestReport {
    let mut r = IngestReport::new(&spec());
    r.trials = trials;
    r
}

/// Text bodies of the SVG (plotters writes each on a line of its own).
pub(super) fn texts(svg: &str) -> Vec<&str> {
    svg.lines().map(str::trim).collect()
}

/// Every text of the SVG as one line (a legend entry wraps over several).
pub(super) fn said(svg: &str) -> String {
    let lines: Vec<&str> = texts(svg)
        .into_iter()
        .filter(|t| !t.starts_with('<'))
        .collect();
    lines.join(" ")
}

pub(super) fn count(svg: &str, text: &str) -> usize {
    texts(svg).iter().filter(|t| **t == text).count()
}

/// Three levels at two distances, three trials each.
fn swept() -> IngestReport {
    let mut trials = Vec::new();
    for repeat in 1..=3 {
        let jitter = 1.0 + 0.02 * repeat as f64;
        for (rtt, wait) in [("0ms", 0.2), ("2ms", 2.0)] {
            trials.push(trial(
                SyncCommit::Local,
                1,
                Some(rtt),
                0.25 * jitter,
                repeat,
            ));
            trials.push(trial(
                SyncCommit::On,
                1,
                Some(rtt),
                (0.3 + wait) * jitter,
                repeat,
            ));
            trials.push(trial(
                SyncCommit::RemoteApply,
                1,
                Some(rtt),
                (0.35 + wait) * jitter,
                repeat,
            ));
        }
    }
    report(trials)
}

#[test]
fn commit_latency_has_a_label_per_level_and_group_and_a_series_per_percentile() {
    let svg = chart_commit::svg(&of_ingest(&swept())).expect("a chart");
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains(COMMIT_AXIS) && svg.contains(LEVEL_AXIS));
    // Each level once per group (two distances), in the order of what they wait for.
    for level in ["local", "on", "remote_apply"] {
        assert_eq!(count(&svg, level), 2, "{level}");
    }
    let at = |t: &str| svg.find(&format!("\n{t}\n")).unwrap();
    assert!(at("local") < at("on") && at("on") < at("remote_apply"));
    for group in ["RTT 0ms", "RTT 2ms"] {
        assert_eq!(count(&svg, group), 1, "{group}");
    }
    assert_eq!(count(&svg, "1 client"), 2);
    // One legend entry per percentile, whatever the number of groups.
    for p in ["p99", "p99.9", "max"] {
        assert_eq!(count(&svg, p), 1, "{p}");
    }
    assert!(said(&svg).contains("p50, the median"));
    // Ticks in ms on the log axis: 0.1 ms to 100 ms spans p50 0.25 ms to max 24 ms.
    assert!(texts(&svg).contains(&"1 ms") && texts(&svg).contains(&"10 ms"));
}

#[test]
fn a_level_sweep_alone_draws_one_group_and_nothing_varied_draws_none() {
    let levels: Vec<IngestTrial> = [SyncCommit::Off, SyncCommit::Local, SyncCommit::On]
        .into_iter()
        .map(|l| trial(l, 4, None, 0.5, 1))
        .collect();
    let svg = chart_commit::svg(&of_ingest(&report(levels))).expect("levels varied");
    assert_eq!(count(&svg, "4 clients"), 1);
    assert_eq!(count(&svg, "off"), 1);
    // One level and no distance swept: no chart, and none among the report's charts.
    let one = report(vec![trial(SyncCommit::On, 1, None, 0.5, 1)]);
    assert!(chart_commit::svg(&of_ingest(&one)).is_none());
    let charts = super::chart_ingest::charts(&one);
    assert!(charts.iter().all(|c| c.suffix != "-commit-latency"));
    // Trials that timed no commit: nothing to draw.
    let mut untimed = swept();
    for t in &mut untimed.trials {
        t.latency_ms = LatencyMs::default();
    }
    assert!(chart_commit::svg(&of_ingest(&untimed)).is_none());
    // Varied and timed: the report names it `-commit-latency`.
    let charts = super::chart_ingest::charts(&swept());
    assert!(charts.iter().any(|c| c.suffix == "-commit-latency"));
}

/// Rects of the stall shade (the plot's, not the legend's swatch).
pub(super) fn stall_rects(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.trim_start().starts_with("<rect"))
        .filter(|l| l.contains(&format!("opacity=\"{STALL_OPACITY}\"")))
        .count()
}

fn faulted() -> IngestReport {
    let mut on = trial(SyncCommit::On, 1, None, 3.0, 1);
    on.series = vec![330.0, 0.0, 0.0, 310.0, 320.0];
    on.stall_seconds = 2;
    on.fault = Some(FaultWindow {
        fault: "stop-at=1s,for=2s".into(),
        standby: "pglab_standby_1".into(),
        from_s: Some(1.0),
        to_s: Some(3.1),
        caught_up_s: Some(0.1),
        problems: vec![],
    });
    let mut local = trial(SyncCommit::Local, 1, None, 0.3, 1);
    local.series = vec![3300.0, 3000.0, 0.0, 3100.0];
    local.stall_seconds = 1;
    local.fault = on.fault.clone();
    report(vec![local, on])
}

#[test]
fn over_time_shades_each_stalled_second_and_marks_the_fault() {
    let r = faulted();
    let svg = chart_over_time::svg(&of_ingest(&r)).expect("a chart");
    assert_eq!(
        stall_rects(&svg),
        3,
        "two stalled seconds of on, one of local"
    );
    let said = said(&svg);
    assert!(said.contains("nothing committed (3 in all)"), "{said}");
    assert!(
        said.contains("standby fault stop-at=1s,for=2s on pglab_standby_1, from the fault (1.0 s) until the standby was back (3.1 s)"),
        "{said}"
    );
    // Each second's point sits at its middle.
    let load = of_ingest(&r);
    let (trials, all) = chart_over_time::shown(&load);
    assert_eq!(all, 2);
    // The trial that stalled most comes first.
    assert_eq!(trials[0].level, Some(SyncCommit::On));
    let plot = chart_over_time::plot(&load, &trials, all);
    let xs: Vec<f64> = plot.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, [0.5, 1.5, 2.5, 3.5, 4.5]);
}

#[test]
fn over_time_without_stalls_or_fault_has_no_marks_and_without_series_no_chart() {
    let mut t = trial(SyncCommit::Local, 1, None, 0.3, 1);
    t.series = vec![3300.0, 3000.0, 3100.0];
    let svg = chart_over_time::svg(&of_ingest(&report(vec![t.clone()]))).expect("a chart");
    assert_eq!(stall_rects(&svg), 0);
    let said = said(&svg);
    assert!(!said.contains("nothing committed") && !said.contains("standby fault"));
    t.series = vec![3300.0];
    assert!(chart_over_time::svg(&of_ingest(&report(vec![t]))).is_none());
}
