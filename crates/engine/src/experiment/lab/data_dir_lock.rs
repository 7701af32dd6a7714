//! One run at a time per pglab data directory: two pglab processes with the same
//! `PGLAB_DATA_DIR` share its sandbox and its history, so a second run would restart the
//! server under the first one's trials or race it for the same dataset. The lock is an
//! advisory `flock` on `<data dir>/run.lock`, held for the run's life and released by the
//! kernel when the process ends however it ends (kill -9 included); the file says who holds
//! it, so the second pglab can name the process and what it may still do.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// The lock file in the data directory.
pub(crate) const FILE: &str = "run.lock";

/// Held while a run goes; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    _file: Flock<File>,
}

/// Who holds the lock, as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: Option<u32>,
    /// What it runs: "pglab run index-build", "a sweep from the TUI".
    pub what: String,
    /// When it took the lock (UTC, as written).
    pub since: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pid = self
            .pid
            .map(|p| format!("pid {p}"))
            .unwrap_or_else(|| "pid unknown".into());
        write!(f, "{pid}, {}, since {}", self.what, self.since)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another pglab ({holder}) is running an experiment with this data directory ({}): two runs at once would disturb each other's timings and share the sandbox. Wait for it to end or stop it; meanwhile this pglab can still look (the panes, the history, the presets, pglab history and report), or give it its own data directory (PGLAB_DATA_DIR)",
        dir.display()
    )]
    Held { dir: PathBuf, holder: Holder },
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl LockError {
    /// What a pglab that waits for the lock says, the same on every front end: who holds
    /// it, and `stop` (the key that stops waiting).
    pub fn waiting(&self, stop: &str) -> String {
        format!("{self}. Waiting for it to end ({stop} stops waiting)…")
    }
}

/// How often a waiting pglab tries the lock again when it can stop waiting ([`wait_for`]).
const POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Take the run lock, waiting while another pglab holds it, until `stop` is cancelled
/// (Ok(None)); `waiting` hears who holds it, once, before the wait.
pub async fn wait_for(
    data_dir: &Path,
    what: &str,
    stop: &tokio_util::sync::CancellationToken,
    waiting: impl FnOnce(&LockError),
) -> Result<Option<RunLock>, LockError> {
    let mut told = Some(waiting);
    loop {
        match acquire(data_dir, what) {
            Err(e @ LockError::Held { .. }) => {
                if let Some(say) = told.take() {
                    say(&e);
                }
            }
            r => return r.map(Some),
        }
        tokio::select! {
            _ = stop.cancelled() => return Ok(None),
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Take the run lock of `data_dir` for `what`, or say who has it.
pub fn acquire(data_dir: &Path, what: &str) -> Result<RunLock, LockError> {
    take(data_dir, what, FlockArg::LockExclusiveNonblock)
}

/// Take the run lock, waiting while another pglab holds it (a script's `pglab run` queues
/// behind the run going); `waiting` hears who holds it, once, before the wait.
pub fn acquire_waiting(
    data_dir: &Path,
    what: &str,
    waiting: impl FnOnce(&LockError),
) -> Result<RunLock, LockError> {
    match acquire(data_dir, what) {
        Err(e @ LockError::Held { .. }) => {
            waiting(&e);
            take(data_dir, what, FlockArg::LockExclusive)
        }
        r => r,
    }
}

fn take(data_dir: &Path, what: &str, how: FlockArg) -> Result<RunLock, LockError> {
    let path = data_dir.join(FILE);
    let io = |source: std::io::Error| LockError::Io {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(data_dir).map_err(io)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    let mut file = match Flock::lock(file, how) {
        Ok(f) => f,
        Err((mut file, Errno::EWOULDBLOCK)) => {
            return Err(LockError::Held {
                dir: data_dir.to_path_buf(),
                holder: read_holder(&mut file),
            });
        }
        Err((_, e)) => return Err(io(std::io::Error::from(e))),
    };
    let text = format!(
        "{}\n{what}\n{}\n",
        std::process::id(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    );
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    Ok(RunLock { _file: file })
}

#[cfg(test)]
/// Who holds the lock now; None when nobody does (it is not taken).
pub(crate) fn holder(data_dir: &Path) -> Option<Holder> {
    match acquire(data_dir, "checking") {
        Err(LockError::Held { holder, .. }) => Some(holder),
        _ => None,
    }
}

fn read_holder(file: &mut File) -> Holder {
    let mut text = String::new();
    let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
    let mut lines = text.lines();
    Holder {
        pid: lines.next().and_then(|l| l.trim().parse().ok()),
        what: lines.next().unwrap_or("a run").to_string(),
        since: lines.next().unwrap_or("an unknown time").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_learns_who_holds_it_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path(), "pglab run index-build").unwrap();
        let Err(LockError::Held { holder, .. }) = acquire(dir.path(), "a sweep from the TUI")
        else {
            panic!("taken twice")
        };
        assert_eq!(holder.pid, Some(std::process::id()));
        assert_eq!(holder.what, "pglab run index-build");
        assert_eq!(super::holder(dir.path()), Some(holder));
        drop(first);
        assert_eq!(super::holder(dir.path()), None);
        assert!(acquire(dir.path(), "again").is_ok());
    }

    #[tokio::test]
    async fn a_waiter_is_told_once_and_stops_when_asked_or_takes_the_lock_when_free() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path(), "pglab run ingest").unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        stop.cancel();
        let mut told = Vec::new();
        let got = wait_for(dir.path(), "the TUI", &stop, |e| {
            told.push(e.waiting("Esc"))
        })
        .await
        .unwrap();
        assert!(got.is_none());
        assert_eq!(told.len(), 1);
        assert!(told[0].contains("pglab run ingest") && told[0].ends_with("(Esc stops waiting)…"));
        let path = dir.path().to_path_buf();
        let release = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            drop(first);
        });
        let never = tokio_util::sync::CancellationToken::new();
        let got = wait_for(&path, "the TUI", &never, |_| {}).await.unwrap();
        assert!(got.is_some());
        release.await.unwrap();
    }
}
