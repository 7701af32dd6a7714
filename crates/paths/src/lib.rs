//! Where pglab keeps its files, as `directories` says, overridable for tests and for users
//! who want everything elsewhere (`--data-dir`, `PGLAB_DATA_DIR`, `PGLAB_CONFIG_DIR`).

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as paths;

pub mod outputs;

use std::path::{Path, PathBuf};

/// The directories pglab reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// History, sandbox (unless placed elsewhere for an unprivileged server user), logs.
    pub data_dir: PathBuf,
    /// Presets and the config file.
    pub config_dir: PathBuf,
}

impl Paths {
    /// Resolve from an explicit data dir (flag), the environment, or the platform default.
    pub fn resolve(data_dir: Option<PathBuf>) -> Paths {
        let dirs = directories::ProjectDirs::from("", "", "pglab");
        let data_dir = data_dir
            .or_else(|| std::env::var_os("PGLAB_DATA_DIR").map(PathBuf::from))
            .or_else(|| dirs.as_ref().map(|d| d.data_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from(".pglab"));
        let config_dir = std::env::var_os("PGLAB_CONFIG_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs.as_ref().map(|d| d.config_dir().to_path_buf()))
            .unwrap_or_else(|| data_dir.join("config"));
        Paths {
            data_dir,
            config_dir,
        }
    }

    pub fn log_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }
    pub fn history_file(&self) -> PathBuf {
        self.data_dir.join("history.jsonl")
    }
    pub fn presets_dir(&self) -> PathBuf {
        self.config_dir.join("presets")
    }
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }
    /// The TUI's parameters of the last session (restored at the next start).
    pub fn last_params_file(&self) -> PathBuf {
        self.data_dir.join("tui-params.json")
    }
}
/// Write a file atomically: a temp file in the same directory, fsynced, renamed over the
/// target, and the directory fsynced, so a crash leaves the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(path, bytes, 0o644)
}

/// [`write_atomic`] for a file only its owner may read (0600): what holds SQL text, host
/// names or settings of the DBA's servers.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(path, bytes, 0o600)
}

/// A directory of pglab's own that only its owner may enter (0700), made if missing and
/// tightened if it was made looser before. Only the directory itself: its parents are made
/// as usual, since the sandbox beside it must stay reachable by the server's own account.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Open `path` for appending, created 0600; a file an older pglab made readable by others
/// is tightened to 0600.
pub fn open_private_append(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    if f.metadata()?.permissions().mode() & 0o077 != 0 {
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
