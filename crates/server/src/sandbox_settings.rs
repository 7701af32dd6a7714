//! The sandbox's own settings and what-if runs that change them: a restart that keeps the
//! port, a journal that makes every change reversible — a copy of `postgresql.auto.conf`
//! taken before the first `ALTER SYSTEM`, put back after the run, and put back by the next
//! start when pglab was killed in between — and the list of settings that differ from the
//! sandbox's own (for `pglab sandbox status`).
//!
//! A run that changes settings holds `whatif.lock` exclusively; the repair at start only
//! touches a journal nobody holds, so a second pglab never undoes a live what-if.

use std::fs::{self, File, OpenOptions};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::TargetError;
use super::sandbox::{Sandbox, tail_lines};

/// A what-if run's hold on the sandbox's configuration; see [`Sandbox::begin_whatif`].
///
/// Restores on every path: given back with [`Sandbox::end_whatif`] once the server runs on
/// its own settings again; dropped any other way (a panic, an error while putting them back)
/// it puts the saved `postgresql.auto.conf` back itself — restarting a running server so it
/// reads it — before the lock is released, so no later run in this process measures an
/// altered sandbox.
#[derive(Debug)]
pub struct WhatIfJournal {
    lock: File,
    pub saved: PathBuf,
    sandbox: Sandbox,
    ended: bool,
}

impl Drop for WhatIfJournal {
    fn drop(&mut self) {
        if !self.ended {
            match self.sandbox.put_back_now() {
                Ok(()) => tracing::warn!(
                    "a what-if run ended without putting the sandbox's settings back: put back now"
                ),
                Err(e) => tracing::error!(
                    "putting back the sandbox's settings after an interrupted what-if run failed ({e}); the next start tries again"
                ),
            }
        }
        self.lock.unlock().ok();
    }
}

fn err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

impl Sandbox {
    fn auto_conf(&self) -> PathBuf {
        self.data().join("postgresql.auto.conf")
    }
    fn saved_auto_conf(&self) -> PathBuf {
        self.root.join("whatif-saved.auto.conf")
    }
    fn whatif_lock(&self) -> PathBuf {
        self.root.join("whatif.lock")
    }

