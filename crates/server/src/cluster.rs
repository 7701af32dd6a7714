//! The sandbox as a Citus cluster (`--citus-workers N`): a coordinator and N workers, each
//! its own postmaster on 127.0.0.1 with its own data directory, all under one directory
//! beside the single-node sandbox (`sandbox-citus2/` for two workers: each shape is its own
//! cluster, so switching shapes never moves shards). Every node is a [`Sandbox`] — the same
//! `initdb`, start, stale-pid recovery and stop — plus `shared_preload_libraries = 'citus'`.
//!
//! The coordinator's lease is the cluster's: the last pglab out stops the coordinator and
//! then every worker. The extension is created in every node's lab database and the workers
//! are registered with `citus_add_node` (the coordinator with `citus_set_coordinator_host`);
//! a worker that came back on another port is moved with `citus_update_node`, found by the
//! group id it keeps in `pg_dist_local_group`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::TargetError;
use super::connect::Target;
use super::pgbin::PgBin;
use super::sandbox::{Lease, Sandbox, SandboxStatus};
use crate::paths::Paths;

/// The most workers a sandbox cluster may have.
pub const MAX_WORKERS: u32 = 8;

/// pglab's Citus cluster: where it lives and its nodes.
#[derive(Debug, Clone)]
pub struct CitusSandbox {
    pub root: PathBuf,
    pub coordinator: Sandbox,
    pub workers: Vec<Sandbox>,
}

fn err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

/// The directory a file of the PostgreSQL installation lives in, from `pg_config` beside the
/// server programs, or Debian's layout when there is no `pg_config`.
fn install_dir(bin: &PgBin, what: &str) -> PathBuf {
    let from_pg_config = Command::new(bin.tool("pg_config"))
        .arg(what)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    from_pg_config.unwrap_or_else(|| {
        let major = bin.version.split('.').next().unwrap_or("").to_string();
        match what {
            "--pkglibdir" => bin.dir.parent().map_or_else(
                || PathBuf::from(format!("/usr/lib/postgresql/{major}/lib")),
                |p| p.join("lib"),
            ),
            _ => PathBuf::from(format!("/usr/share/postgresql/{major}")),
        }
    })
}

/// None when Citus is installed for these server programs; otherwise the sentence that says
/// how to install it.
pub fn citus_missing(bin: &PgBin) -> Option<String> {
    let lib = install_dir(bin, "--pkglibdir").join("citus.so");
    let control = install_dir(bin, "--sharedir").join("extension/citus.control");
    if lib.is_file() && control.is_file() {
        return None;
    }
    let major = bin.version.split('.').next().unwrap_or("");
    Some(format!(
        "--citus-workers needs the Citus extension for PostgreSQL {} ({} is missing) and Debian ships no Citus package: build it with shared/vendor/build-citus.sh, which installs postgresql-server-dev-{major}, build-essential and the lz4/zstd/krb5/ssl/selinux/xml/xslt/pam/readline -dev packages with apt, unpacks the Citus 13.2.2 source, applies its header fix, then runs ./configure, make and make install (about 4 minutes on 2 cores)",
        bin.version,
        if lib.is_file() {
            control.display().to_string()
        } else {
            lib.display().to_string()
        }
    ))
}

/// The lines that make a node a Citus node, appended to its `postgresql.conf` once.
const CITUS_CONF: &str = "\n# --- pglab Citus node ---\nshared_preload_libraries = 'citus'\n# every node is on 127.0.0.1: no TLS between them\ncitus.node_conninfo = 'sslmode=disable'\n";

