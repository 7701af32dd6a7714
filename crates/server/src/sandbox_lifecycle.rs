//! The sandbox server's life: started on demand on a unix socket in its own directory and a
//! free 127.0.0.1 port (a restart keeps the last one when it is free), stopped on exit.
//!
//! Every pglab process using the sandbox holds a shared `flock` on `lease`; the last one out
//! (the one that can take the lock exclusively) stops the server, unless it was started with
//! `pglab sandbox start` or `--keep-sandbox`. A server left running by a killed pglab holds no
//! lease and is adopted by the next one.

use std::fs::{self, File, OpenOptions};
use std::path::PathBuf;

use super::TargetError;
use super::sandbox::{Sandbox, SandboxStatus, sandbox_err, tail_lines};
use super::sandbox_pid::{self, PidFile};

impl Sandbox {
    fn free_port() -> Result<u16, TargetError> {
        let l = std::net::TcpListener::bind("127.0.0.1:0")
            .map_err(|e| sandbox_err(format!("cannot find a free port on 127.0.0.1: {e}")))?;
        l.local_addr()
            .map(|a| a.port())
            .map_err(|e| sandbox_err(format!("cannot find a free port: {e}")))
    }

    /// The port of the last start, when it is free again: a restarted sandbox keeps its
    /// address, so a `psql` line from `pglab sandbox start` keeps working.
    fn remembered_port(&self) -> Option<u16> {
        let port: u16 = fs::read_to_string(self.root.join("port"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        std::net::TcpListener::bind(("127.0.0.1", port))
            .ok()
            .map(|_| port)
    }

    /// Remove a `postmaster.pid` whose process is gone (a crash or a SIGKILLed host), and the
    /// socket lock files it left: PostgreSQL checks their PID with `kill(pid, 0)`, which a
    /// zombie (a killed server nobody reaped) still answers, and would refuse to start.
    fn clear_stale_pid(&self) {
        let pidfile = self.data().join("postmaster.pid");
        // Only a file whose process is gone: a live process is never ours to guess about (a
        // postmaster whose pid file disappears shuts itself down).
        if matches!(
            self.pid_file(),
            PidFile::Stale | PidFile::Foreign { certain: true, .. }
        ) {
            tracing::warn!("removing stale {}", pidfile.display());
            fs::remove_file(&pidfile).ok();
        }
        sandbox_pid::clear_stale_socket_locks(&self.root);
    }

    /// Make sure the cluster exists and runs; returns the port. Reuses a running server
    /// (locking it down first when an older pglab left it open: see `sandbox_access`).
    pub fn start(&self) -> Result<u16, TargetError> {
        let fresh = !matches!(
            self.status(),
            SandboxStatus::Stopped | SandboxStatus::Running { .. }
        );
        if fresh {
            self.create()?;
        }
        self.prepare_root()?;
        let rules_changed = self.write_access_rules()?;
        match self.repair_whatif() {
            Ok(Some(said)) => tracing::warn!("{said}"),
            Ok(None) => {}
            Err(e) => tracing::warn!("putting back the sandbox's settings: {e}"),
        }
        match self.pid_file() {
            PidFile::Ours { port, .. } => {
                let port = if rules_changed {
                    self.apply_access_rules(port)?
                } else {
                    port
                };
                self.ensure_password(port)?;
                return Ok(port);
            }
            // Unsure what runs there: leave its pid file, and the server, alone.
            PidFile::Foreign {
                pid,
                what,
                certain: false,
            } => return Err(self.foreign_pid(pid, &what, "starting")),
            _ => {}
        }
        self.clear_stale_pid();
        self.launch(fresh)
    }

    /// Start the stopped server with `pg_ctl` (finishing a fresh cluster's setup): on the fixed
    /// port, or the last start's, or a free one, trying another when it was taken meanwhile.
    fn launch(&self, fresh: bool) -> Result<u16, TargetError> {
        let attempts = if self.fixed_port.is_some() { 1 } else { 5 };
        let mut last = String::new();
        for _ in 0..attempts {
            let port = match (self.fixed_port, self.remembered_port()) {
                (Some(p), _) | (None, Some(p)) => p,
                (None, None) => Self::free_port()?,
            };
            let log_len = fs::metadata(self.log_file()).map(|m| m.len()).unwrap_or(0);
            let mut c = self.command("pg_ctl");
            c.arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.log_file())
                .args(["-w", "-t", "60", "-o"])
                .arg(format!("-p {port}"))
                .arg("start");
            let out = self.run(c, "pg_ctl start")?;
            if out.status.success() {
                fs::write(self.root.join("port"), port.to_string()).ok();
                if fresh {
                    self.finish_setup(port)?;
                }
                self.ensure_password(port)?;
                return Ok(port);
            }
            let log = fs::read(self.log_file()).unwrap_or_default();
            let new =
                String::from_utf8_lossy(log.get(log_len as usize..).unwrap_or(&[])).to_string();
            last = tail_lines(&new, 3);
            if !(new.contains("could not bind") || new.contains("Address already in use")) {
                break;
            }
            if self.fixed_port.is_some() {
                return Err(sandbox_err(format!(
                    "sandbox port {port} is already taken on 127.0.0.1: choose another --sandbox-port or leave it out to pick a free one"
                )));
            }
        }
        Err(sandbox_err(format!(
            "the sandbox server did not start: {} (full log: {})",
            if last.is_empty() {
                "see the log".to_string()
            } else {
                last
            },
            self.log_file().display()
        )))
    }

    /// Stop the server (fast shutdown: sessions are cancelled, data is safe).
    pub fn stop(&self) -> Result<bool, TargetError> {
        if self.verified_postmaster("stopping")?.is_none() {
            self.clear_stale_pid();
            return Ok(false);
        }
        let mut c = self.command("pg_ctl");
        c.arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "-t", "60", "stop"]);
        let out = self.run(c, "pg_ctl stop")?;
        if !out.status.success() && self.live_postmaster().is_some() {
            return Err(sandbox_err(format!(
                "pg_ctl stop failed: {}",
                tail_lines(&String::from_utf8_lossy(&out.stderr), 2)
            )));
        }
        Ok(true)
    }

    /// Stop and delete everything.
    pub fn destroy(&self) -> Result<(), TargetError> {
        self.stop()?;
        if self.root.exists() {
            fs::remove_dir_all(&self.root)
                .map_err(|e| sandbox_err(format!("cannot remove {}: {e}", self.root.display())))?;
        }
        Ok(())
    }

    /// Ask the sandbox to stay up after pglab exits (`sandbox start`, `--keep-sandbox`).
    pub fn set_keep(&self, keep: bool) {
        if keep {
            File::create(self.keep_marker()).ok();
        } else {
            fs::remove_file(self.keep_marker()).ok();
        }
    }

    pub fn keep(&self) -> bool {
        self.keep_marker().exists()
    }

    /// Take a lease (shared lock) for this process's use of the sandbox.
    pub fn lease(&self) -> Result<Lease, TargetError> {
        self.prepare_root()?;
        let path = self.root.join("lease");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| sandbox_err(format!("cannot open {}: {e}", path.display())))?;
        file.lock_shared()
            .map_err(|e| sandbox_err(format!("cannot lock {}: {e}", path.display())))?;
        Ok(Lease {
            file: Some(file),
            path,
        })
    }

    /// Start (creating if needed) and take a lease: what `pglab` does on its way in.
    pub fn open(&self) -> Result<(u16, Lease), TargetError> {
        let lease = self.lease()?;
        let port = self.start()?;
        Ok((port, lease))
    }

    /// Give the lease back; stop the server if nobody else holds one and it is not kept.
    /// Returns true when the server was stopped.
    pub fn close(&self, mut lease: Lease, keep: bool) -> Result<bool, TargetError> {
        let Some(file) = lease.file.take() else {
            return Ok(false);
        };
        file.unlock().ok();
        let last = file.try_lock().is_ok();
        let stopped = if last && !keep && !self.keep() {
            self.stop()?
        } else {
            false
        };
        file.unlock().ok();
        Ok(stopped)
    }

    /// True when no pglab process holds a lease (for `sandbox status` and adoption).
    pub fn unused(&self) -> bool {
        let Ok(file) = File::open(self.root.join("lease")) else {
            return true;
        };
        let free = file.try_lock().is_ok();
        file.unlock().ok();
        free
    }
}

/// A process's claim on the sandbox; see [`Sandbox::close`]. Dropping it without `close`
/// releases the lock but leaves the server running (the next pglab adopts it).
#[derive(Debug)]
pub struct Lease {
    file: Option<File>,
    pub path: PathBuf,
}