    /// Restart the running server (fast shutdown) on the same port; returns how long the
    /// server was away.
    pub fn restart(&self) -> Result<Duration, TargetError> {
        // pg_ctl signals whatever postmaster.pid names: only ever this sandbox's postmaster.
        self.verified_postmaster("restarting")?;
        let started = Instant::now();
        let mut c = self.command("pg_ctl");
        c.arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.log_file())
            .args(["-m", "fast", "-w", "-t", "60", "restart"]);
        let out = c
            .output()
            .map_err(|e| err(format!("cannot run pg_ctl restart: {e}")))?;
        if !out.status.success() || self.live_postmaster().is_none() {
            let log = fs::read_to_string(self.log_file()).unwrap_or_default();
            return Err(err(format!(
                "the sandbox did not come back after a restart: {}",
                tail_lines(&log, 2)
            )));
        }
        Ok(started.elapsed())
    }

    /// Before the first `ALTER SYSTEM` of a run: hold the what-if lock and save
    /// `postgresql.auto.conf` (kept when a killed run's copy is still there: that one holds the
    /// sandbox's own settings).
    pub fn begin_whatif(&self) -> Result<WhatIfJournal, TargetError> {
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.whatif_lock())
            .map_err(|e| err(format!("cannot open {}: {e}", self.whatif_lock().display())))?;
        if lock.try_lock().is_err() {
            return Err(err(
                "another pglab run is changing the sandbox's settings: wait for it to finish",
            ));
        }
        let saved = self.saved_auto_conf();
        if !saved.exists() {
            let text = fs::read(self.auto_conf()).unwrap_or_default();
            crate::paths::write_atomic(&saved, &text)
                .map_err(|e| err(format!("cannot save {}: {e}", self.auto_conf().display())))?;
        }
        Ok(WhatIfJournal {
            lock,
            saved,
            sandbox: self.clone(),
            ended: false,
        })
    }

    /// The last resort of a dropped journal (its lock still held): the saved
    /// `postgresql.auto.conf` back, a restart when the server runs, the copy removed.
    fn put_back_now(&self) -> Result<(), TargetError> {
        if !self.write_saved_auto_conf()? {
            return Ok(());
        }
        if self.live_postmaster().is_some() {
            self.restart()?;
        }
        fs::remove_file(self.saved_auto_conf()).ok();
        Ok(())
    }

    /// Put the saved `postgresql.auto.conf` back; the saved copy stays until
    /// [`Sandbox::end_whatif`], once the server has read the file again (a pglab killed in
    /// between leaves the copy, and the next start repairs). False when there was nothing.
    pub fn restore_auto_conf(&self) -> Result<bool, TargetError> {
        self.write_saved_auto_conf()
    }

    /// The server runs on its own settings again: drop the saved copy and the what-if lock.
    pub fn end_whatif(&self, mut journal: WhatIfJournal) {
        fs::remove_file(self.saved_auto_conf()).ok();
        journal.ended = true;
        drop(journal);
    }

    /// True when `postgresql.auto.conf` holds what the journal saved (nothing to put back).
    pub fn auto_conf_as_saved(&self) -> bool {
        fs::read(self.saved_auto_conf()).ok()
            == Some(fs::read(self.auto_conf()).unwrap_or_default())
    }

    /// True while a live what-if run holds the journal's lock.
    pub fn whatif_live(&self) -> bool {
        let Ok(lock) = OpenOptions::new().write(true).open(self.whatif_lock()) else {
            return false;
        };
        let held = lock.try_lock().is_err();
        lock.unlock().ok();
        held && self.saved_auto_conf().exists()
    }

    /// pglab processes other than this one holding the sandbox's lease (from `/proc/locks`):
    /// a reload or restart would change their runs too.
    pub fn other_users(&self) -> Vec<i32> {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = fs::metadata(self.root.join("lease")) else {
            return Vec::new();
        };
        let ino = meta.ino().to_string();
        let me = std::process::id() as i32;
        let text = fs::read_to_string("/proc/locks").unwrap_or_default();
        let mut pids: Vec<i32> = text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                // "1: FLOCK  ADVISORY  READ  1234 fd:01:5678 0 EOF" (a blocked waiter has "->").
                let at = f.iter().position(|w| *w == "FLOCK")?;
                let pid: i32 = f.get(at + 3)?.parse().ok()?;
                let inode = f.get(at + 4)?.rsplit(':').next()?;
                (inode == ino && pid != me).then_some(pid)
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    fn write_saved_auto_conf(&self) -> Result<bool, TargetError> {
        let saved = self.saved_auto_conf();
        let Ok(text) = fs::read(&saved) else {
            return Ok(false);
        };
        // Rewrite in place: the file keeps its owner (the server account) and mode.
        fs::write(self.auto_conf(), &text).map_err(|e| {
            err(format!(
                "cannot put back {}: {e} (the copy is in {})",
                self.auto_conf().display(),
                saved.display()
            ))
        })?;
        Ok(true)
    }

    /// At start: a journal nobody holds is a killed what-if run's; put the sandbox's own
    /// settings back (restarting a server that still runs with the changed ones). Returns a
    /// sentence when something was repaired.
    pub(crate) fn repair_whatif(&self) -> Result<Option<String>, TargetError> {
        if !self.saved_auto_conf().exists() {
            return Ok(None);
        }
        let Ok(lock) = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.whatif_lock())
        else {
            return Ok(None);
        };
        if lock.try_lock().is_err() {
            return Ok(None); // a live what-if run holds it
        }
        let changed = self.changed_settings();
        // Nothing to put back: a live run finished between the two checks.
        if !self.write_saved_auto_conf()? {
            lock.unlock().ok();
            return Ok(None);
        }
        if self.live_postmaster().is_some() {
            self.restart()?;
        }
        fs::remove_file(self.saved_auto_conf()).ok();
        lock.unlock().ok();
        let what = changed
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Some(format!(
            "an interrupted what-if run had left the sandbox with {}; its own settings are back",
            if what.is_empty() {
                "changed settings".into()
            } else {
                what
            }
        )))
    }

    /// Settings set with `ALTER SYSTEM` (`postgresql.auto.conf`): where the sandbox differs
    /// from its own configuration. Read from the file, so it works when the server is down.
    pub fn changed_settings(&self) -> Vec<(String, String)> {
        let text = fs::read_to_string(self.auto_conf()).unwrap_or_default();
        parse_auto_conf(&text)
    }

    /// True while a what-if run holds the journal, or a killed one left it.
    pub fn whatif_pending(&self) -> bool {
        self.saved_auto_conf().exists()
    }
}

/// `name = 'value'` lines of a PostgreSQL configuration file (comments skipped).
pub(crate) fn parse_auto_conf(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(n, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .unwrap_or(v);
            (n.trim().to_string(), v.replace("''", "'"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_alter_system_lines() {
        let text = "# Do not edit this file manually!\n# It will be overwritten by the ALTER SYSTEM command.\nmax_wal_size = '16GB'\nshared_buffers = '256MB'\n";
        assert_eq!(
            parse_auto_conf(text),
            vec![
                ("max_wal_size".to_string(), "16GB".to_string()),
                ("shared_buffers".to_string(), "256MB".to_string())
            ]
        );
    }
}
