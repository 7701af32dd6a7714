//! A growth run's version-write COMMITs as a table: per measured step and combination of
//! swept settings, then per combination over every step, the COMMIT latency percentiles, the
//! stall seconds and slowest second of the write phases, the standby's replay lag after the
//! writes, and what a standby fault made commits wait (see `experiment::growth::commits` for
//! what a growth stall second is).

use crate::experiment::growth::{GrowthFault, GrowthReport, StepCommits};
use crate::measure::units::format_count;

use super::grid::Grid;

const TITLE: &str = "Version-write COMMITs (ms; stall s: whole seconds of the write phases spent inside COMMITs, no row written; slowest second in rows/s)";

/// The table, empty when the run recorded no commit (a record from before they were kept).
pub fn commits_grid(b: &GrowthReport) -> Grid {
    let mut g = Grid::new(
        TITLE,
        &[
            ("versions", true),
            ("settings", false),
            ("commits", true),
            ("p50", true),
            ("p95", true),
            ("p99", true),
            ("p99.9", true),
            ("max", true),
            ("stall s", true),
            ("slowest second", true),
            ("replay lag", true),
            ("standby fault", false),
        ],
    );
    let label = |c: usize| b.summary.commits.iter().find(|t| t.combo == c);
    for s in &b.commits {
        let settings = label(s.combo).map(|t| t.label.clone()).unwrap_or_default();
        g.rows.push(step_row(s, settings));
    }
    for t in &b.summary.commits {
        let l = t.commit_ms;
        g.rows.push(vec![
            "all".into(),
            t.label.clone(),
            t.commits.to_string(),
            ms(l.p50),
            ms(l.p95),
            ms(l.p99),
            ms(l.p999),
            ms(l.max),
            t.stall_seconds.to_string(),
            rate(t.worst_second),
            "".into(),
            "".into(),
        ]);
    }
    g
}

fn step_row(s: &StepCommits, settings: String) -> Vec<String> {
    let l = s.commit_ms;
    let lag = s
        .replicas
        .iter()
        .filter_map(|r| r.replay_lag_ms)
        .reduce(f64::max)
        .map_or("–".into(), ms);
    vec![
        format_count(s.versions as f64),
        settings,
        s.writes.len().to_string(),
        ms(l.p50),
        ms(l.p95),
        ms(l.p99),
        ms(l.p999),
        ms(l.max),
        s.stall_seconds.to_string(),
        rate(s.worst_second),
        lag,
        s.fault.as_ref().map_or("–".into(), fault_cell),
    ]
}

fn ms(v: f64) -> String {
    format!("{v:.2}")
}

/// The slowest second's rows/s, "–" when the write phases lasted under a second.
fn rate(v: Option<f64>) -> String {
    v.map_or("–".into(), format_count)
}

/// "waited 2.1 s (gone 0.0–2.3 s)", or that it never happened.
pub fn fault_cell(f: &GrowthFault) -> String {
    let gone = if f.window.fault.starts_with("pause-replay") {
        "paused"
    } else {
        "gone"
    };
    match (f.window.from_s, f.window.to_s) {
        (Some(from), Some(to)) => format!(
            "commits waited {:.1} s ({gone} {from:.1}–{to:.1} s)",
            f.commits_waited_s
        ),
        _ => "never happened".into(),
    }
}
