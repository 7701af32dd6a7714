//! Where pglab keeps its files, as `directories` says, overridable for tests and for users
//! who want everything elsewhere (`--data-dir`, `PGLAB_DATA_DIR`, `PGLAB_CONFIG_DIR`).

use std::path::PathBuf;

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
}
