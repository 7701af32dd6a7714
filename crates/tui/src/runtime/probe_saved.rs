//! The Host pane's disk probe, kept across restarts: its results with the date and the
//! directory and device they measured, in pglab's data directory (`disk-probe.json`, written
//! atomically). A saved probe is shown again only for the directory it measured.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::host::probe::{FsyncResult, SeqWriteResult};

/// The file in pglab's data directory.
pub(crate) const FILE: &str = "disk-probe.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedProbe {
    pub at: DateTime<Utc>,
    /// The directory written to, and its filesystem and device ("ext4 on /dev/vda").
    pub dir: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    pub seq: SeqWriteResult,
    pub fsync: FsyncResult,
}

/// Write `p` into `data_dir` (atomically: a reader sees the old file or the new one).
pub(crate) fn save(data_dir: &Path, p: &SavedProbe) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(p).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(data_dir)?;
    crate::paths::write_atomic(&data_dir.join(FILE), &json)
}

/// The saved probe of `dir`; None when there is none, it measured another directory, or the
/// file cannot be read (then the pane offers to probe, as before any probe).
pub(crate) fn load(data_dir: &Path, dir: &Path) -> Option<SavedProbe> {
    let text = std::fs::read(data_dir.join(FILE)).ok()?;
    let p: SavedProbe = match serde_json::from_slice(&text) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("{}: {e}; probing again replaces it", FILE);
            return None;
        }
    };
    (p.dir == dir).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(dir: &Path) -> SavedProbe {
        SavedProbe {
            at: "2026-12-07T13:05:00Z".parse().unwrap(),
            dir: dir.to_path_buf(),
            device: Some("ext4 on /dev/vda".into()),
            seq: SeqWriteResult {
                bytes: 256 << 20,
                seconds: 0.82,
                mb_per_s: 326.0,
                dir: dir.to_path_buf(),
            },
            fsync: FsyncResult {
                ops: 2390,
                seconds: 5.0,
                ops_per_s: 478.0,
                p50_us: 1900.0,
                p99_us: 4100.0,
                max_us: 9000.0,
                dir: dir.to_path_buf(),
            },
        }
    }

    #[test]
    fn a_probe_comes_back_for_the_directory_it_measured_only() {
        let data = tempfile::tempdir().unwrap();
        let site = data.path().join("probe");
        assert_eq!(load(data.path(), &site), None);
        let p = probe(&site);
        save(data.path(), &p).unwrap();
        assert_eq!(load(data.path(), &site), Some(p));
        assert_eq!(load(data.path(), Path::new("/elsewhere")), None);
        std::fs::write(data.path().join(FILE), "{").unwrap();
        assert_eq!(load(data.path(), &site), None);
    }
}
