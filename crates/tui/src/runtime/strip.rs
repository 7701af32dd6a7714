//! Past runs for the spec on screen, read in one pass of the history: the history strip's
//! points (one result per finished run of the same parameters) and how long the sweep and
//! one trial would take (`experiment::lab::eta`).

use std::path::Path;

use crate::experiment::lab::eta;
use crate::experiment::{ExperimentSpec, Outcome, RunReport};
use crate::history::headline::headline;
use crate::tui::msg::{Estimates, HistoryPoint, Past};

/// Every run recorded in `path`, oldest first. Records that cannot be read are skipped
/// (`history::read` says why in its warnings); a file that cannot be read at all is an error.
fn read_runs(path: &Path) -> Result<Vec<RunReport>, String> {
    let (runs, warnings) = crate::history::read(path);
    if let Some(w) = warnings.iter().find(|w| w.line == 0) {
        return Err(w.message.clone());
    }
    Ok(runs)
}

/// One result per finished run of this spec, oldest first.
pub(crate) fn points(runs: &[RunReport], spec_key: &str) -> Vec<HistoryPoint> {
    runs.iter()
        .filter(|r| r.spec_key == spec_key && r.outcome == Outcome::Finished)
        .filter_map(headline)
        .map(|h| HistoryPoint {
            value: h.value,
            unit: h.unit,
            what: h.what,
            interval: h.interval,
            run_id: h.run_id,
            better: h.better,
        })
        .collect()
}

/// The strip's points and the estimates for `spec`, from the history at `path`, on this
/// host (`host`: its name).
pub(crate) fn past(path: &Path, spec: &ExperimentSpec, host: &str) -> Result<Past, String> {
    let runs = read_runs(path)?;
    Ok(Past {
        points: points(&runs, &spec.spec_key()),
        eta: Estimates {
            sweep: eta::estimate(spec, &runs, Some(host)),
            one: eta::estimate(&spec.one_trial(), &runs, Some(host)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index_build::Order;

    #[test]
    fn keeps_the_results_of_finished_runs_of_the_same_spec() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let spec = crate::experiment::ExperimentKind::IndexBuild
            .parse_spec(&Default::default())
            .unwrap();
        assert_eq!(past(&path, &spec, "lab1").unwrap().points, []);
        let run = |id: &str, secs: &[f64], outcome: Outcome| {
            let mut r =
                crate::report::example::index_build(id, 1000, &[(Order::Random, 0, "64MB", secs)]);
            r.outcome = outcome;
            r
        };
        let a = run("a", &[12.0, 12.2, 11.9], Outcome::Finished);
        let mut b = run("b", &[5.0, 5.1, 5.2], Outcome::Finished);
        b.spec_key = "index-build:other".into();
        let c = run("c", &[3.0, 3.0, 3.0], Outcome::Cancelled);
        let d = run("d", &[10.5, 10.4, 10.6], Outcome::Finished);
        let mut text = String::new();
        for r in [&a, &b, &c] {
            text.push_str(&serde_json::to_string(r).unwrap());
            text.push('\n');
        }
        text.push_str("{\"truncated\": \n");
        text.push_str(&serde_json::to_string(&d).unwrap());
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let runs = read_runs(&path).unwrap();
        let p = points(&runs, &a.spec_key);
        let values: Vec<f64> = p.iter().map(|p| p.value).collect();
        // The best median of each run, not how long it took.
        assert_eq!(values, [12.0, 10.5]);
        assert_eq!(p[0].what, "best median");
        assert_eq!(points(&runs, "index-build:other").len(), 1);
        assert!(read_runs(dir.path()).is_err());
    }
}
