//! Cold reads: dropping a relation's pages from the OS page cache with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` on its files. Only possible when the server runs on
//! this host and its files can be opened; pages in shared_buffers stay (PostgreSQL 15 can
//! only empty those by a restart).

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
use tokio_postgres::Client;

use crate::experiment::lab::RunCtx;

/// Where the server's files are, once we know we may touch them.
pub(crate) struct ColdCache {
    data_dir: PathBuf,
}

impl ColdCache {
    /// Whether cold reads are possible; the reason when not. `probe_rel` is a relation of
    /// ours whose files are opened as the test.
    pub(crate) async fn probe(
        ctx: &RunCtx,
        client: &Client,
        probe_rel: &str,
    ) -> Result<ColdCache, String> {
        if !ctx.target.location.is_local() {
            return Err("the server is not on this host".into());
        }
        let Some(dir) = ctx
            .server
            .setting("data_directory")
            .map(|s| s.value.clone())
        else {
            return Err(
                "data_directory is not visible to this role (it needs pg_read_all_settings)".into(),
            );
        };
        let data_dir = PathBuf::from(dir);
        if !data_dir.is_dir() {
            return Err(format!(
                "the data directory {} is not reachable from here",
                data_dir.display()
            ));
        }
        let cache = ColdCache { data_dir };
        let files = cache.files(client, &[probe_rel.to_string()]).await?;
        let files2 = files.clone();
        tokio::task::spawn_blocking(move || evict(&files2))
            .await
            .map_err(|e| e.to_string())??;
        Ok(cache)
    }

    /// The files of the given relations (all segments, and the visibility map).
    pub(crate) async fn files(
        &self,
        client: &Client,
        qualified: &[String],
    ) -> Result<Vec<PathBuf>, String> {
        let mut out = Vec::new();
        for q in qualified {
            let row = client
                .query_one("SELECT pg_relation_filepath($1::text::regclass)", &[q])
                .await
                .map_err(|e| crate::server::error::describe_query_error(&e))?;
            let Some(rel): Option<String> = row.get(0) else {
                continue;
            };
            let base = self.data_dir.join(rel);
            out.extend(segments(&base));
            let vm = PathBuf::from(format!("{}_vm", base.display()));
            if vm.exists() {
                out.push(vm);
            }
        }
        Ok(out)
    }
}

/// `base`, `base.1`, `base.2`, … while they exist.
fn segments(base: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if base.exists() {
        out.push(base.to_path_buf());
    }
    for n in 1.. {
        let p = PathBuf::from(format!("{}.{n}", base.display()));
        if !p.exists() {
            break;
        }
        out.push(p);
    }
    out
}

/// Write back and drop the files' cached pages (blocking).
pub(crate) fn evict(files: &[PathBuf]) -> Result<(), String> {
    for f in files {
        let file = match File::open(f) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "cannot open the server's file {} ({e}): run pglab as the server's OS user or root",
                    f.display()
                ));
            }
        };
        // Dirty pages are not dropped: write them back first (allowed on a read-only fd).
        let _ = file.sync_data();
        posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
            .map_err(|e| format!("posix_fadvise on {}: {e}", f.display()))?;
    }
    Ok(())
}
