//! The host as a confounder: what other processes took from one trial. Read from `/proc`
//! before and after the trial: the CPU time of the whole machine (`/proc/stat`), of pglab
//! itself and of the PostgreSQL server it measures (the postmaster, found as the parent of a
//! backend, with its live children and the children it reaped), the CPU stolen by the
//! hypervisor, and the time tasks stalled waiting for memory (`/proc/pressure/memory`).
//! What the machine spent that pglab and its server did not is the neighbours' share.
//!
//! Linux only; elsewhere (or in a container without `/proc/pressure`) the readings that
//! cannot be made are None, and a trial without readings is never marked.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// A neighbour taking this many cores on average during a trial marks it as busy.
pub const BUSY_CORES: f64 = 0.5;
/// Steal or memory stalls for this share of a trial's wall time mark it as busy.
pub const BUSY_SHARE: f64 = 0.10;

/// What the host did beside one trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialHost {
    /// Wall seconds the readings cover.
    pub seconds: f64,
    /// CPU seconds taken by processes other than pglab and its server.
    pub others_cpu_s: f64,
    /// CPU seconds the hypervisor stole (all CPUs).
    pub steal_s: f64,
    /// Seconds in which some task stalled waiting for memory (None: no pressure stall
    /// information on this host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_stall_s: Option<f64>,
}

impl TrialHost {
    /// The cores the neighbours took on average.
    pub fn others_cores(&self) -> f64 {
        self.others_cpu_s / self.seconds.max(1e-6)
    }

    /// Beside a busy neighbour: other processes took [`BUSY_CORES`] or more, or steal or
    /// memory stalls took [`BUSY_SHARE`] of the trial.
    pub fn busy(&self) -> bool {
        let share = |s: f64| s / self.seconds.max(1e-6);
        self.others_cores() >= BUSY_CORES
            || share(self.steal_s) >= BUSY_SHARE
            || self.memory_stall_s.is_some_and(|m| share(m) >= BUSY_SHARE)
    }

    /// Two readings as one: their seconds and what the neighbours took added up (a growth
    /// step's writes and reads).
    pub fn plus(&self, o: &TrialHost) -> TrialHost {
        TrialHost {
            seconds: self.seconds + o.seconds,
            others_cpu_s: self.others_cpu_s + o.others_cpu_s,
            steal_s: self.steal_s + o.steal_s,
            memory_stall_s: match (self.memory_stall_s, o.memory_stall_s) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            },
        }
    }

    /// "other processes 1.2 cores, steal 0%, memory stalls 0%".
    pub fn describe(&self) -> String {
        let pct = |s: f64| format!("{:.0}%", s / self.seconds.max(1e-6) * 100.0);
        let mut s = format!(
            "other processes {:.1} cores, steal {}",
            self.others_cores(),
            pct(self.steal_s)
        );
        if let Some(m) = self.memory_stall_s {
            s.push_str(&format!(", memory stalls {}", pct(m)));
        }
        s
    }
}

/// Cumulative readings at one instant.
#[derive(Debug, Clone, Copy)]
struct Reading {
    at: Instant,
    /// Busy CPU seconds of the whole machine (user, nice, system, irq, softirq).
    busy_s: f64,
    steal_s: f64,
    /// CPU seconds of pglab and its server, children they reaped included.
    ours_s: f64,
    memory_stall_s: Option<f64>,
}

/// Measures one trial: [`HostMeter::start`] before it, [`HostMeter::finish`] after.
#[derive(Debug)]
pub struct HostMeter {
    server_backend: Option<i32>,
    start: Option<Reading>,
}

fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// (busy, steal) CPU seconds from the first line of `/proc/stat`.
fn machine(root: &Path) -> Option<(f64, f64)> {
    let text = std::fs::read_to_string(root.join("stat")).ok()?;
    let line = text.lines().next()?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
    // user nice system idle iowait irq softirq steal (guest is inside user).
    let busy = at(0) + at(1) + at(2) + at(5) + at(6);
    let hz = ticks_per_s();
    Some((busy / hz, at(7) / hz))
}

/// The fields of `/proc/<pid>/stat` after the command name.
fn stat_fields(root: &Path, pid: i32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(root.join(pid.to_string()).join("stat")).ok()?;
    let after = text.rsplit_once(')')?.1;
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// utime + stime (+ cutime + cstime with `reaped`) of `pid`, in seconds.
fn cpu_of(root: &Path, pid: i32, reaped: bool) -> f64 {
    let Some(f) = stat_fields(root, pid) else {
        return 0.0;
    };
    // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    let at = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    let own = at(11) + at(12);
    (if reaped { own + at(13) + at(14) } else { own }) / ticks_per_s()
}

fn parent_of(root: &Path, pid: i32) -> Option<i32> {
    stat_fields(root, pid)?.get(1)?.parse().ok()
}

/// Every live process whose parent is `ppid`.
fn children_of(root: &Path, ppid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| parent_of(root, pid) == Some(ppid))
        .collect()
}

/// Seconds of `some` memory stall so far (`/proc/pressure/memory`, `total=` in µs).
fn memory_stall(root: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(root.join("pressure").join("memory")).ok()?;
    let some = text.lines().find(|l| l.starts_with("some"))?;
    let total = some
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?;
    total.parse::<f64>().ok().map(|us| us / 1e6)
}

