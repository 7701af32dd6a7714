//! Live host readings for the sparklines: CPU, memory, disk throughput, load.
//!
//! Disk throughput comes from `/proc/diskstats` rather than `sysinfo::Disk::usage`: sysinfo
//! counts per *mount*, so bind mounts of one device (common in containers) are counted several
//! times, overlay and tmpfs roots have no counters at all, and tmpfs mounts are not listed. With
//! `/proc/diskstats` we read exactly the block device under the data directory (matched by its
//! `major:minor`), or, when that is unknown, the sum over whole physical disks (entries of
//! `/sys/block` with a `device` link), which leaves out partitions, device-mapper, md, loop and
//! zram devices that would count the same bytes twice.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

use super::snapshot::{mount_containing, nearest_existing};

/// `/proc/diskstats` counts 512-byte sectors whatever the device's own sector size.
const SECTOR_BYTES: u64 = 512;

/// One live reading of the host.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostSample {
    /// Busy share of all CPUs since the previous sample (or since the sampler was created),
    /// 0..=100.
    pub cpu_percent: f64,
    /// Bytes in use (total minus available).
    pub memory_used: u64,
    pub memory_total: u64,
    /// Bytes/s read since the previous sample; 0 on the first sample.
    pub disk_read_bps: f64,
    /// Bytes/s written since the previous sample; 0 on the first sample.
    pub disk_write_bps: f64,
    /// 1-minute load average.
    pub load1: f64,
}

/// Which `/proc/diskstats` entries to add up.
#[derive(Debug, Clone, PartialEq)]
enum IoSource {
    /// The block device holding the data directory.
    Device { major: u32, minor: u32 },
    /// Whole physical disks, by kernel name.
    WholeDisks(Vec<String>),
}

/// Cumulative disk counters at one instant.
#[derive(Debug, Clone, Copy)]
struct IoReading {
    at: Instant,
    read_bytes: u64,
    written_bytes: u64,
}

/// Produces [`HostSample`]s. Create it once and call [`HostSampler::sample`] about once a second:
/// CPU usage and disk rates are deltas since the previous call.
#[derive(Debug)]
pub struct HostSampler {
    /// `None` when sysinfo cannot read this platform; CPU and memory then read as zero.
    system: Option<System>,
    io_source: IoSource,
    previous_io: Option<IoReading>,
}

impl HostSampler {
    /// Prepares a sampler. With `data_dir`, disk rates are those of the block device holding it
    /// (when it is a real block device); otherwise of all physical disks.
    pub fn new(data_dir: Option<&Path>) -> Self {
        let refresh = RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing().with_usage())
            .with_memory(MemoryRefreshKind::nothing().with_ram());
        let system = match System::new_with_specifics(refresh) {
            Ok(system) => Some(system),
            Err(e) => {
                tracing::warn!("cannot sample the host through sysinfo: {e}");
                None
            }
        };
        HostSampler {
            system,
            io_source: choose_io_source(data_dir),
            previous_io: None,
        }
    }

    /// Takes a reading. Cheap (a few small `/proc` reads); never fails.
    pub fn sample(&mut self) -> HostSample {
        let (cpu_percent, memory_used, memory_total) = match self.system.as_mut() {
            Some(sys) => {
                sys.refresh_cpu_usage();
                sys.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
                let cpu = f64::from(sys.global_cpu_usage());
                let cpu = if cpu.is_finite() {
                    cpu.clamp(0.0, 100.0)
                } else {
                    0.0
                };
                let total = sys.total_memory();
                (cpu, total.saturating_sub(sys.available_memory()), total)
            }
            None => (0.0, 0, 0),
        };

        let now = fs_read_diskstats().map(|text| {
            let (read_bytes, written_bytes) = sum_diskstats(&text, &self.io_source);
            IoReading {
                at: Instant::now(),
                read_bytes,
                written_bytes,
            }
        });
        let (disk_read_bps, disk_write_bps) = match (self.previous_io, now) {
            (Some(prev), Some(now)) => {
                let secs = now.at.duration_since(prev.at).as_secs_f64();
                if secs > 0.0 {
                    (
                        now.read_bytes.saturating_sub(prev.read_bytes) as f64 / secs,
                        now.written_bytes.saturating_sub(prev.written_bytes) as f64 / secs,
                    )
                } else {
                    (0.0, 0.0)
                }
            }
            _ => (0.0, 0.0),
        };
        self.previous_io = now;

        HostSample {
            cpu_percent,
            memory_used,
            memory_total,
            disk_read_bps,
            disk_write_bps,
            load1: System::load_average().map_or(0.0, |l| l.one),
        }
    }
}

