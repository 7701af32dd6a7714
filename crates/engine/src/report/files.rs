//! A run's report as files, the one way both `pglab report` and the TUI's report key write it:
//! Markdown with its SVG charts beside it, never over a file that is there unless asked to
//! (pglab's default name gets a number instead, see [`crate::outputs::resolve`]).

use std::path::{Path, PathBuf};

use crate::experiment::RunReport;
use crate::outputs::OutputSet;

/// Why a report was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The path was chosen (`--out`) and a file is there.
    #[error("{0}")]
    There(String),
    #[error("cannot write the report to {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was written, and a sentence when the names were changed (a numbered set).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenFiles {
    pub files: Vec<PathBuf>,
    pub said: Option<String>,
}

/// pglab's name for a run's report in `dir`: `pglab-<run id>.md`.
pub fn default_path(dir: &Path, r: &RunReport) -> PathBuf {
    dir.join(format!("pglab-{}.md", r.run_id))
}

/// Write `r` as Markdown at `out` with its charts beside it. `chosen` names the flag that
/// chose the path (then a file there is refused), None for pglab's own name.
pub fn write_markdown(
    r: &RunReport,
    out: &Path,
    chosen: Option<&str>,
    force: bool,
) -> Result<WrittenFiles, WriteError> {
    let set = OutputSet::new(vec![out.to_path_buf(), out.with_extension("svg")]);
    let (set, said) = crate::outputs::resolve(&set, chosen, force).map_err(WriteError::There)?;
    let out = &set.files[0];
    let written = super::write(r, out).map_err(|source| WriteError::Io {
        path: out.clone(),
        source,
    })?;
    let mut files = vec![written.markdown];
    files.extend(written.charts);
    Ok(WrittenFiles { files, said })
}
