//! pglab's own throwaway PostgreSQL cluster: where it lives, created with `initdb` on first
//! use and configured, its state on disk, and how to reach it. Starting, stopping and the
//! leases of the processes using it are in [`super::sandbox_lifecycle`].
//!
//! When pglab runs as root the server runs as the unprivileged `postgres` account (PostgreSQL
//! refuses root); if the data dir is under a directory that account cannot reach (`/root`),
//! the cluster is placed under `/var/lib/pglab/` instead.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use nix::unistd::{Gid, Uid, User};

use super::TargetError;
use super::conninfo::{ConnParams, SslMode};
use super::pgbin::{self, PgBin};
/// The lease lives with starting and stopping; its name stays `sandbox::Lease`.
pub use super::sandbox_lifecycle::Lease;
use super::sandbox_pid::{self, PidFile};
use crate::paths::Paths;

/// The role and database pglab creates in its sandbox.
pub(crate) const SANDBOX_USER: &str = "pglab";
pub(crate) const SANDBOX_DB: &str = "pglab";

/// The state of the sandbox on disk and in the process table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum SandboxStatus {
    NotCreated,
    /// A directory exists but `initdb` never finished.
    Broken {
        reason: String,
    },
    Stopped,
    Running {
        pid: i32,
        port: u16,
    },
}

/// pglab's cluster: where it lives, which binaries run it, as whom.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The sandbox directory: `data/`, the socket, `server.log`, `lease`, markers.
    pub root: PathBuf,
    pub bin: PgBin,
    /// The account the server runs as when pglab runs as root.
    pub run_as: Option<(Uid, Gid, String)>,
    /// A fixed port (`--sandbox-port`); otherwise a free one is picked at each start.
    pub fixed_port: Option<u16>,
    /// The password file (libpq's pgpass format, mode 0600) holding the generated password
    /// of the `pglab` role: `<root>/pgpass`, shared by every node of a Citus sandbox.
    pub passfile: PathBuf,
}

pub(super) fn sandbox_err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

/// True when every ancestor of `path` lets others traverse it (mode o+x), so that an
/// unprivileged server account can reach it.
fn reachable_by_others(path: &Path) -> bool {
    let mut cur = Some(path);
    while let Some(p) = cur {
        if let Ok(m) = fs::metadata(p)
            && m.permissions().mode() & 0o001 == 0
        {
            return false;
        }
        cur = p.parent();
    }
    true
}

fn short_hash(s: &str) -> String {
    // FNV-1a: stable across runs and versions, unlike std's hasher.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{:08x}", h as u32)
}

impl Sandbox {
    /// Locate the sandbox for these paths. Does not create anything.
    pub fn locate(
        paths: &Paths,
        pg_bin: Option<&Path>,
        fixed_port: Option<u16>,
    ) -> Result<Sandbox, TargetError> {
        let bin = pgbin::find(pg_bin)?;
        let run_as = if Uid::effective().is_root() {
            let user = User::from_name("postgres").ok().flatten().ok_or_else(|| {
                sandbox_err(
                    "pglab runs as root, PostgreSQL refuses to, and there is no 'postgres' account to run the sandbox as: create one (useradd --system postgres) or run pglab as an ordinary user",
                )
            })?;
            Some((user.uid, user.gid, user.name))
        } else {
            None
        };
        let default_root = paths.data_dir.join("sandbox");
        let root = if run_as.is_some() && !reachable_by_others(&paths.data_dir) {
            PathBuf::from("/var/lib/pglab").join(format!(
                "sandbox-{}",
                short_hash(&paths.data_dir.to_string_lossy())
            ))
        } else {
            default_root
        };
        // The socket path (dir + "/.s.PGSQL.NNNNN") must stay under 107 bytes.
        if root.as_os_str().len() > 90 {
            return Err(sandbox_err(format!(
                "the sandbox directory {} is too long for a unix socket path: use a shorter --data-dir",
                root.display()
            )));
        }
        Ok(Sandbox {
            passfile: root.join("pgpass"),
            root,
            bin,
            run_as,
            fixed_port,
        })
    }

