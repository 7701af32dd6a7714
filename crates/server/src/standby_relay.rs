//! The relay process of a standby at a distance (see [`super::relay`]): pglab spawns itself as
//! `pglab __standby-relay …` in a process group of its own, tracks it by `relay.pid` in the
//! standby's directory (pid, listening port, primary port, delay), reuses it while it is
//! alive and relays to the primary's current port with the asked delay, and ends it with the
//! standby. A relay killed (kill -9) is started again by the next start, on the same port when
//! it is free, so the standby's `primary_conninfo` stays valid.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::TargetError;
use super::relay::RelaySpec;
use super::sandbox_pid::process_alive;

/// The hidden subcommand a relay process runs.
pub(crate) const RELAY_COMMAND: &str = "__standby-relay";

fn err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

/// A standby's relay: its files live in the standby's directory.
#[derive(Debug, Clone)]
pub struct RelayProc {
    pub dir: PathBuf,
}

/// What `relay.pid` says about a live relay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayRunning {
    pub pid: i32,
    pub spec: RelaySpec,
}

impl RelayProc {
    fn pid_file(&self) -> PathBuf {
        self.dir.join("relay.pid")
    }
    fn ready_file(&self) -> PathBuf {
        self.dir.join("relay.port")
    }
    fn log_file(&self) -> PathBuf {
        self.dir.join("relay.log")
    }

    /// The live relay of this standby, when `relay.pid` names a process that is it.
    pub fn running(&self) -> Option<RelayRunning> {
        let text = fs::read_to_string(self.pid_file()).ok()?;
        let f: Vec<u64> = text
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let [pid, listen, to, us] = f[..] else {
            return None;
        };
        let pid = pid as i32;
        (process_alive(pid) && self.is_ours(pid)).then_some(RelayRunning {
            pid,
            spec: RelaySpec {
                listen_port: listen as u16,
                to_port: to as u16,
                one_way: Duration::from_micros(us),
            },
        })
    }

    /// True when `pid` runs pglab's relay for this standby (its command line names our ready
    /// file): a reused PID is never signalled.
    fn is_ours(&self, pid: i32) -> bool {
        let Ok(raw) = fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let ready = self.ready_file().to_string_lossy().into_owned();
        args.iter().any(|a| a == RELAY_COMMAND) && args.contains(&ready)
    }

    /// A relay to `to_port` holding each chunk `one_way`; the one running is kept when it
    /// does exactly that. Returns the port it listens on (the one it had, when free).
    pub(crate) fn ensure(&self, to_port: u16, one_way: Duration) -> Result<u16, TargetError> {
        let previous = match self.running() {
            Some(r) if r.spec.to_port == to_port && r.spec.one_way == one_way => {
                return Ok(r.spec.listen_port);
            }
            Some(r) => {
                self.stop()?;
                Some(r.spec.listen_port)
            }
            None => self.remembered_port(),
        };
        let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        let listen_port = previous.filter(|p| free(*p)).unwrap_or(0);
        self.spawn(&RelaySpec {
            listen_port,
            to_port,
            one_way,
        })
    }

    fn remembered_port(&self) -> Option<u16> {
        fs::read_to_string(self.ready_file())
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn spawn(&self, spec: &RelaySpec) -> Result<u16, TargetError> {
        let exe = std::env::current_exe().map_err(|e| {
            err(format!(
                "cannot find pglab's own program to run the relay: {e}"
            ))
        })?;
        fs::remove_file(self.ready_file()).ok();
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_file())
            .map_err(|e| err(format!("cannot open {}: {e}", self.log_file().display())))?;
        let child = Command::new(exe)
            .arg(RELAY_COMMAND)
            .args(["--listen-port", &spec.listen_port.to_string()])
            .args(["--to-port", &spec.to_port.to_string()])
            .args(["--one-way-us", &spec.one_way.as_micros().to_string()])
            .arg("--ready-file")
            .arg(self.ready_file())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(|e| err(format!("cannot start the standby's relay: {e}")))?;
        let pid = child.id() as i32;
        let end = Instant::now() + Duration::from_secs(10);
        let port = loop {
            if let Some(p) = self.remembered_port() {
                break p;
            }
            if Instant::now() > end || !process_alive(pid) {
                return Err(err(format!(
                    "the standby's relay did not start (see {})",
                    self.log_file().display()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let text = format!(
            "{pid}\n{port}\n{}\n{}\n",
            spec.to_port,
            spec.one_way.as_micros()
        );
        crate::paths::write_atomic(&self.pid_file(), text.as_bytes())
            .map_err(|e| err(format!("cannot write {}: {e}", self.pid_file().display())))?;
        Ok(port)
    }

    /// End the relay (when it runs and is ours). True when one was running.
    pub(crate) fn stop(&self) -> Result<bool, TargetError> {
        let Some(r) = self.running() else {
            fs::remove_file(self.pid_file()).ok();
            return Ok(false);
        };
        let pid = Pid::from_raw(r.pid);
        kill(pid, Signal::SIGTERM).ok();
        if !wait_gone(r.pid, Duration::from_secs(3)) {
            kill(pid, Signal::SIGKILL).ok();
            if !wait_gone(r.pid, Duration::from_secs(3)) {
                return Err(err(format!(
                    "the standby's relay (pid {}) did not end",
                    r.pid
                )));
            }
        }
        fs::remove_file(self.pid_file()).ok();
        Ok(true)
    }
}

fn wait_gone(pid: i32, timeout: Duration) -> bool {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if !process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    !process_alive(pid)
}

/// The relay process's body (`pglab __standby-relay`): serve until killed.
pub fn run_relay(spec: &RelaySpec, ready_file: &Path) -> i32 {
    match super::relay::serve(spec, ready_file) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pglab relay: {e}");
            1
        }
    }
}
