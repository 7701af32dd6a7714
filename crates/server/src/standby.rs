//! Physical streaming standbys of the sandbox (`pglab sandbox start --standbys N`): each its
//! own cluster beside the sandbox (`sandbox-standby1/`, …), made with `pg_basebackup -R -X
//! stream` through a replication slot of its own (`pglab_standby_1`, also the standby's
//! `application_name`), run as the same unprivileged account, with the sandbox's access rules
//! (its `pg_hba.conf` is the primary's copy: only pglab's accounts on the socket, the
//! password on 127.0.0.1; the primary lets replication in only as the role `pglab`, from the
//! socket or 127.0.0.1).
//!
//! Every node is a [`Sandbox`]: the same start (stale-pid recovery after a kill -9), stop and
//! pid checks. What makes it a standby: `standby.signal`, `primary_slot_name` (from `-R`) and
//! `primary_conninfo`, which pglab keeps in `pglab-standby.conf` and rewrites at each start —
//! the primary's socket, or with `--standby-rtt` a relay on 127.0.0.1 (see [`super::relay`]).
//! The RTT is remembered in the standby's directory (`rtt-us`) until changed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::time::Duration;

use super::TargetError;
use super::sandbox::{SANDBOX_USER, Sandbox, SandboxStatus, tail_lines};
use super::standby_relay::RelayProc;

/// The most standbys a sandbox may have.
pub const MAX_STANDBYS: u32 = 4;

fn err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

/// One standby of the sandbox.
#[derive(Debug, Clone)]
pub struct Standby {
    pub index: u32,
    pub node: Sandbox,
    pub primary: Sandbox,
}

/// What [`Standby::start`] leaves running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyUp {
    pub name: String,
    pub port: u16,
    /// The emulated round trip (None: straight to the primary's socket).
    pub rtt: Option<Duration>,
}

impl Standby {
    /// Standby `index` (1-based) of `primary`. Does not create anything.
    pub fn of(primary: &Sandbox, index: u32) -> Result<Standby, TargetError> {
        if !(1..=MAX_STANDBYS).contains(&index) {
            return Err(err(format!(
                "--standbys {index}: a sandbox has 0 to {MAX_STANDBYS} standbys"
            )));
        }
        let name = primary
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sandbox".into());
        let root = primary
            .root
            .with_file_name(format!("{name}-standby{index}"));
        if root.as_os_str().len() > 90 {
            return Err(err(format!(
                "the standby directory {} is too long for a unix socket path: use a shorter --data-dir",
                root.display()
            )));
        }
        Ok(Standby {
            index,
            node: Sandbox {
                root,
                fixed_port: None,
                ..primary.clone()
            },
            primary: primary.clone(),
        })
    }

    /// The standbys whose cluster exists (made whole by a past start), in order.
    pub fn existing(primary: &Sandbox) -> Vec<Standby> {
        (1..=MAX_STANDBYS)
            .filter_map(|i| Standby::of(primary, i).ok())
            .filter(|s| s.node.root.join("ready").is_file())
            .collect()
    }

    /// Its replication slot on the primary and its `application_name` (what
    /// `synchronous_standby_names` and `pg_stat_replication` call it).
    pub fn name(&self) -> String {
        format!("pglab_standby_{}", self.index)
    }

    pub fn relay(&self) -> RelayProc {
        RelayProc {
            dir: self.node.root.clone(),
        }
    }

    fn rtt_file(&self) -> std::path::PathBuf {
        self.node.root.join("rtt-us")
    }

    /// The RTT this standby was last started with (None: none).
    pub fn rtt(&self) -> Option<Duration> {
        let us: u64 = fs::read_to_string(self.rtt_file())
            .ok()?
            .trim()
            .parse()
            .ok()?;
        (us > 0).then(|| Duration::from_micros(us))
    }

    pub fn running(&self) -> bool {
        matches!(self.node.status(), SandboxStatus::Running { .. })
    }

