//! The results store: one JSON line per run in `history.jsonl` under the data dir.
//!
//! JSON Lines rather than SQLite: a record is appended with one `write` under an exclusive
//! `flock` and then `fdatasync`ed, so two pglab processes can record at once and a crash can
//! at worst leave a truncated last line, which readers skip with a warning. The file stays
//! greppable and `jq`-able, and needs no schema migrations.
//!
//! Reading never fails as a whole: a corrupt or truncated record is skipped with a warning
//! naming its line, and everything else stays readable.
//!
//! The file stays small: past a size, its records move to archives by year (see [`rotate`]),
//! which [`read`] reads back with it as one history.

pub mod compare;
pub mod headline;
mod query;
pub(crate) mod rotate;

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub use compare::{Comparison, Options as CompareOptions, compare, compare_with};
pub use query::{FindError, HistoryFilter, find, parse_since};

use crate::experiment::lab::record::{Recorder, RunReport, SCHEMA_VERSION};

/// The history file as the runner's [`Recorder`]: each finished run appended to it.
#[derive(Debug, Clone)]
pub(crate) struct HistoryFile(pub PathBuf);

impl Recorder for HistoryFile {
    fn record(&self, report: &RunReport) -> Result<(), String> {
        append(&self.0, report).map_err(|e| format!("{}: {e}", self.0.display()))
    }
}

/// A run's recorder that appends to the history file at `path`.
pub fn recorder(path: PathBuf) -> std::sync::Arc<dyn Recorder> {
    std::sync::Arc::new(HistoryFile(path))
}

/// Append one report durably. Safe under concurrent pglab processes.
pub fn append(path: &Path, report: &RunReport) -> std::io::Result<()> {
    append_rotating(path, report, rotate::ROTATE_AT)
}

/// [`append`], rotating the file first when it holds at least `limit` bytes.
pub(crate) fn append_rotating(path: &Path, report: &RunReport, limit: u64) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_vec(report).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // Run reports hold SQL text and host names: only the owner reads them.
    let mut f = crate::paths::open_private_append(path)?;
    f.lock()?;
    let r = rotate::rotate_locked(&mut f, path, limit)
        .and_then(|_| ends_mid_line(&f))
        .and_then(|torn| {
            // After a torn write the new record starts on its own line, so only the torn one
            // is lost, not this one too.
            if torn {
                line.insert(0, b'\n');
            }
            f.write_all(&line)
        })
        .and_then(|_| f.sync_data());
    f.unlock().ok();
    r
}

/// True when the file is not empty and does not end with a newline.
fn ends_mid_line(f: &std::fs::File) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    f.read_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// A record that could not be read, or something else worth saying about the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line in the history file (0: the file as a whole).
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "history: {}", self.message)
        } else {
            write!(f, "history line {}: {}", self.line, self.message)
        }
    }
}

/// Every readable run in the file and its archives, oldest first, and a warning for each
/// record skipped. A missing file is an empty history.
pub fn read(path: &Path) -> (Vec<RunReport>, Vec<Warning>) {
    let mut bytes = Vec::new();
    let mut archived: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let opened = OpenOptions::new().read(true).open(path).and_then(|mut f| {
        // A shared lock waits out an append (or a rotation) in progress, so its line is read
        // whole and every record is in exactly one place we read.
        f.lock_shared()?;
        for a in rotate::archives(path) {
            if let Ok(b) = std::fs::read(&a) {
                archived.push((a, b));
            }
        }
        let r = f.read_to_end(&mut bytes);
        f.unlock().ok();
        r
    });
    let (mut runs, mut warnings) = (Vec::new(), Vec::new());
    for (file, b) in &archived {
        let (r, w) = parse_lines(b);
        runs.extend(r);
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        warnings.extend(w.into_iter().map(|w| Warning {
            line: 0,
            message: format!("{name} line {}: {}", w.line, w.message),
        }));
    }
    match opened {
        Ok(_) => {
            let (r, w) = parse_lines(&bytes);
            runs.extend(r);
            warnings.extend(w);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => warnings.push(Warning {
            line: 0,
            message: format!("cannot read {}: {e}", path.display()),
        }),
    }
    // A rotation cut short by a crash leaves a record in an archive and in the file too.
    let mut seen = std::collections::HashSet::new();
    runs.retain(|r| seen.insert(r.run_id.clone()));
    (runs, warnings)
}

/// Parse the bytes of a history file (see [`read`]).
pub(crate) fn parse_lines(bytes: &[u8]) -> (Vec<RunReport>, Vec<Warning>) {
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<RunReport>(text) {
            Ok(r) => {
                if r.schema_version > SCHEMA_VERSION {
                    warnings.push(Warning {
                        line: i + 1,
                        message: format!(
                            "run {} was recorded by a newer pglab (record version {}); some of it may be missing here",
                            r.run_id, r.schema_version
                        ),
                    });
                }
                runs.push(r)
            }
            Err(e) => {
                let truncated = i == last && !complete;
                warnings.push(Warning {
                    line: i + 1,
                    message: if truncated {
                        format!("skipped a truncated record (an interrupted write?): {e}")
                    } else {
                        format!("skipped a record that does not read as a run: {e}")
                    },
                });
            }
        }
    }
    (runs, warnings)
}