    pub fn data(&self) -> PathBuf {
        self.root.join("data")
    }
    pub fn log_file(&self) -> PathBuf {
        self.root.join("server.log")
    }
    pub(super) fn ready_marker(&self) -> PathBuf {
        self.root.join("ready")
    }
    pub(super) fn keep_marker(&self) -> PathBuf {
        self.root.join("keep")
    }

    /// A command for a server program, run as the server account when pglab is root.
    pub(super) fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(self.bin.tool(tool));
        // PGPASSFILE: a Citus node's own connections to the other nodes (TCP, so a
        // password) read it; the postmaster passes its environment to every backend.
        c.current_dir(&self.root)
            .env("LC_ALL", "C")
            .env("PGPASSFILE", &self.passfile)
            .env_remove("PGDATA");
        if let Some((uid, gid, name)) = &self.run_as {
            c.uid(uid.as_raw())
                .gid(gid.as_raw())
                .env("HOME", &self.root)
                .env("USER", name);
        }
        c
    }

    pub(super) fn run(&self, mut c: Command, what: &str) -> Result<Output, TargetError> {
        let out = c
            .output()
            .map_err(|e| sandbox_err(format!("cannot run {what}: {e}")))?;
        Ok(out)
    }

    /// What is there now.
    pub fn status(&self) -> SandboxStatus {
        if !self.data().join("PG_VERSION").is_file() {
            if self.root.exists() && self.data().exists() {
                return SandboxStatus::Broken {
                    reason: "initdb did not finish; the next start recreates it".into(),
                };
            }
            return SandboxStatus::NotCreated;
        }
        if !self.ready_marker().is_file() {
            return SandboxStatus::Broken {
                reason: "the cluster was not fully set up; the next start recreates it".into(),
            };
        }
        match self.live_postmaster() {
            Some((pid, port)) => SandboxStatus::Running { pid, port },
            None => SandboxStatus::Stopped,
        }
    }

    /// (pid, port) of the running postmaster, from `postmaster.pid`, when that process is
    /// alive and is this sandbox's postmaster (see [`Sandbox::pid_file`]).
    pub fn live_postmaster(&self) -> Option<(i32, u16)> {
        match self.pid_file() {
            PidFile::Ours { pid, port } => Some((pid, port)),
            _ => None,
        }
    }

    /// What `postmaster.pid` says, checked against the process table.
    pub(super) fn pid_file(&self) -> PidFile {
        sandbox_pid::read(&self.data())
    }

    /// The sentence refusing to signal `pid`, which `postmaster.pid` names but which is not
    /// this sandbox's postmaster.
    pub(super) fn foreign_pid(&self, pid: i32, what: &str, action: &str) -> TargetError {
        sandbox_err(format!(
            "not {action} the sandbox: {} names PID {pid}, which is not this sandbox's postmaster ({what}); pglab signals only the server it started — if the sandbox is not running, remove that file",
            self.data().join("postmaster.pid").display()
        ))
    }

    /// The running postmaster, verified; Err with a sentence when the pid file names a
    /// process that is not ours; Ok(None) when nothing runs.
    pub(super) fn verified_postmaster(&self, action: &str) -> Result<Option<i32>, TargetError> {
        match self.pid_file() {
            PidFile::Ours { pid, .. } => Ok(Some(pid)),
            PidFile::Foreign { pid, what, .. } => Err(self.foreign_pid(pid, &what, action)),
            PidFile::Missing | PidFile::Stale => Ok(None),
        }
    }

    pub(super) fn prepare_root(&self) -> Result<(), TargetError> {
        fs::create_dir_all(&self.root).map_err(|e| {
            sandbox_err(format!(
                "cannot create the sandbox directory {}: {e} (choose a writable --data-dir)",
                self.root.display()
            ))
        })?;
        if let Some((uid, gid, _)) = &self.run_as {
            nix::unistd::chown(&self.root, Some(*uid), Some(*gid)).map_err(|e| {
                sandbox_err(format!(
                    "cannot hand {} to the server account: {e}",
                    self.root.display()
                ))
            })?;
        }
        // The socket lives here: no other account may enter (root, pglab's own account when
        // it runs as root, passes anyway).
        fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700)).map_err(|e| {
            sandbox_err(format!(
                "cannot close {} to other accounts: {e}",
                self.root.display()
            ))
        })?;
        Ok(())
    }

    /// Run `initdb` (removing a half-made cluster first) and configure the cluster.
    pub(crate) fn create(&self) -> Result<(), TargetError> {
        if let SandboxStatus::Broken { .. } = self.status() {
            tracing::warn!("removing a half-created sandbox at {}", self.root.display());
            fs::remove_dir_all(self.data()).ok();
            fs::remove_file(self.ready_marker()).ok();
        }
        self.prepare_root()?;
        let started = Instant::now();
        let mut c = self.command("initdb");
        // Nobody may connect until pglab's own rules are in place (before the first start).
        c.arg("-D").arg(self.data()).args([
            "-A",
            "reject",
            "-U",
            SANDBOX_USER,
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]);
        let out = self.run(c, "initdb")?;
        if !out.status.success() {
            let tail = tail_lines(&String::from_utf8_lossy(&out.stderr), 3);
            fs::remove_dir_all(self.data()).ok();
            return Err(sandbox_err(format!(
                "initdb failed for the sandbox in {}: {tail}",
                self.root.display()
            )));
        }
        let conf = format!(
            "\n# --- pglab sandbox ---\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nfsync = on\nlogging_collector = off\nmax_connections = 100\ninclude_if_exists = 'pglab.conf'\n",
            self.root.display()
        );
        let mut f = OpenOptions::new()
            .append(true)
            .open(self.data().join("postgresql.conf"))
            .map_err(|e| sandbox_err(format!("cannot configure the sandbox: {e}")))?;
        f.write_all(conf.as_bytes())
            .map_err(|e| sandbox_err(format!("cannot configure the sandbox: {e}")))?;
        tracing::info!("sandbox initdb took {:.2?}", started.elapsed());
        Ok(())
    }

    /// After the first start: the lab database, then the marker that says the cluster is whole.
    pub(super) fn finish_setup(&self, port: u16) -> Result<(), TargetError> {
        let mut c = self.command("psql");
        // psql lives beside pg_ctl in every layout we accept; fall back to createdb otherwise.
        if !self.bin.tool("psql").is_file() {
            c = self.command("createdb");
            c.args(["-h"]).arg(&self.root).args([
                "-p",
                &port.to_string(),
                "-U",
                SANDBOX_USER,
                SANDBOX_DB,
            ]);
        } else {
            c.args(["-X", "-q", "-h"])
                .arg(&self.root)
                .args([
                    "-p",
                    &port.to_string(),
                    "-U",
                    SANDBOX_USER,
                    "-d",
                    "postgres",
                    "-c",
                ])
                .arg(format!("CREATE DATABASE {SANDBOX_DB}"));
        }
        let out = self.run(c, "createdb")?;
        if !out.status.success() {
            return Err(sandbox_err(format!(
                "could not create the sandbox database: {}",
                tail_lines(&String::from_utf8_lossy(&out.stderr), 2)
            )));
        }
        File::create(self.ready_marker())
            .map_err(|e| sandbox_err(format!("cannot mark the sandbox ready: {e}")))?;
        Ok(())
    }

    /// Connection parameters for the running sandbox.
    pub fn conn_params(&self, port: u16) -> ConnParams {
        ConnParams {
            hosts: vec![self.root.to_string_lossy().into_owned()],
            port,
            user: SANDBOX_USER.into(),
            dbname: SANDBOX_DB.into(),
            password: None,
            sslmode: SslMode::Disable,
            sslrootcert: None,
            sslcert: None,
            sslkey: None,
            sslcrl: None,
            target_session_attrs: Default::default(),
            application_name: "pglab".into(),
            connect_timeout_s: Some(10),
            passfile: Some(self.passfile.clone()),
            options: None,
        }
    }
}

pub(super) fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_stable() {
        assert_eq!(
            short_hash("/root/.local/share/pglab"),
            short_hash("/root/.local/share/pglab")
        );
        assert_ne!(short_hash("/a"), short_hash("/b"));
        assert_eq!(tail_lines("a\n\nb\nc\n", 2), "b | c");
    }
}