    /// Make the cluster: a base backup of the running primary through a fresh slot.
    fn create(&self, primary_port: u16) -> Result<(), TargetError> {
        self.node.stop().ok();
        self.relay().stop().ok();
        fs::remove_dir_all(&self.node.root).ok();
        self.drop_slot(primary_port)?;
        self.node.prepare_root()?;
        let mut c = self.node.command("pg_basebackup");
        c.arg("-D")
            .arg(self.node.data())
            .arg("-h")
            .arg(&self.primary.root)
            .args(["-p", &primary_port.to_string(), "-U", SANDBOX_USER])
            .args(["-X", "stream", "-R", "-C", "-S", &self.name(), "--no-sync"])
            // An immediate checkpoint on the lab's own sandbox: the default spread one made
            // `sandbox start --standbys 1` wait about 90 s for nothing.
            .arg("--checkpoint=fast");
        let out = c
            .output()
            .map_err(|e| err(format!("cannot run pg_basebackup: {e}")))?;
        if !out.status.success() {
            self.drop_slot(primary_port).ok();
            fs::remove_dir_all(&self.node.root).ok();
            return Err(err(format!(
                "pg_basebackup for {} failed: {}",
                self.name(),
                tail_lines(&String::from_utf8_lossy(&out.stderr), 3)
            )));
        }
        // `-R` wrote the connection it used; pglab's own file says where the primary is now.
        let auto = self.node.data().join("postgresql.auto.conf");
        let kept: String = fs::read_to_string(&auto)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("primary_conninfo"))
            .map(|l| format!("{l}\n"))
            .collect();
        fs::write(&auto, kept).map_err(|e| err(format!("cannot configure the standby: {e}")))?;
        let conf = format!(
            "\n# --- pglab standby {} of {} ---\nunix_socket_directories = '{}'\nhot_standby = on\ninclude_if_exists = 'pglab-standby.conf'\n",
            self.name(),
            self.primary.root.display(),
            self.node.root.display()
        );
        OpenOptions::new()
            .append(true)
            .open(self.node.data().join("postgresql.conf"))
            .and_then(|mut f| f.write_all(conf.as_bytes()))
            .map_err(|e| err(format!("cannot configure the standby: {e}")))?;
        File::create(self.node.root.join("ready"))
            .map_err(|e| err(format!("cannot mark the standby ready: {e}")))?;
        Ok(())
    }

    /// Drop this standby's slot on the primary, when it is there (the walsender of a standby
    /// just stopped may hold it a moment longer: tried again for a few seconds).
    fn drop_slot(&self, primary_port: u16) -> Result<(), TargetError> {
        let sql = format!(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{}';",
            self.name()
        );
        let mut tries = 0;
        loop {
            match self.primary.psql(primary_port, &sql) {
                Err(e) if tries < 50 && e.to_string().contains("is active") => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                r => return r,
            }
        }
    }

    /// Where the standby finds the primary: its socket, or the relay at `rtt`.
    fn write_conninfo(&self, primary_port: u16, rtt: Option<Duration>) -> Result<(), TargetError> {
        let conninfo = match rtt {
            None => format!(
                "host=''{}'' port={primary_port} user={SANDBOX_USER} application_name={}",
                self.primary.root.display(),
                self.name()
            ),
            Some(rtt) => {
                let port = self.relay().ensure(primary_port, rtt / 2)?;
                format!(
                    "host=127.0.0.1 port={port} user={SANDBOX_USER} application_name={} sslmode=disable passfile=''{}''",
                    self.name(),
                    self.node.passfile.display()
                )
            }
        };
        if rtt.is_none() {
            self.relay().stop()?;
        }
        let text = format!(
            "# written by pglab at each start of the standby\nprimary_conninfo = '{conninfo}'\n"
        );
        let path = self.node.data().join("pglab-standby.conf");
        fs::write(&path, text).map_err(|e| err(format!("cannot write {}: {e}", path.display())))?;
        if let Some((uid, gid, _)) = &self.node.run_as {
            nix::unistd::chown(&path, Some(*uid), Some(*gid)).ok();
        }
        Ok(())
    }

    /// Make sure the standby exists and streams from the primary on `primary_port`; `rtt`
    /// given changes the distance (zero: none), else the last one stays. Returns its state.
    pub fn start(
        &self,
        primary_port: u16,
        rtt: Option<Duration>,
    ) -> Result<StandbyUp, TargetError> {
        if !self.node.root.join("ready").is_file() || !self.node.data().join("PG_VERSION").is_file()
        {
            self.create(primary_port)?;
        }
        let rtt = match rtt {
            Some(r) => {
                fs::write(self.rtt_file(), r.as_micros().to_string())
                    .map_err(|e| err(format!("cannot remember the standby's RTT: {e}")))?;
                (!r.is_zero()).then_some(r)
            }
            None => self.rtt(),
        };
        self.run_at(primary_port, rtt)
    }

    /// Start the standby, or have the running one read its connection again, through a
    /// relay at `rtt` (zero: straight to the primary's socket) for a run, without remembering
    /// it: its next [`Standby::start`] goes back to the distance it was started with. A run
    /// that sweeps the distance puts a standby its fault stopped back with this, at the
    /// trial's distance.
    pub fn start_at(&self, primary_port: u16, rtt: Duration) -> Result<StandbyUp, TargetError> {
        self.run_at(primary_port, (!rtt.is_zero()).then_some(rtt))
    }

    /// The standby running and streaming from `primary_port` through `rtt`'s relay (None:
    /// the primary's socket), a paused replay resumed.
    fn run_at(&self, primary_port: u16, rtt: Option<Duration>) -> Result<StandbyUp, TargetError> {
        // The role's password is the primary's (replicated): nothing to set on a standby,
        // which could not write it anyway.
        if let Ok(marker) = fs::read(self.primary.root.join("access")) {
            fs::write(self.node.root.join("access"), marker).ok();
        }
        let was_running = self.running();
        self.write_conninfo(primary_port, rtt)?;
        let port = self.node.start()?;
        if was_running {
            // A running standby reads a changed primary_conninfo with a reload; a replay left
            // paused by a run that ended without putting it back (kill -9) resumes.
            self.node.psql(port, "SELECT pg_reload_conf();")?;
            self.resume_replay()?;
        }
        Ok(StandbyUp {
            name: self.name(),
            port,
            rtt,
        })
    }

    /// Point the running standby at the primary on `primary_port` through a relay at `rtt`
    /// (zero: straight to its socket) for a run, without remembering it: its next start goes
    /// back to the distance it was started with. True when its connection changed (a new
    /// `primary_conninfo`, or a new relay), so that it connects again.
    pub fn set_distance(&self, primary_port: u16, rtt: Duration) -> Result<bool, TargetError> {
        let conf = self.node.data().join("pglab-standby.conf");
        let now = || {
            (
                fs::read_to_string(&conf).ok(),
                self.relay().running().map(|r| r.pid),
            )
        };
        let before = now();
        self.write_conninfo(primary_port, (!rtt.is_zero()).then_some(rtt))?;
        if now() == before {
            return Ok(false);
        }
        let (_, port) = self
            .node
            .live_postmaster()
            .ok_or_else(|| err(format!("{} is not running", self.name())))?;
        // A changed primary_conninfo restarts the walreceiver; a relay restarted at a new delay
        // on the same port ends its connection, and it connects again.
        self.node.psql(port, "SELECT pg_reload_conf();")?;
        Ok(true)
    }

    /// Pause WAL replay on the running standby (`pg_wal_replay_pause`): it keeps receiving
    /// and flushing, but applies nothing until [`Standby::resume_replay`].
    pub fn pause_replay(&self) -> Result<(), TargetError> {
        let (_, port) = self
            .node
            .live_postmaster()
            .ok_or_else(|| err(format!("{} is not running", self.name())))?;
        self.node.psql(port, "SELECT pg_wal_replay_pause();")
    }

    /// Resume WAL replay when the standby runs and it is paused; nothing when it is stopped
    /// (a start never comes back paused).
    pub fn resume_replay(&self) -> Result<(), TargetError> {
        let Some((_, port)) = self.node.live_postmaster() else {
            return Ok(());
        };
        self.node.psql(
            port,
            "SELECT pg_wal_replay_resume() WHERE pg_is_in_recovery() AND pg_get_wal_replay_pause_state() <> 'not paused';",
        )
    }

    /// Stop the standby and its relay. True when either was running.
    pub fn stop(&self) -> Result<bool, TargetError> {
        let node = self.node.stop()?;
        let relay = self.relay().stop()?;
        Ok(node || relay)
    }

    /// Stop it, drop its slot (when the primary runs on `primary_port`) and delete it.
    pub fn remove(&self, primary_port: Option<u16>) -> Result<(), TargetError> {
        self.stop()?;
        if let Some(p) = primary_port {
            self.drop_slot(p)?;
        }
        if self.node.root.exists() {
            fs::remove_dir_all(&self.node.root)
                .map_err(|e| err(format!("cannot remove {}: {e}", self.node.root.display())))?;
        }
        Ok(())
    }
}

