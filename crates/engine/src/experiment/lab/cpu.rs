//! The load generator's own CPU during a trial, beside the host's: on a machine where pglab
//! and the server share cores, every CPU-second the clients spend is taken from the server,
//! so a trial whose clients used a large share of the host's CPU understates the server.
//!
//! pglab's CPU is `getrusage(RUSAGE_SELF)` (user + system, every thread of the process: the
//! loading clients, their connections' I/O, and whatever else pglab did meanwhile); the
//! host's capacity and busy share are the deltas of the first line of `/proc/stat` (or, where
//! that cannot be read, the number of CPUs × the wall time, with no busy share).

use std::time::Instant;

/// Above this share of the host's CPU capacity, a trial's load generator is named as a
/// confounder.
pub(crate) const CLIENT_CPU_LIMIT: f64 = 0.25;

/// Cumulative `/proc/stat` CPU ticks: all of them, and the idle ones (idle + iowait).
#[derive(Debug, Clone, Copy, PartialEq)]
struct HostTicks {
    total: u64,
    idle: u64,
}

/// The readings at the start of a trial's load.
pub(crate) struct CpuWindow {
    at: Instant,
    process_s: f64,
    host: Option<HostTicks>,
}

/// What a trial's window measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CpuUse {
    /// pglab's user + system CPU seconds over the window.
    pub client_cpu_s: f64,
    /// `client_cpu_s` ÷ the host's CPU capacity over the window (CPUs × seconds), 0..=1.
    pub client_cpu_share: f64,
    /// Busy share of all the host's CPUs over the window (pglab included), 0..=1.
    pub host_cpu_share: Option<f64>,
}

/// User + system CPU seconds of this process so far.
fn process_cpu_s() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The aggregate `cpu` line of `/proc/stat` (user nice system idle iowait irq softirq
/// steal …; guest time is already inside user and nice, so it is not added twice).
fn parse_proc_stat(text: &str) -> Option<HostTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 5 {
        return None;
    }
    Some(HostTicks {
        total: v.iter().sum(),
        idle: v[3] + v[4],
    })
}

fn host_ticks() -> Option<HostTicks> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

fn cpus() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// The share arithmetic: pglab's CPU seconds over the capacity (CPU-seconds) of the window,
/// and the host's busy share from tick deltas. Kept apart from the readings for the tests.
fn shares(
    client_cpu_s: f64,
    wall_s: f64,
    cpus: f64,
    host: Option<(HostTicks, HostTicks)>,
    ticks_per_s: f64,
) -> CpuUse {
    let client_cpu_s = client_cpu_s.max(0.0);
    let ticks = host.and_then(|(a, b)| {
        let total = b.total.checked_sub(a.total)?;
        let idle = b.idle.checked_sub(a.idle)?;
        (total > 0).then_some((total, idle.min(total)))
    });
    let capacity_s = match ticks {
        Some((total, _)) => total as f64 / ticks_per_s,
        None => cpus.max(1.0) * wall_s,
    };
    let client_cpu_share = if capacity_s > 0.0 {
        (client_cpu_s / capacity_s).min(1.0)
    } else {
        0.0
    };
    CpuUse {
        client_cpu_s,
        client_cpu_share,
        host_cpu_share: ticks.map(|(total, idle)| (total - idle) as f64 / total as f64),
    }
}

impl CpuWindow {
    /// Take the starting readings now.
    pub(crate) fn start() -> CpuWindow {
        CpuWindow {
            at: Instant::now(),
            process_s: process_cpu_s(),
            host: host_ticks(),
        }
    }

    /// What was used since [`CpuWindow::start`].
    pub(crate) fn finish(&self) -> CpuUse {
        let wall = self.at.elapsed().as_secs_f64();
        let host = self.host.zip(host_ticks());
        shares(
            process_cpu_s() - self.process_s,
            wall,
            cpus(),
            host,
            ticks_per_s(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_counts_idle_and_iowait_as_idle() {
        let t = parse_proc_stat("cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 1 2 3 4 5\n").unwrap();
        assert_eq!(
            t,
            HostTicks {
                total: 1000,
                idle: 840
            }
        );
        assert_eq!(parse_proc_stat("intr 1 2 3"), None);
    }

    #[test]
    fn the_share_is_of_the_whole_hosts_capacity() {
        let a = HostTicks {
            total: 1000,
            idle: 600,
        };
        let b = HostTicks {
            total: 1400,
            idle: 700,
        };
        // 400 ticks at 100/s = 4 CPU-seconds (2 CPUs × 2 s); 1.8 s of pglab = 45%.
        let u = shares(1.8, 2.0, 2.0, Some((a, b)), 100.0);
        assert!((u.client_cpu_share - 0.45).abs() < 1e-12, "{u:?}");
        assert_eq!(u.host_cpu_share, Some(0.75));
        // Without /proc/stat: CPUs × wall time, and no host share.
        let u = shares(1.0, 2.0, 2.0, None, 100.0);
        assert_eq!((u.client_cpu_share, u.host_cpu_share), (0.25, None));
        // Counters that went backwards are not trusted; a negative delta reads as 0.
        let u = shares(-0.1, 1.0, 4.0, Some((b, a)), 100.0);
        assert_eq!((u.client_cpu_s, u.client_cpu_share), (0.0, 0.0));
        assert_eq!(shares(1.0, 0.0, 2.0, None, 100.0).client_cpu_share, 0.0);
    }

    #[test]
    fn the_window_measures_this_process() {
        let w = CpuWindow::start();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 50 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let u = w.finish();
        assert!(u.client_cpu_s > 0.0 && u.client_cpu_s < 5.0, "{u:?}");
        assert!((0.0..=1.0).contains(&u.client_cpu_share), "{u:?}");
    }
}
