//! The verify key's work: the last two windows recorded (the data directory's `windows`),
//! read and compared with `pglab verify`'s own code and defaults. Two files read; no server.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc::UnboundedSender;

use crate::capture::file_window;
use crate::capture::verify::{self, Options};
use crate::tui::msg::{Msg, VerifiedWindows};

/// Where the window key keeps its windows.
pub fn windows_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("windows")
}

/// The two newest windows in `dir`, older first (by modification time, then name).
fn last_two(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let none = || {
        format!(
            "fewer than two windows in {}: record one before the change and one after it (W on the Target pane)",
            dir.display()
        )
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(none()),
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .filter_map(|p| {
            let t = std::fs::metadata(&p).and_then(|m| m.modified()).ok()?;
            Some((t, p))
        })
        .collect();
    files.sort();
    match files.len() {
        0 | 1 => Err(none()),
        n => Ok((files[n - 2].1.clone(), files[n - 1].1.clone())),
    }
}

fn read(path: &Path) -> Result<file_window::Carried, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    file_window::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    )
}

/// The last two windows in `dir` compared, as `pglab verify OLDER NEWER` with its defaults.
pub fn compare_last_two(dir: &Path) -> Result<VerifiedWindows, String> {
    let (a, b) = last_two(dir)?;
    let (before, after) = (read(&a)?, read(&b)?);
    let v = verify::verify(&before, &after, Options::default(), &Default::default())
        .map_err(|e| e.to_string())?;
    Ok(VerifiedWindows {
        verification: Box::new(v),
        before: name(&a),
        after: name(&b),
    })
}

/// Compare on a blocking task; the answer comes back as `Msg::Verified`.
pub(crate) fn spawn(data_dir: &Path, tx: UnboundedSender<Msg>) {
    let dir = windows_dir(data_dir);
    tokio::task::spawn_blocking(move || {
        let _ = tx.send(Msg::Verified(compare_last_two(&dir)));
    });
}