/// `sandbox start --standbys N` on the primary running on `primary_port`: standbys 1..=N
/// exist and stream (at `rtt` when given), any beyond N are removed with their slots.
pub fn ensure(
    primary: &Sandbox,
    primary_port: u16,
    n: u32,
    rtt: Option<Duration>,
) -> Result<Vec<StandbyUp>, TargetError> {
    if n > MAX_STANDBYS {
        return Err(err(format!(
            "--standbys {n}: a sandbox has 0 to {MAX_STANDBYS} standbys"
        )));
    }
    for s in Standby::existing(primary).iter().filter(|s| s.index > n) {
        s.remove(Some(primary_port))?;
    }
    (1..=n)
        .map(|i| Standby::of(primary, i)?.start(primary_port, rtt))
        .collect()
}

/// After the primary started (any pglab start): the standbys it has are started again (a
/// kill -9 repaired like the primary's), each at its remembered distance.
pub fn resume(primary: &Sandbox, primary_port: u16) -> Result<Vec<StandbyUp>, TargetError> {
    Standby::existing(primary)
        .iter()
        .map(|s| s.start(primary_port, None))
        .collect()
}

/// Stop every standby of `primary` (after the primary). True when any was running.
pub fn stop_all(primary: &Sandbox) -> Result<bool, TargetError> {
    let mut any = false;
    for s in Standby::existing(primary) {
        any |= s.stop()?;
    }
    Ok(any)
}
