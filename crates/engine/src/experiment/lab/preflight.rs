//! The pre-run check both front ends call: never write to a standby or a read-only server,
//! never fill the disk, never take the server's last connection slots.

use std::path::Path;

use super::experiment::{Experiment, each_kind};
use super::field::Cost;
use super::spec::ExperimentSpec;
use crate::measure::units::format_bytes;
use crate::server::ServerSnapshot;

/// Experiments write; refuse when the server cannot or should not take writes.
pub(crate) fn may_write(server: &ServerSnapshot) -> Result<(), String> {
    if server.in_recovery {
        return Err("the target is a standby (pg_is_in_recovery() is true): experiments write, so they run only on a primary; use --observe to watch it".into());
    }
    if server
        .setting("default_transaction_read_only")
        .is_some_and(|s| s.value == "on")
    {
        return Err("the target defaults to read-only transactions (default_transaction_read_only = on): experiments need to write; point pglab at a writable database or use --observe".into());
    }
    Ok(())
}

/// Whether a run writes on a server pglab did not start (each kind says, `foreign_writes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ForeignWrites {
    /// It always writes (its own tables).
    Always,
    /// It writes because the user asked for what this names (a query's `--setup`).
    Asked(&'static str),
    /// It only reads: it runs on a standby, in a read-only database, as a SELECT-only role.
    Never,
}

/// May `spec` run on this server? A run that writes ([`ForeignWrites`]) needs a server that
/// takes writes ([`may_write`]); one that writes only because it was asked to says what
/// writes; one that only reads runs anywhere. On pglab's own sandbox every run may write.
pub(crate) fn may_run(
    server: &ServerSnapshot,
    spec: &ExperimentSpec,
    on_sandbox: bool,
) -> Result<(), String> {
    if on_sandbox {
        return may_write(server);
    }
    match each_kind!(spec, s => s.foreign_writes()) {
        ForeignWrites::Always => may_write(server),
        ForeignWrites::Asked(what) => may_write(server).map_err(|why| {
            format!("{what} writes, and {why}; without it the run only reads and measures here")
        }),
        ForeignWrites::Never => Ok(()),
    }
}

/// The verdict on a run's estimated cost against what the server has.
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    pub cost: Cost,
    pub free_bytes: Option<u64>,
    /// A reason the run must not start.
    pub refuse: Option<String>,
    /// The run fits but is big enough to ask first.
    pub confirm: Option<String>,
    pub warnings: Vec<String>,
}

/// Default size above which a run asks for confirmation.
pub const CONFIRM_ABOVE: u64 = 10 * 1024 * 1024 * 1024;

/// The disk a run may use: the free space of the server's data filesystem when it is local
/// (None: remote, unknown), capped by the run's own budget when it has one.
pub fn free_space(local_data_dir: Option<&Path>, budget: Option<u64>) -> Option<u64> {
    let free = local_data_dir.and_then(crate::host::free_bytes);
    match (free, budget) {
        (Some(f), Some(b)) => Some(f.min(b)),
        (f, b) => f.or(b),
    }
}

/// Check a spec against the disk it may use (see [`free_space`]; None when unknown) and the
/// server's free connection slots. growth fills only the steps that fit and projects the
/// rest, so its cost is costed with the same free space the run will see.
pub fn preflight(
    spec: &ExperimentSpec,
    free_bytes: Option<u64>,
    server: Option<&ServerSnapshot>,
    confirm_above: u64,
) -> Preflight {
    let cost = spec.estimate_with_free(free_bytes);
    let mut p = Preflight {
        cost: cost.clone(),
        free_bytes,
        refuse: None,
        confirm: None,
        warnings: Vec::new(),
    };
    let need = cost.disk_bytes();
    match free_bytes {
        Some(free) if need > free => {
            p.refuse = Some(format!(
                "this run needs about {} of disk (table {}, indexes {}, temp and WAL {}) but only {} is free on the server's filesystem: use fewer rows",
                format_bytes(need),
                format_bytes(cost.table_bytes),
                format_bytes(cost.index_bytes),
                format_bytes(cost.temp_bytes + cost.wal_bytes),
                format_bytes(free)
            ));
        }
        Some(_) => {}
        None => p.warnings.push(format!(
            "free space on the server cannot be checked from here (remote target); this run needs about {}",
            format_bytes(need)
        )),
    }
    if p.refuse.is_none() && need > confirm_above {
        p.confirm = Some(format!(
            "this run will use about {} of disk: start it?",
            format_bytes(need)
        ));
    }
    if let Some(why) =
        server.and_then(|s| super::distribute::refuse_without_citus(s, &spec.distributed_columns()))
    {
        p.refuse = Some(why);
        return p;
    }
    if let Some(citus) = server.and_then(|s| s.citus.as_ref()) {
        let workers = citus.workers().len() as u32;
        p.warnings
            .extend(each_kind!(spec, s => s.citus_notes(citus.shard_count, workers)));
    }
    if let Some(free_slots) = server.and_then(|s| s.free_connection_slots())
        && cost.connections as i64 > free_slots
    {
        p.refuse = Some(format!(
            "this run needs {} connections but the server has only {} free (max_connections minus those in use minus superuser_reserved_connections): use fewer clients",
            cost.connections,
            free_slots.max(0)
        ));
    }
    p
}
