//! Server-side belts on every trial on a server pglab did not start: the measuring session has
//! a `statement_timeout` (the run's, 5 min unless given), a `lock_timeout` (the run's, 5 s), an
//! `idle_in_transaction_session_timeout` (a pglab that stalls between its BEGIN and its
//! COMMIT lets go on its own), and a cap on the temporary files one execution may write
//! (`--max-temp`, 256 MB by default there): `temp_file_limit` where the role may set it (the
//! server stops the statement itself), else a watch of the session's files in
//! `pg_ls_tmpdir()` where the role may read it (pglab cancels the statement), and in any case
//! the spill the untimed EXPLAIN ANALYZE of a combination reports, before its timed trials.

use std::time::Duration;

use tokio_postgres::Client;

use crate::experiment::lab::{DEFAULT_MAX_TEMP, RunCtx};
use crate::measure::units::format_bytes;
use crate::sql::settings::SessionSettings;

/// How long the measuring session may sit inside one of pglab's transactions doing nothing.
pub(crate) const IDLE_IN_TRANSACTION: &str = "30s";

/// Whether the run is on pglab's own sandbox.
pub(crate) fn on_sandbox(ctx: &RunCtx) -> bool {
    ctx.target.is_sandbox() && ctx.opts.sandbox.is_some()
}

/// The temporary files one execution may write: `--max-temp`, else the default on a server
/// pglab did not start, else no cap.
pub(crate) fn max_temp(ctx: &RunCtx) -> Option<u64> {
    ctx.opts
        .max_temp
        .or((!on_sandbox(ctx)).then_some(DEFAULT_MAX_TEMP))
        .filter(|&b| b > 0)
}

/// The belts a measuring session gets on a server pglab did not start.
pub(crate) fn add_settings(ctx: &RunCtx, s: &mut SessionSettings) {
    if !on_sandbox(ctx) {
        s.set("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION);
    }
}

/// `SET temp_file_limit` for the cap (superusers, or a role granted SET on it).
pub(crate) fn temp_file_limit_sql(cap: u64) -> String {
    format!("SET temp_file_limit = '{}kB'", (cap / 1024).max(1))
}

/// The sentence for an execution stopped past the cap; `label` names the combination (the
/// settings in effect), which is what made it spill.
pub(crate) fn sentence(name: &str, cap: u64, label: &str, how: &str) -> String {
    format!(
        "{name} wrote more than --max-temp {} of temporary files under {label} and was stopped ({how}): the setting that caused it is in that combination (a larger work_mem or hash_mem_multiplier spills less); raise --max-temp if the server can take it",
        format_bytes(cap)
    )
}

/// A watch of one backend's temporary files, on a session of its own.
pub(crate) struct TempWatch {
    client: Client,
    pid: i32,
    cap: u64,
}

const BY_PID: &str = "SELECT coalesce(sum(size), 0)::int8 FROM pg_catalog.pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp' || $1::text || '.%'";

impl TempWatch {
    /// A watch of backend `pid`, when this role may read `pg_ls_tmpdir()` (pg_monitor).
    pub(crate) async fn open(ctx: &RunCtx, pid: i32, cap: u64) -> Option<TempWatch> {
        let client = ctx.target.connect().await.ok()?;
        client.query_one(BY_PID, &[&pid]).await.ok()?;
        Some(TempWatch { client, pid, cap })
    }

    /// Wait until the backend's temporary files pass the cap; their size then.
    pub(crate) async fn over(&self) -> u64 {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let bytes: i64 = match self.client.query_one(BY_PID, &[&self.pid]).await {
                Ok(r) => r.get(0),
                Err(_) => return std::future::pending().await,
            };
            if bytes as u64 > self.cap {
                return bytes as u64;
            }
        }
    }
}