impl CitusSandbox {
    /// Locate the cluster for `workers` workers (1..=8). Does not create anything.
    pub fn locate(
        paths: &Paths,
        pg_bin: Option<&Path>,
        fixed_port: Option<u16>,
        workers: u32,
    ) -> Result<CitusSandbox, TargetError> {
        if !(1..=MAX_WORKERS).contains(&workers) {
            return Err(err(format!(
                "--citus-workers {workers}: a sandbox cluster has 1 to {MAX_WORKERS} workers"
            )));
        }
        let base = Sandbox::locate(paths, pg_bin, fixed_port)?;
        let name = base
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sandbox".into());
        let root = base.root.with_file_name(format!("{name}-citus{workers}"));
        if root.join("coordinator").as_os_str().len() > 90 {
            return Err(err(format!(
                "the cluster directory {} is too long for a unix socket path: use a shorter --data-dir",
                root.display()
            )));
        }
        // One password for every node: each node's connections to the others read it.
        let node = |dir: String, port: Option<u16>| Sandbox {
            root: root.join(dir),
            fixed_port: port,
            passfile: root.join("pgpass"),
            ..base.clone()
        };
        Ok(CitusSandbox {
            coordinator: node("coordinator".into(), fixed_port),
            workers: (1..=workers)
                .map(|i| node(format!("worker-{i}"), None))
                .collect(),
            root,
        })
    }

    /// The Citus sandboxes of every shape (1 to 8 workers) whose directory exists.
    pub fn existing(
        paths: &Paths,
        pg_bin: Option<&Path>,
        fixed_port: Option<u16>,
    ) -> Vec<CitusSandbox> {
        (1..=MAX_WORKERS)
            .filter_map(|n| CitusSandbox::locate(paths, pg_bin, fixed_port, n).ok())
            .filter(|c| c.root.is_dir())
            .collect()
    }

    /// True when any node's postmaster runs.
    pub fn running(&self) -> bool {
        self.status()
            .iter()
            .any(|(_, s)| matches!(s, SandboxStatus::Running { .. }))
    }

    /// "the Citus sandbox with 2 workers".
    pub fn name(&self) -> String {
        format!(
            "the Citus sandbox with {} worker{}",
            self.workers.len(),
            if self.workers.len() == 1 { "" } else { "s" }
        )
    }

