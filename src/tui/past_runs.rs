//! Past runs for the history strip, read straight from the history file.
//!
//! Temporary: `crate::history` is getting a reader (`history::read`). [`read_runs`] is the one
//! function to swap for it; [`points`] turns runs into the strip's numbers.

use std::io;
use std::path::Path;

use crate::experiment::{Outcome, RunReport};
use crate::tui::msg::HistoryPoint;

/// The runs recorded in `path` whose `spec_key` is `spec_key`, oldest first. A missing file is
/// an empty history; lines that do not parse (a crash mid-append, a newer schema) are skipped.
fn read_runs(path: &Path, spec_key: &str) -> io::Result<Vec<RunReport>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    // The key appears verbatim in its JSON line unless it holds characters JSON escapes.
    let prefilter = !spec_key.contains(['"', '\\']) && !spec_key.chars().any(char::is_control);
    Ok(text
        .lines()
        .filter(|l| !prefilter || l.contains(spec_key))
        .filter_map(|l| serde_json::from_str::<RunReport>(l).ok())
        .filter(|r| r.spec_key == spec_key)
        .collect())
}

/// One number per finished run of this spec: its total time.
pub fn points(path: &Path, spec_key: &str) -> Result<Vec<HistoryPoint>, String> {
    let runs = read_runs(path, spec_key).map_err(|e| format!("{}: {e}", path.display()))?;
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
