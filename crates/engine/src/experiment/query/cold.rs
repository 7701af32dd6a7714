//! `cache = cold`: before every timed execution the sandbox restarts (shared buffers start
//! empty: PostgreSQL 15 has no other way to empty them) and the OS page cache of its data
//! files is dropped with `posix_fadvise(DONTNEED)` where pglab may open them. Only on pglab's
//! own sandbox, and only when no other pglab uses it. A restart ends every session, the
//! run's lock session too: it is taken again at once.

use std::path::{Path, PathBuf};

use tokio_postgres::Client;

use crate::experiment::lab::leftovers::hold_run_lock;
use crate::experiment::lab::page_cache::evict;
use crate::experiment::lab::{RunCtx, RunError};
use crate::server::Sandbox;

/// The means to make the caches cold.
pub(crate) struct Cold {
    sandbox: Sandbox,
    /// The session holding the run's lock after a restart.
    lock: Option<Client>,
    /// Said once in the report: what a cold trial started from.
    pub how: String,
}

/// Every file under `dir` (the cluster's databases).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

impl Cold {
    /// Ready to make the caches cold; a sentence when not possible here.
    pub(crate) fn new(ctx: &RunCtx) -> Result<Cold, RunError> {
        let Some(sandbox) = ctx.opts.sandbox.clone().filter(|_| ctx.target.is_sandbox()) else {
            return Err(RunError::failed(
                "--cache cold restarts the server: only on pglab's own sandbox (use --cache warm here)",
            ));
        };
        let others = sandbox.other_users();
        if !others.is_empty() {
            return Err(RunError::failed(format!(
                "--cache cold restarts the sandbox, and another pglab is using it (pid {}): let it finish first",
                others
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(Cold {
            sandbox,
            lock: None,
            how: String::new(),
        })
    }

    /// Restart the sandbox and drop its files from the OS page cache. Returns the restart's
    /// seconds (never part of a trial).
    pub(crate) async fn make_cold(&mut self, ctx: &RunCtx) -> Result<f64, RunError> {
        ctx.check()?;
        self.lock = None;
        let sb = self.sandbox.clone();
        let took = tokio::task::spawn_blocking(move || sb.restart())
            .await
            .map_err(|e| RunError::failed(e.to_string()))?
            .map_err(|e| RunError::failed(e.to_string()))?;
        let lock = ctx
            .target
            .connect()
            .await
            .map_err(|e| RunError::failed(e.to_string()))?;
        hold_run_lock(&lock, &ctx.run_id)
            .await
            .map_err(RunError::Failed)?;
        self.lock = Some(lock);
        let mut files = Vec::new();
        files_under(&self.sandbox.data().join("base"), &mut files);
        let n = files.len();
        let dropped = tokio::task::spawn_blocking(move || evict(&files))
            .await
            .map_err(|e| RunError::failed(e.to_string()))?;
        if self.how.is_empty() {
            self.how = match dropped {
                Ok(()) => format!(
                    "each cold trial started after a restart of the sandbox (shared buffers empty) with the OS page cache of its {n} data files dropped (posix_fadvise DONTNEED)"
                ),
                Err(e) => format!(
                    "each cold trial started after a restart of the sandbox (shared buffers empty); the OS page cache was not dropped ({e}), so reads may still come from memory"
                ),
            };
            ctx.note(self.how.clone()).await;
        }
        Ok(took.as_secs_f64())
    }
}