    /// Every node, coordinator first, with its name.
    pub fn nodes(&self) -> Vec<(String, &Sandbox)> {
        std::iter::once(("coordinator".to_string(), &self.coordinator))
            .chain(
                self.workers
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (format!("worker-{}", i + 1), w)),
            )
            .collect()
    }

    fn prepare_root(&self) -> Result<(), TargetError> {
        fs::create_dir_all(&self.root).map_err(|e| {
            err(format!(
                "cannot create the cluster directory {}: {e} (choose a writable --data-dir)",
                self.root.display()
            ))
        })
    }

    /// Start one node, making it a Citus node on its first start (the setting needs a
    /// restart). Returns its port.
    fn start_node(node: &Sandbox) -> Result<u16, TargetError> {
        let port = node.start()?;
        let marker = node.root.join("citus");
        if marker.is_file() {
            return Ok(port);
        }
        let mut f = OpenOptions::new()
            .append(true)
            .open(node.data().join("postgresql.conf"))
            .map_err(|e| err(format!("cannot configure {}: {e}", node.root.display())))?;
        f.write_all(CITUS_CONF.as_bytes())
            .map_err(|e| err(format!("cannot configure {}: {e}", node.root.display())))?;
        node.stop()?;
        let port = node.start().map_err(|e| {
            err(format!(
                "{e} (the node did not come back with shared_preload_libraries = 'citus')"
            ))
        })?;
        fs::write(&marker, "shared_preload_libraries = 'citus'\n")
            .map_err(|e| err(format!("cannot mark {}: {e}", node.root.display())))?;
        Ok(port)
    }

    /// Make sure every node exists and runs (workers first); returns the coordinator's port
    /// and the workers' ports. Registration is [`CitusSandbox::register`]'s job.
    pub fn start(&self) -> Result<(u16, Vec<u16>), TargetError> {
        if let Some(why) = citus_missing(&self.coordinator.bin) {
            return Err(err(why));
        }
        self.prepare_root()?;
        let mut ports = Vec::new();
        for w in &self.workers {
            ports.push(Self::start_node(w)?);
        }
        let coordinator = Self::start_node(&self.coordinator)?;
        Ok((coordinator, ports))
    }

    /// Start and take the cluster's lease (the coordinator's).
    pub(crate) fn open(&self) -> Result<(u16, Vec<u16>, Lease), TargetError> {
        self.prepare_root()?;
        let lease = self.coordinator.lease()?;
        let (c, w) = self.start()?;
        Ok((c, w, lease))
    }

    /// Stop every node: the coordinator first, so nothing routes to a stopped worker.
    /// Returns true when any node was running.
    pub fn stop(&self) -> Result<bool, TargetError> {
        let mut any = self.coordinator.stop()?;
        for w in &self.workers {
            any |= w.stop()?;
        }
        Ok(any)
    }

    /// Stop the workers after the coordinator's lease stopped the coordinator.
    pub(crate) fn stop_workers(workers: &[Sandbox]) -> Result<(), TargetError> {
        for w in workers {
            w.stop()?;
        }
        Ok(())
    }

    /// Stop everything and delete the cluster's directory.
    pub fn destroy(&self) -> Result<(), TargetError> {
        self.stop()?;
        if self.root.exists() {
            fs::remove_dir_all(&self.root)
                .map_err(|e| err(format!("cannot remove {}: {e}", self.root.display())))?;
        }
        Ok(())
    }

    /// Each node's state.
    pub fn status(&self) -> Vec<(String, SandboxStatus)> {
        self.nodes()
            .into_iter()
            .map(|(n, s)| (n, s.status()))
            .collect()
    }

    /// Create the extension on every node and register the workers with the coordinator
    /// (idempotent; moves a worker that restarted on another port).
    pub async fn register(&self, coordinator_port: u16, ports: &[u16]) -> Result<(), TargetError> {
        let q = |what: &str, e: tokio_postgres::Error| {
            err(format!(
                "setting up the Citus sandbox: {what}: {}",
                super::error::describe_query_error(&e)
            ))
        };
        let coordinator = Target::new(self.coordinator.conn_params(coordinator_port), true)?
            .connect()
            .await?;
        coordinator
            .batch_execute("CREATE EXTENSION IF NOT EXISTS citus")
            .await
            .map_err(|e| q("CREATE EXTENSION citus on the coordinator", e))?;
        coordinator
            .execute(
                "SELECT citus_set_coordinator_host('127.0.0.1', $1)",
                &[&(coordinator_port as i32)],
            )
            .await
            .map_err(|e| q("citus_set_coordinator_host", e))?;
        for (i, (w, port)) in self.workers.iter().zip(ports).enumerate() {
            let name = format!("worker-{}", i + 1);
            let client = Target::new(w.conn_params(*port), true)?.connect().await?;
            client
                .batch_execute("CREATE EXTENSION IF NOT EXISTS citus")
                .await
                .map_err(|e| q(&format!("CREATE EXTENSION citus on {name}"), e))?;
            let group: i32 = client
                .query_opt("SELECT groupid FROM pg_dist_local_group", &[])
                .await
                .map_err(|e| q(&format!("reading {name}'s group"), e))?
                .map(|r| r.get(0))
                .unwrap_or(0);
            let port = *port as i32;
            let known = if group > 0 {
                coordinator
                    .query_opt(
                        "SELECT nodeid, nodeport FROM pg_dist_node WHERE groupid = $1",
                        &[&group],
                    )
                    .await
                    .map_err(|e| q("reading pg_dist_node", e))?
                    .map(|r| (r.get::<_, i32>(0), r.get::<_, i32>(1)))
            } else {
                None
            };
            match known {
                Some((_, p)) if p == port => {}
                Some((id, _)) => {
                    tracing::info!("{name} moved to port {port}: citus_update_node");
                    coordinator
                        .execute(
                            "SELECT citus_update_node($1, '127.0.0.1', $2)",
                            &[&id, &port],
                        )
                        .await
                        .map_err(|e| q(&format!("citus_update_node for {name}"), e))?;
                }
                None => {
                    coordinator
                        .execute("SELECT citus_add_node('127.0.0.1', $1)", &[&port])
                        .await
                        .map_err(|e| q(&format!("citus_add_node for {name}"), e))?;
                }
            }
        }
        Ok(())
    }
}
