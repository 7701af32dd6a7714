//! Where the disk probes may write, and with how much room. They write only in a directory
//! pglab owns — its sandbox's directory, or its own data directory when the target is a
//! server it did not start — or in one the user named (`--probe-dir`); never in a server's
//! data directory, whose volume the server needs for itself. Before writing they check that
//! the volume keeps twice what they write plus [`ROOM_MARGIN`] free; and the files of a probe
//! that was killed (`.pglab-probe-<pid>-…`, its pid gone) are removed by the next start.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::snapshot::{disk_info, free_bytes};

/// What must stay free on the probed volume besides twice the probe's own bytes.
pub(crate) const ROOM_MARGIN: u64 = 1 << 30;

/// The prefix of every probe file (`.pglab-probe-<pid>-<kind>`).
pub(crate) const PROBE_FILE_PREFIX: &str = ".pglab-probe-";

/// Whose directory the probes write in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SiteKind {
    /// pglab's sandbox: the server's own volume, and pglab's.
    Sandbox,
    /// pglab's data directory (the target is a server pglab did not start).
    DataDir,
    /// A directory the user named with `--probe-dir`.
    Named,
}

/// Whether the probed directory is on the server's device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerDevice {
    Same,
    Other,
    /// The server is local but its data directory cannot be seen (role or permissions).
    Unknown,
    /// The server runs on another machine.
    Remote,
}

/// Where the disk probes write, and what that says about the server's disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeSite {
    pub dir: PathBuf,
    pub kind: SiteKind,
    /// The filesystem and device holding `dir` ("ext4 on /dev/vda"), when the mount table
    /// says.
    pub device: Option<String>,
    pub server_device: ServerDevice,
}

impl ProbeSite {
    /// Choose the directory: the one named with `--probe-dir`, else the sandbox's, else
    /// pglab's data directory. `server_data_dir` is the server's data directory when it is on
    /// this machine and visible; `server_local` whether the server runs here at all.
    pub fn choose(
        named: Option<&Path>,
        sandbox_dir: Option<&Path>,
        data_dir: &Path,
        server_data_dir: Option<&Path>,
        server_local: bool,
    ) -> ProbeSite {
        let (dir, kind) = match (named, sandbox_dir) {
            (Some(d), _) => (d.to_path_buf(), SiteKind::Named),
            (None, Some(s)) => (s.to_path_buf(), SiteKind::Sandbox),
            (None, None) => (data_dir.to_path_buf(), SiteKind::DataDir),
        };
        let device = disk_info(&dir).map(|d| format!("{} on {}", d.fs_type, d.device));
        let server_device = if kind == SiteKind::Sandbox {
            ServerDevice::Same
        } else if !server_local {
            ServerDevice::Remote
        } else {
            match (
                server_data_dir.and_then(|d| fs::metadata(d).ok()),
                fs::metadata(&dir).ok(),
            ) {
                (Some(s), Some(p)) if s.dev() == p.dev() => ServerDevice::Same,
                (Some(_), Some(_)) => ServerDevice::Other,
                _ => ServerDevice::Unknown,
            }
        };
        ProbeSite {
            dir,
            kind,
            device,
            server_device,
        }
    }

    /// The directory when it is on the server's device: where a run may write its own
    /// small probe (ingest's fsync reference) and still measure the server's disk.
    pub fn on_server_device(&self) -> Option<PathBuf> {
        (self.server_device == ServerDevice::Same).then(|| self.dir.clone())
    }

    /// The device alone ("/dev/vda"), when known.
    pub fn device_name(&self) -> Option<&str> {
        self.device
            .as_deref()
            .map(|d| d.rsplit(" on ").next().unwrap_or(d))
    }

    /// What the probe measured, for a server pglab did not start: "pglab's directory … on
    /// ext4 on /dev/vda, the server's device". None for the sandbox (its directory is the
    /// server's).
    pub fn note(&self) -> Option<String> {
        let whose = match self.kind {
            SiteKind::Sandbox => return None,
            SiteKind::DataDir => "pglab's directory",
            SiteKind::Named => "the --probe-dir",
        };
        let on = self
            .device
            .as_ref()
            .map(|d| format!(" on {d}"))
            .unwrap_or_default();
        let relation = match self.server_device {
            ServerDevice::Same => "the server's device",
            ServerDevice::Other => "not the server's device",
            ServerDevice::Unknown => "the server's device cannot be told",
            ServerDevice::Remote => "the server is on another machine",
        };
        Some(format!(
            "measured in {whose} {}{on} ({relation})",
            self.dir.display()
        ))
    }
}

/// Why a probe may not write: the volume would keep less than twice the probe's bytes plus
/// [`ROOM_MARGIN`] free. None when there is room, or when the free space cannot be read (the
/// write itself then says what went wrong).
pub(crate) fn lacks_room(dir: &Path, bytes: u64) -> Option<(u64, u64)> {
    let need = bytes.saturating_mul(2).saturating_add(ROOM_MARGIN);
    let free = free_bytes(dir)?;
    (free < need).then_some((need, free))
}

/// Remove the probe files in `dir` whose process is gone (a probe killed with -9 cannot clean
/// up after itself); returns what was removed. Files of live processes are left alone.
pub fn remove_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PROBE_FILE_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        match fs::remove_file(e.path()) {
            Ok(()) => {
                tracing::info!("removed a killed probe's file {}", e.path().display());
                removed.push(e.path());
            }
            Err(err) => tracing::warn!("cannot remove {}: {err}", e.path().display()),
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_files_of_dead_pids_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir
            .path()
            .join(format!("{PROBE_FILE_PREFIX}{}-seq", std::process::id()));
        let dead = dir.path().join(format!("{PROBE_FILE_PREFIX}4194305-fsync"));
        let other = dir.path().join("unrelated");
        for f in [&mine, &dead, &other] {
            fs::write(f, b"x").unwrap();
        }
        assert_eq!(remove_stale(dir.path()), vec![dead.clone()]);
        assert!(mine.exists() && other.exists() && !dead.exists());
    }

    #[test]
    fn room_is_twice_the_bytes_plus_the_margin() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(dir.path()).unwrap();
        assert!(lacks_room(dir.path(), free).is_some());
        if free > 2 * ROOM_MARGIN {
            assert_eq!(lacks_room(dir.path(), 1 << 20), None);
        }
    }

    #[test]
    fn the_note_says_whose_directory_and_which_device() {
        let dir = tempfile::tempdir().unwrap();
        let site = ProbeSite::choose(None, None, dir.path(), Some(dir.path()), true);
        assert_eq!(site.kind, SiteKind::DataDir);
        assert_eq!(site.server_device, ServerDevice::Same);
        let note = site.note().unwrap();
        assert!(note.starts_with("measured in pglab's directory"), "{note}");
        assert!(note.ends_with("(the server's device)"), "{note}");
        assert!(site.device_name().is_some_and(|d| !d.contains(" on ")));
        let sb = ProbeSite::choose(None, Some(dir.path()), dir.path(), None, true);
        assert_eq!(sb.note(), None);
        let remote = ProbeSite::choose(None, None, dir.path(), None, false);
        assert_eq!(remote.server_device, ServerDevice::Remote);
    }
}
