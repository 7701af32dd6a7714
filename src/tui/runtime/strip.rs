//! Past runs for the history strip: one number per finished run of the spec on screen.

use std::path::Path;

use crate::experiment::{Outcome, RunReport};
use crate::tui::msg::HistoryPoint;

/// The runs recorded in `path` whose `spec_key` is `spec_key`, oldest first. Records that
/// cannot be read are skipped (`history::read` says why in its warnings); a file that cannot
/// be read at all is an error.
fn read_runs(path: &Path, spec_key: &str) -> Result<Vec<RunReport>, String> {
    let (runs, warnings) = crate::history::read(path);
    if let Some(w) = warnings.iter().find(|w| w.line == 0) {
        return Err(w.message.clone());
    }
    Ok(runs
        .into_iter()
        .filter(|r| r.spec_key == spec_key)
        .collect())
}

/// One number per finished run of this spec: its total time.
pub fn points(path: &Path, spec_key: &str) -> Result<Vec<HistoryPoint>, String> {
    let runs = read_runs(path, spec_key)?;
    Ok(runs
        .iter()
        .filter(|r| r.outcome == Outcome::Finished)
        .map(|r| HistoryPoint {
            seconds: r.seconds(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;

    #[test]
    fn keeps_finished_runs_of_the_same_spec() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        assert_eq!(points(&path, "x").unwrap(), []);
        let a = fixture::report("index-build:a", Outcome::Finished, 12.0);
        let b = fixture::report("index-build:b", Outcome::Finished, 5.0);
        let c = fixture::report("index-build:a", Outcome::Cancelled, 3.0);
        let d = fixture::report("index-build:a", Outcome::Finished, 10.5);
        let mut text = String::new();
        for r in [&a, &b, &c] {
            text.push_str(&serde_json::to_string(r).unwrap());
            text.push('\n');
        }
        text.push_str("{\"truncated\": \n");
        text.push_str(&serde_json::to_string(&d).unwrap());
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let p = points(&path, "index-build:a").unwrap();
        assert_eq!(
            p,
            [
                HistoryPoint { seconds: 12.0 },
                HistoryPoint { seconds: 10.5 }
            ]
        );
        assert_eq!(points(&path, "index-build:b").unwrap().len(), 1);
        assert!(points(dir.path(), "x").is_err());
    }
}
