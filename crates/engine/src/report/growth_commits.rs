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
pub(crate) fn commits_grid(b: &GrowthReport) -> Grid {
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
        .shape
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
        s.shape.stall_seconds.to_string(),
        rate(s.shape.worst_second),
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
pub(crate) fn fault_cell(f: &GrowthFault) -> String {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::experiment::growth::{Design, GrowthSpec, WriteTiming};
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};
    use crate::experiment::lab::standby_fault::FaultWindow;

    fn spec() -> GrowthSpec {
        let mut p = ExperimentKind::Growth.defaults();
        p.insert("sync-commit".into(), "local,on".into());
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    fn step(combo: usize, commit_s: f64, fault: Option<FaultWindow>) -> StepCommits {
        let writes = vec![WriteTiming {
            design: Design::Snapshot,
            round: 1,
            at_s: 0.0,
            seconds: commit_s + 0.01,
            commit_seconds: commit_s,
            rows: 10,
        }];
        let fault = fault.map(|w| GrowthFault::of(w, 1, &writes));
        let level = ["local", "on"][combo];
        let settings = BTreeMap::from([("synchronous_commit".to_string(), level.to_string())]);
        StepCommits::of((0, combo), settings, writes, vec![], fault).unwrap()
    }

    #[test]
    fn each_step_then_each_combination_with_what_a_fault_made_commits_wait() {
        let mut b = GrowthReport::new(&spec());
        assert!(commits_grid(&b).rows.is_empty(), "a record without commits");
        let window = FaultWindow {
            fault: "stop-at=0s,for=2s".into(),
            from_s: Some(0.0),
            to_s: Some(2.3),
            ..Default::default()
        };
        b.commits.push(step(0, 0.0031, Some(window.clone())));
        b.commits.push(step(1, 2.2, Some(window)));
        b.summarize(&[], false);
        let g = commits_grid(&b);
        assert_eq!(g.rows.len(), 4, "{:?}", g.rows);
        assert_eq!(g.rows[0][1], "synchronous_commit=local");
        assert_eq!(g.rows[0][3], "3.10");
        assert_eq!(g.rows[1][11], "commits waited 2.2 s (gone 0.0–2.3 s)");
        // The combination over every step: 2.21 s of write phase, two whole seconds; the
        // first holds the version's rows (its first 10 ms), the second lies inside the COMMIT.
        assert_eq!(g.rows[3][0], "all");
        assert_eq!((g.rows[3][8].as_str(), g.rows[3][9].as_str()), ("1", "0"));
    }
}