impl HostMeter {
    /// Start measuring; `server_backend` is the pid of a backend of the measured server when
    /// it runs on this host (its parent is the postmaster), None for a remote server.
    pub fn start(server_backend: Option<i32>) -> HostMeter {
        let mut m = HostMeter {
            server_backend,
            start: None,
        };
        m.start = m.read(Path::new("/proc"));
        m
    }

    fn ours(&self, root: &Path) -> f64 {
        let mut s = cpu_of(root, std::process::id() as i32, true);
        // A pid of a remote server may name some other process here: only a `postgres`
        // process is the server's.
        let is_postgres = |pid: i32| {
            std::fs::read_to_string(root.join(pid.to_string()).join("comm"))
                .is_ok_and(|c| c.trim() == "postgres")
        };
        let postmaster = self
            .server_backend
            .filter(|&b| b > 0 && is_postgres(b))
            .and_then(|b| parent_of(root, b))
            .filter(|&p| is_postgres(p));
        if let Some(pm) = postmaster.filter(|&p| p > 1) {
            s += cpu_of(root, pm, true);
            s += children_of(root, pm)
                .into_iter()
                .map(|c| cpu_of(root, c, false))
                .sum::<f64>();
        }
        s
    }

    fn read(&self, root: &Path) -> Option<Reading> {
        let (busy_s, steal_s) = machine(root)?;
        Some(Reading {
            at: Instant::now(),
            busy_s,
            steal_s,
            ours_s: self.ours(root),
            memory_stall_s: memory_stall(root),
        })
    }

    /// What the host did since [`HostMeter::start`]; None when `/proc` could not be read.
    pub fn finish(self) -> Option<TrialHost> {
        let a = self.start?;
        let b = self.read(Path::new("/proc"))?;
        let seconds = b.at.duration_since(a.at).as_secs_f64();
        Some(TrialHost {
            seconds,
            others_cpu_s: ((b.busy_s - a.busy_s) - (b.ours_s - a.ours_s)).max(0.0),
            steal_s: (b.steal_s - a.steal_s).max(0.0),
            memory_stall_s: match (a.memory_stall_s, b.memory_stall_s) {
                (Some(x), Some(y)) => Some((y - x).max(0.0)),
                _ => None,
            },
        })
    }
}

/// What the trials' host readings say about a run: None when no trial ran beside a busy
/// neighbour (or there are no readings); "confounded by host load: …" when the trials differ
/// in it (some beside a busy neighbour and some not, or the neighbours' share moved by
/// [`BUSY_CORES`] or more); else that every trial ran beside one alike.
pub fn confounded(hosts: &[TrialHost]) -> Option<String> {
    let busy = hosts.iter().filter(|h| h.busy()).count();
    if busy == 0 {
        return None;
    }
    let cores: Vec<f64> = hosts.iter().map(TrialHost::others_cores).collect();
    let lo = cores.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = cores.iter().copied().fold(0.0, f64::max);
    let n = hosts.len();
    if busy < n || hi - lo >= BUSY_CORES {
        Some(format!(
            "confounded by host load: {busy} of {n} trials ran beside a busy neighbour (other processes took {lo:.1} to {hi:.1} cores during a trial), so the differences between settings may be the neighbour's"
        ))
    } else {
        Some(format!(
            "every trial ran beside a busy neighbour (other processes took {lo:.1} to {hi:.1} cores during a trial): the figures are a loaded host's, alike for every setting"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(others: f64) -> TrialHost {
        TrialHost {
            seconds: 1.0,
            others_cpu_s: others,
            steal_s: 0.0,
            memory_stall_s: Some(0.0),
        }
    }

    #[test]
    fn a_neighbour_for_some_trials_confounds_the_run() {
        assert!(confounded(&[host(0.1), host(0.2), host(0.1)]).is_none());
        let c = confounded(&[host(0.1), host(1.6), host(0.1), host(1.7)]).unwrap();
        assert!(
            c.starts_with("confounded by host load: 2 of 4 trials"),
            "{c}"
        );
        // Busy throughout at one level: said, but not a difference between the trials.
        let all = confounded(&[host(1.0), host(1.1)]).unwrap();
        assert!(
            all.starts_with("every trial ran beside a busy neighbour"),
            "{all}"
        );
        assert!(host(0.6).busy() && !host(0.2).busy());
    }

    #[test]
    fn this_process_is_ours() {
        let m = HostMeter::start(None);
        let root = Path::new("/proc");
        let before = m.ours(root);
        let t0 = Instant::now();
        let mut x = 0u64;
        // Spin until this process has used 0.2 s of CPU (however busy the host).
        while m.ours(root) - before < 0.2 && t0.elapsed().as_secs() < 20 {
            for _ in 0..100_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
        }
        assert!(x > 0 && m.ours(root) - before >= 0.2);
        let h = m.finish().expect("/proc readable");
        // The machine's busy time covers our spin, and what is left is the neighbours'.
        assert!(h.seconds > 0.0 && h.others_cpu_s >= 0.0, "{h:?}");
    }
}