fn fs_read_diskstats() -> Option<String> {
    std::fs::read_to_string("/proc/diskstats").ok()
}

/// The data directory's block device when `/proc/diskstats` knows it (not so for overlay,
/// tmpfs, btrfs subvolumes, NFS: their `st_dev` is anonymous), else all whole physical disks.
fn choose_io_source(data_dir: Option<&Path>) -> IoSource {
    let device = data_dir
        .and_then(nearest_existing)
        .and_then(|p| mount_containing(&p))
        .map(|m| (m.major, m.minor));
    if let (Some((major, minor)), Some(stats)) = (device, fs_read_diskstats())
        && parse_diskstats(&stats).any(|d| d.major == major && d.minor == minor)
    {
        return IoSource::Device { major, minor };
    }
    IoSource::WholeDisks(whole_disks())
}

/// Entries of `/sys/block` backed by hardware (they have a `device` link); virtual stacks
/// (dm, md, loop, zram, ram) have none.
fn whole_disks() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("device").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// One line of `/proc/diskstats`.
#[derive(Debug, Clone, PartialEq)]
struct DiskStat<'a> {
    major: u32,
    minor: u32,
    name: &'a str,
    sectors_read: u64,
    sectors_written: u64,
}

/// Parses `/proc/diskstats`: major minor name reads merged sectors_read ms writes merged
/// sectors_written …; malformed lines are skipped.
fn parse_diskstats(text: &str) -> impl Iterator<Item = DiskStat<'_>> {
    text.lines().filter_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        Some(DiskStat {
            major: f.first()?.parse().ok()?,
            minor: f.get(1)?.parse().ok()?,
            name: f.get(2)?,
            sectors_read: f.get(5)?.parse().ok()?,
            sectors_written: f.get(9)?.parse().ok()?,
        })
    })
}

/// Cumulative (read, written) bytes of the selected devices.
fn sum_diskstats(text: &str, source: &IoSource) -> (u64, u64) {
    parse_diskstats(text)
        .filter(|d| match source {
            IoSource::Device { major, minor } => d.major == *major && d.minor == *minor,
            IoSource::WholeDisks(names) => names.iter().any(|n| n == d.name),
        })
        .fold((0u64, 0u64), |(r, w), d| {
            (
                r.saturating_add(d.sectors_read.saturating_mul(SECTOR_BYTES)),
                w.saturating_add(d.sectors_written.saturating_mul(SECTOR_BYTES)),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISKSTATS: &str = "\
   7       0 loop0 10 0 80 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 31754 6111 5431938 42001 6171 35005 7028432 42109 0 10356 86144 5358 63 235720 2005 30 28
 254       1 vda1 100 0 200 0 10 0 400 0 0 0 0
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
short line
";

    #[test]
    fn diskstats_sums_the_chosen_devices_only() {
        let vda = IoSource::Device {
            major: 254,
            minor: 1,
        };
        assert_eq!(sum_diskstats(DISKSTATS, &vda), (200 * 512, 400 * 512));
        let whole = IoSource::WholeDisks(vec!["vda".to_owned()]);
        assert_eq!(
            sum_diskstats(DISKSTATS, &whole),
            (5_431_938 * 512, 7_028_432 * 512)
        );
        assert_eq!(
            sum_diskstats(DISKSTATS, &IoSource::WholeDisks(Vec::new())),
            (0, 0)
        );
        assert_eq!(parse_diskstats(DISKSTATS).count(), 4);
    }

    #[test]
    fn samples_are_sane_and_the_first_disk_rate_is_zero() {
        let mut sampler = HostSampler::new(Some(Path::new("/tmp")));
        let first = sampler.sample();
        assert_eq!(first.disk_read_bps, 0.0);
        assert_eq!(first.disk_write_bps, 0.0);
        std::thread::sleep(std::time::Duration::from_millis(50));
        let second = sampler.sample();
        for s in [first, second] {
            assert!((0.0..=100.0).contains(&s.cpu_percent), "{s:?}");
            assert!(s.memory_total > 0);
            assert!(s.memory_used <= s.memory_total);
            assert!(s.disk_read_bps.is_finite() && s.disk_read_bps >= 0.0);
            assert!(s.disk_write_bps.is_finite() && s.disk_write_bps >= 0.0);
            assert!(s.load1.is_finite() && s.load1 >= 0.0);
        }
    }

    #[test]
    fn sampler_without_a_data_dir_works() {
        let mut sampler = HostSampler::new(None);
        assert!(matches!(sampler.io_source, IoSource::WholeDisks(_)));
        assert!(sampler.sample().memory_total > 0);
    }
}
