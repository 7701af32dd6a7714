//! The report key's writer: find the run in the history file and write its report into the
//! current directory with the code `pglab report` uses.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::tui::msg::Msg;

/// Write `run_id`'s report on a blocking task; answer with `Msg::ReportWritten`.
pub(crate) fn spawn(history_file: PathBuf, run_id: String, tx: UnboundedSender<Msg>) {
    tokio::spawn(async move {
        let r = tokio::task::spawn_blocking(move || write(&history_file, &run_id, Path::new("")))
            .await
            .unwrap_or_else(|e| Err(format!("writing the report stopped: {e}")));
        let _ = tx.send(Msg::ReportWritten(r));
    });
}

/// The files written for `run_id` in `dir` (`""`: the current directory), or the sentence
/// saying why not.
pub(crate) fn write(history_file: &Path, run_id: &str, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let (runs, _) = crate::history::read(history_file);
    let Some(r) = runs.iter().find(|r| r.run_id == run_id) else {
        return Err(format!(
            "{run_id} is not in the history ({}): only finished runs have a report",
            history_file.display()
        ));
    };
    let out = crate::report::files::default_path(dir, r);
    let w =
        crate::report::files::write_markdown(r, &out, None, false).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().unwrap_or_default();
    Ok(w.files.into_iter().map(|f| cwd.join(f)).collect())
}
