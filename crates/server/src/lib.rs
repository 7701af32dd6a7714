//! The server pglab experiments on: connecting the libpq way, pglab's own sandbox cluster,
//! and snapshots of the server.

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as server;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_paths as paths;
#[allow(unused_imports)]
use pglab_sql as sql;

pub mod cancel;
pub mod citus;
pub mod cluster;
pub mod connect;
pub mod conninfo;
/// What a server error means, in a sentence (it lives in the SQL foundation: [`crate::sql::error`]).
pub use crate::sql::error;
pub mod lean;
pub mod libpq;
pub mod pgbin;
pub mod pgpass;
pub mod pq_async;
pub mod relay;
pub mod replication;
pub mod sandbox;
pub mod sandbox_access;
pub mod sandbox_lifecycle;
pub mod sandbox_pid;
pub mod sandbox_settings;
pub mod service;
pub mod session_attrs;
pub mod snapshot;
pub mod standby;
pub mod standby_relay;
pub mod tls;
pub mod tls_files;

use std::path::PathBuf;
use std::sync::Arc;

pub use citus::{CitusInfo, CitusNode, ClusterShape};
pub use cluster::CitusSandbox;
pub use connect::{Location, Target};
pub use error::TargetError;
pub use sandbox::{Lease, Sandbox, SandboxStatus};
pub use sandbox_settings::WhatIfJournal;
pub use snapshot::{ServerFingerprint, ServerSnapshot};
pub use standby::Standby;

use crate::paths::Paths;

/// How the user chose the target on the command line.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// `--db`: a URL or key=value conninfo.
    pub db: Option<String>,
    /// `--sandbox`: use the sandbox even when `PG*` variables name a server.
    pub force_sandbox: bool,
    pub pg_bin: Option<PathBuf>,
    pub keep_sandbox: bool,
    pub sandbox_port: Option<u16>,
    /// `--citus-workers N`: the sandbox is a Citus cluster with N workers.
    pub citus_workers: Option<u32>,
}

impl TargetOptions {
    /// True when the sandbox is the target: no `--db` and no `PG*` variable naming a server.
    pub fn wants_sandbox(&self) -> bool {
        self.force_sandbox
            || (self.db.is_none() && !conninfo::env_names_target(&conninfo::ProcessEnv))
    }
}

/// pglab's use of its sandbox for the life of a process: returns the lease on close.
#[derive(Debug)]
pub struct SandboxSession {
    pub sandbox: Sandbox,
    lease: Option<Lease>,
    keep: bool,
    /// A Citus sandbox's workers, stopped after the coordinator when its lease stops it.
    workers: Vec<Sandbox>,
}

impl SandboxSession {
    /// Give the sandbox back: stops the server when this was its last user and it is not
    /// kept. Returns true when the server was stopped.
    pub fn close(mut self) -> Result<bool, TargetError> {
        self.give_back()
    }

    fn give_back(&mut self) -> Result<bool, TargetError> {
        let Some(l) = self.lease.take() else {
            return Ok(false);
        };
        let stopped = self.sandbox.close(l, self.keep)?;
        if stopped {
            CitusSandbox::stop_workers(&self.workers)?;
            standby::stop_all(&self.sandbox)?;
        }
        Ok(stopped)
    }
}

impl Drop for SandboxSession {
    fn drop(&mut self) {
        if let Err(e) = self.give_back() {
            tracing::warn!("stopping the sandbox: {e}");
        }
    }
}

/// A target ready to use, and the sandbox session behind it when it is the sandbox.
pub struct Opened {
    pub target: Arc<Target>,
    pub sandbox: Option<SandboxSession>,
}

impl Opened {
    /// Done with the target: give the sandbox back (stopping it when this was its last user
    /// and it is not kept). Errors are logged; there is nothing left to do about them.
    pub async fn close(mut self) {
        if let Some(s) = self.sandbox.take() {
            match tokio::task::spawn_blocking(move || s.close()).await {
                Ok(Err(e)) => tracing::warn!("stopping the sandbox: {e}"),
                Err(e) => tracing::warn!("stopping the sandbox: {e}"),
                Ok(Ok(_)) => {}
            }
        }
    }
}

/// Resolve the target (starting the sandbox when it is the target) and check that a
/// session opens. `ask` prompts for a password when the server wants one.
pub async fn open(
    opts: &TargetOptions,
    paths: &Paths,
    ask: Option<&connect::AskPassword>,
) -> Result<(Opened, tokio_postgres::Client), TargetError> {
    if opts.wants_sandbox()
        && let Some(n) = opts.citus_workers
    {
        return open_cluster(opts, paths, n).await;
    }
    if opts.wants_sandbox() {
        let sandbox = Sandbox::locate(paths, opts.pg_bin.as_deref(), opts.sandbox_port)?;
        let sb = sandbox.clone();
        // The standbys a past `sandbox start --standbys N` made come up with the primary.
        let (port, lease) = tokio::task::spawn_blocking(move || {
            let (port, lease) = sb.open()?;
            if let Err(e) = standby::resume(&sb, port) {
                tracing::warn!("the sandbox's standbys did not come back: {e}");
            }
            Ok::<_, TargetError>((port, lease))
        })
        .await
        .map_err(|e| TargetError::Sandbox(format!("sandbox start was interrupted: {e}")))??;
        let session = SandboxSession {
            sandbox: sandbox.clone(),
            lease: Some(lease),
            keep: opts.keep_sandbox,
            workers: Vec::new(),
        };
        open_on(session, sandbox.conn_params(port)).await
    } else {
        let params = conninfo::resolve(opts.db.as_deref(), &conninfo::ProcessEnv)?;
        let target = Arc::new(Target::new(params, false)?);
        let client = target.connect_first(ask).await?;
        Ok((
            Opened {
                target,
                sandbox: None,
            },
            client,
        ))
    }
}

/// Start (or adopt) the Citus sandbox, register its workers, and open its coordinator.
async fn open_cluster(
    opts: &TargetOptions,
    paths: &Paths,
    workers: u32,
) -> Result<(Opened, tokio_postgres::Client), TargetError> {
    let cluster = CitusSandbox::locate(paths, opts.pg_bin.as_deref(), opts.sandbox_port, workers)?;
    let c = cluster.clone();
    let (port, ports, lease) = tokio::task::spawn_blocking(move || c.open())
        .await
        .map_err(|e| TargetError::Sandbox(format!("sandbox start was interrupted: {e}")))??;
    let session = SandboxSession {
        sandbox: cluster.coordinator.clone(),
        lease: Some(lease),
        keep: opts.keep_sandbox,
        workers: cluster.workers.clone(),
    };
    cluster.register(port, &ports).await?;
    open_on(session, cluster.coordinator.conn_params(port)).await
}

/// The sandbox (or the cluster's coordinator) behind `session` as the target, with a session
/// open on it.
async fn open_on(
    session: SandboxSession,
    params: conninfo::ConnParams,
) -> Result<(Opened, tokio_postgres::Client), TargetError> {
    let target = Arc::new(Target::new(params, true)?);
    let client = target.connect().await?;
    Ok((
        Opened {
            target,
            sandbox: Some(session),
        },
        client,
    ))
}
