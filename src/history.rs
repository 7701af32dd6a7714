//! The results store: one JSON line per run in `history.jsonl` under the data dir.
//!
//! JSON Lines rather than SQLite: a record is appended with one `write` under an exclusive
//! `flock` and then `fdatasync`ed, so two pglab processes can record at once and a crash can
//! at worst leave a truncated last line, which readers skip with a warning. The file stays
//! greppable and `jq`-able, and needs no schema migrations.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::experiment::report::RunReport;

/// Append one report durably. Safe under concurrent pglab processes.
pub fn append(path: &Path, report: &RunReport) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_vec(report).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut f = OpenOptions::new().create(true).append(true).open(path)?;
    f.lock()?;
    let r = f.write_all(&line).and_then(|_| f.sync_data());
    f.unlock().ok();
    r
}
