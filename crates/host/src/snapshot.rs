//! A one-off reading of the machine: CPU, memory, cgroup limits, OS, and the filesystem that
//! holds the data directory.
//!
//! Everything here is best effort: a value the platform will not tell becomes `"unknown"`,
//! `None` or zero, and nothing panics. The mount table is read from `/proc/self/mountinfo`
//! rather than from `sysinfo::Disks`, because `sysinfo` leaves out tmpfs and network mounts, and
//! a data directory on one of those must not be attributed to the root filesystem.

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

/// What the host looked like at one moment. Serialisable, so it can travel with results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostSnapshot {
    pub hostname: String,
    /// CPU brand string, e.g. "AMD EPYC 7B13".
    pub cpu_model: String,
    pub physical_cores: Option<usize>,
    pub logical_cores: usize,
    /// Bytes.
    pub total_memory: u64,
    /// Bytes the kernel thinks can be allocated without swapping (`MemAvailable`).
    pub available_memory: u64,
    pub total_swap: u64,
    pub used_swap: u64,
    /// 1, 5 and 15 minute load averages.
    pub load: [f64; 3],
    /// Limits of the cgroup pglab runs in, when any is set.
    pub cgroup: Option<CgroupLimits>,
    /// Distribution name and version, e.g. "Debian GNU/Linux 12".
    pub os: String,
    /// Kernel release, e.g. "6.1.0-27-amd64".
    pub kernel: String,
    /// Filesystem of the data directory, when one was given and could be resolved.
    pub disk: Option<DiskInfo>,
}

/// Resource limits of the cgroup this process runs in (the tightest along its ancestry).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CgroupLimits {
    /// Bytes, from cgroup v2 `memory.max` (or v1 `memory.limit_in_bytes`); `None` when unlimited.
    /// Reported as set, even when it exceeds the physical memory.
    pub memory_max: Option<u64>,
    /// CPUs, from cgroup v2 `cpu.max` quota/period (or v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`);
    /// `None` when unlimited.
    pub cpu_max: Option<f64>,
}

/// The filesystem a directory lives on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DiskInfo {
    /// The directory asked about, as given (it need not exist yet).
    pub path: PathBuf,
    /// Mount point of the filesystem holding it.
    pub mount_point: PathBuf,
    /// e.g. "ext4", "xfs", "overlay", "tmpfs".
    pub fs_type: String,
    /// Mount source, e.g. "/dev/vda1"; for virtual filesystems whatever the mount table says.
    pub device: String,
    /// Bytes, from `statvfs` (`f_blocks * f_frsize`).
    pub total_bytes: u64,
    /// Bytes an unprivileged user can still write (`f_bavail * f_frsize`), on the path itself.
    pub available_bytes: u64,
}

/// The parts of a [`HostSnapshot`] that identify the machine rather than its momentary state;
/// stored with every result so results from different hosts are never compared blindly.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostFingerprint {
    pub hostname: String,
    pub cpu_model: String,
    pub physical_cores: Option<usize>,
    pub logical_cores: usize,
    pub total_memory: u64,
    pub os: String,
    pub kernel: String,
    /// e.g. "ext4 on /dev/vda (/)".
    pub filesystem: Option<String>,
}

const UNKNOWN: &str = "unknown";

/// This machine's memory in bytes (0 when it cannot be read).
pub fn total_memory() -> u64 {
    let refresh = RefreshKind::nothing().with_memory(MemoryRefreshKind::everything());
    System::new_with_specifics(refresh).map_or(0, |s| s.total_memory())
}

/// This machine's name as the history records it (`HostFingerprint::hostname`).
pub fn hostname() -> String {
    System::host_name()
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

impl HostSnapshot {
    /// Reads the host now. `data_dir`, when given, selects the filesystem reported in `disk`.
    ///
    /// Never panics and never fails: what cannot be read becomes `"unknown"`, `None` or zero.
    /// Takes a few milliseconds (it reads `/proc`); call it off the UI thread.
    pub fn read(data_dir: Option<&Path>) -> HostSnapshot {
        let refresh = RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::everything());
        let sys = match System::new_with_specifics(refresh) {
            Ok(sys) => Some(sys),
            Err(e) => {
                tracing::warn!("cannot read the host through sysinfo: {e}");
                None
            }
        };

        let cpu_model = sys
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map(|c| c.brand().trim().to_owned())
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| UNKNOWN.to_owned());
        let logical_cores = sys
            .as_ref()
            .map(|s| s.cpus().len())
            .filter(|&n| n > 0)
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1);
        let load = System::load_average()
            .map(|l| [l.one, l.five, l.fifteen])
            .unwrap_or([0.0; 3]);

        HostSnapshot {
            hostname: hostname(),
            cpu_model,
            physical_cores: System::physical_core_count().ok().filter(|&n| n > 0),
            logical_cores,
            total_memory: sys.as_ref().map_or(0, |s| s.total_memory()),
            available_memory: sys.as_ref().map_or(0, |s| s.available_memory()),
            total_swap: sys.as_ref().map_or(0, |s| s.total_swap()),
            used_swap: sys.as_ref().map_or(0, |s| s.used_swap()),
            load,
            cgroup: read_cgroup_limits(),
            os: os_description(),
            kernel: System::kernel_version()
                .ok()
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            disk: data_dir.and_then(disk_info),
        }
    }

    /// The identifying part of this snapshot.
    pub fn fingerprint(&self) -> HostFingerprint {
        HostFingerprint {
            hostname: self.hostname.clone(),
            cpu_model: self.cpu_model.clone(),
            physical_cores: self.physical_cores,
            logical_cores: self.logical_cores,
            total_memory: self.total_memory,
            os: self.os.clone(),
            kernel: self.kernel.clone(),
            filesystem: self.disk.as_ref().map(|d| {
                format!(
                    "{} on {} ({})",
                    d.fs_type,
                    d.device,
                    d.mount_point.display()
                )
            }),
        }
    }
}

/// "NAME VERSION_ID" from os-release (e.g. "Debian GNU/Linux 12"), else sysinfo's long version.
fn os_description() -> String {
    match (System::name(), System::os_version()) {
        (Ok(name), Ok(version)) if !name.is_empty() && !version.is_empty() => {
            format!("{name} {version}")
        }
        (Ok(name), _) if !name.is_empty() => name,
        _ => System::long_os_version()
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| UNKNOWN.to_owned()),
    }
}

/// The filesystem holding `path`: the mount with the longest mount-point prefix of the
/// canonicalized path (of its nearest existing ancestor when `path` does not exist yet), with
/// sizes from `statvfs`. `None` when the mount table or `statvfs` cannot be read.
pub fn disk_info(path: &Path) -> Option<DiskInfo> {
    let existing = nearest_existing(path)?;
    let mount = mount_containing(&existing)?;
    let (total_bytes, available_bytes) = statvfs_bytes(&existing)?;
    Some(DiskInfo {
        path: path.to_path_buf(),
        mount_point: mount.mount_point,
        fs_type: mount.fs_type,
        device: mount.source,
        total_bytes,
        available_bytes,
    })
}

/// Bytes an unprivileged user can still write where `path` is (or would be created):
/// `statvfs` `f_bavail * f_frsize` on its nearest existing ancestor.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let existing = nearest_existing(path)?;
    statvfs_bytes(&existing).map(|(_, available)| available)
}

/// The canonical form of `path`, or of its nearest ancestor that exists.
pub(crate) fn nearest_existing(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    let mut candidate: &Path = &absolute;
    loop {
        if let Ok(canonical) = fs::canonicalize(candidate) {
            return Some(canonical);
        }
        candidate = candidate.parent()?;
    }
}

/// `(total, available)` bytes of the filesystem holding `path`.
fn statvfs_bytes(path: &Path) -> Option<(u64, u64)> {
    match nix::sys::statvfs::statvfs(path) {
        #[allow(
            clippy::unnecessary_cast,
            reason = "c_ulong and fsblkcnt_t are narrower than u64 on some targets"
        )]
        Ok(st) => {
            let frsize = st.fragment_size() as u64;
            Some((
                (st.blocks() as u64).saturating_mul(frsize),
                (st.blocks_available() as u64).saturating_mul(frsize),
            ))
        }
        Err(e) => {
            tracing::debug!("statvfs {}: {e}", path.display());
            None
        }
    }
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MountEntry {
    pub mount_point: PathBuf,
    pub fs_type: String,
    pub source: String,
    /// `st_dev` of the filesystem; matches the first two columns of `/proc/diskstats` for
    /// filesystems on a block device.
    pub major: u32,
    pub minor: u32,
}

/// The mount holding `path` (already canonical), by longest mount-point prefix; of several
/// mounts on the same point the last one listed (the one on top) wins.
pub(crate) fn mount_containing(path: &Path) -> Option<MountEntry> {
    let table = fs::read("/proc/self/mountinfo").ok()?;
    longest_prefix(parse_mountinfo(&table), path)
}

fn longest_prefix(mounts: Vec<MountEntry>, path: &Path) -> Option<MountEntry> {
    let mut best: Option<MountEntry> = None;
    for m in mounts {
        // `Path::starts_with` compares whole components: "/data" is not a prefix of "/data2".
        if !path.starts_with(&m.mount_point) {
            continue;
        }
        let longer = best.as_ref().is_none_or(|b| {
            m.mount_point.components().count() >= b.mount_point.components().count()
        });
        if longer {
            best = Some(m);
        }
    }
    best
}

/// Parses `/proc/self/mountinfo` (see proc(5)); malformed lines are skipped.
fn parse_mountinfo(table: &[u8]) -> Vec<MountEntry> {
    table
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let fields: Vec<&[u8]> = line
                .split(|&b| b == b' ')
                .filter(|f| !f.is_empty())
                .collect();
            // id parent major:minor root mount_point options [optional…] - fstype source super
            let dash = fields.iter().position(|f| *f == b"-")?;
            if dash < 6 {
                return None;
            }
            let dev = std::str::from_utf8(fields.get(2)?).ok()?;
            let (major, minor) = dev.split_once(':')?;
            Some(MountEntry {
                mount_point: PathBuf::from(OsString::from_vec(unescape_octal(fields.get(4)?))),
                fs_type: String::from_utf8_lossy(&unescape_octal(fields.get(dash + 1)?))
                    .into_owned(),
                source: String::from_utf8_lossy(&unescape_octal(fields.get(dash + 2)?))
                    .into_owned(),
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        })
        .collect()
}

/// Undoes the kernel's `\ooo` escaping of space, tab, newline and backslash in mount fields.
fn unescape_octal(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && let Some(code) = field
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(field[i]);
            i += 1;
        }
    }
    out
}

/// Limits of this process's cgroup; `None` when there is no cgroup or no limit in it.
fn read_cgroup_limits() -> Option<CgroupLimits> {
    let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
    let limits = cgroup_limits_in(Path::new("/sys/fs/cgroup"), &membership);
    (limits.memory_max.is_some() || limits.cpu_max.is_some()).then_some(limits)
}

/// Cgroup v1 reports "no limit" as a huge page-aligned number (`0x7FFFFFFFFFFFF000`).
const V1_UNLIMITED: u64 = 1 << 62;

/// Reads limits under `root` (normally `/sys/fs/cgroup`) for the membership listed in
/// `proc_self_cgroup`, taking the tightest along the cgroup's ancestry, over both the v2 unified
/// hierarchy and v1 controllers (hybrid hosts have both).
fn cgroup_limits_in(root: &Path, proc_self_cgroup: &str) -> CgroupLimits {
    let mut memory_max: Option<u64> = None;
    let mut cpu_max: Option<f64> = None;

    for line in proc_self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if controllers.is_empty() {
            // cgroup v2 unified hierarchy.
            for dir in ancestry(root, relative) {
                if let Some(m) = read_trimmed(&dir.join("memory.max")).and_then(|s| s.parse().ok())
                {
                    memory_max = min_some(memory_max, m);
                }
                if let Some(c) = read_trimmed(&dir.join("cpu.max")).and_then(|s| parse_cpu_max(&s))
                {
                    cpu_max = min_some_f(cpu_max, c);
                }
            }
            continue;
        }
        let names: Vec<&str> = controllers.split(',').collect();
        if names.contains(&"memory") {
            for mount in [controllers, "memory"] {
                for dir in ancestry(&root.join(mount), relative) {
                    if let Some(m) = read_trimmed(&dir.join("memory.limit_in_bytes"))
                        .and_then(|s| s.parse::<u64>().ok())
                        .filter(|&m| m < V1_UNLIMITED)
                    {
                        memory_max = min_some(memory_max, m);
                    }
                }
            }
        }
        if names.contains(&"cpu") {
            for mount in [controllers, "cpu"] {
                for dir in ancestry(&root.join(mount), relative) {
                    let quota = read_trimmed(&dir.join("cpu.cfs_quota_us"))
                        .and_then(|s| s.parse::<i64>().ok());
                    let period = read_trimmed(&dir.join("cpu.cfs_period_us"))
                        .and_then(|s| s.parse::<i64>().ok());
                    if let (Some(q), Some(p)) = (quota, period)
                        && q > 0
                        && p > 0
                    {
                        cpu_max = min_some_f(cpu_max, q as f64 / p as f64);
                    }
                }
            }
        }
    }
    CgroupLimits {
        memory_max,
        cpu_max,
    }
}

/// `root/a/b/c`, `root/a/b`, `root/a`, `root`, for `relative` = "a/b/c". Directories that do
/// not exist are harmless (reading their files fails), which covers containers whose
/// `/sys/fs/cgroup` is their own cgroup although `/proc/self/cgroup` shows the host path.
fn ancestry(root: &Path, relative: &str) -> Vec<PathBuf> {
    let mut dir = root.to_path_buf();
    let mut dirs = vec![dir.clone()];
    for part in relative.split('/').filter(|p| !p.is_empty() && *p != "..") {
        dir.push(part);
        dirs.push(dir.clone());
    }
    dirs
}

/// cgroup v2 `cpu.max`: "max 100000" (no limit) or "50000 100000" (half a CPU).
fn parse_cpu_max(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let quota: f64 = it.next()?.parse().ok()?;
    let period: f64 = it.next().unwrap_or("100000").parse().ok()?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

fn min_some(a: Option<u64>, b: u64) -> Option<u64> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn min_some_f(a: Option<f64>, b: f64) -> Option<f64> {
    Some(a.map_or(b, |a| a.min(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sane_values_on_this_machine() {
        let snap = HostSnapshot::read(Some(Path::new("/tmp")));
        assert!(snap.logical_cores >= 1);
        assert!(snap.total_memory > 0);
        assert!(snap.available_memory <= snap.total_memory);
        assert!(!snap.hostname.is_empty());
        assert!(!snap.os.is_empty());
        assert!(!snap.kernel.is_empty());
        assert!(snap.load.iter().all(|l| l.is_finite() && *l >= 0.0));
        let disk = snap.disk.as_ref().expect("the filesystem of /tmp");
        assert_eq!(disk.path, Path::new("/tmp"));
        assert!(disk.total_bytes > 0);
        let fp = snap.fingerprint();
        assert_eq!(fp.logical_cores, snap.logical_cores);
        let fs = fp.filesystem.expect("a filesystem description");
        assert!(fs.contains(&disk.fs_type) && fs.contains(" on "), "{fs}");
    }

    #[test]
    fn snapshot_round_trips_through_json() {
        let mut snap = HostSnapshot::read(None);
        assert!(snap.disk.is_none());
        // Exactly representable, so the comparison does not hinge on float parsing.
        snap.load = [0.5, 1.25, 2.0];
        let json = serde_json::to_string(&snap).expect("serialise");
        let back: HostSnapshot = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, snap);
    }

    #[test]
    fn disk_info_finds_a_mount_for_tmp_and_for_paths_not_yet_created() {
        let tmp = disk_info(Path::new("/tmp")).expect("a mount for /tmp");
        let canonical = fs::canonicalize("/tmp").expect("/tmp exists");
        assert!(canonical.starts_with(&tmp.mount_point));
        assert!(tmp.available_bytes <= tmp.total_bytes);

        let dir = tempfile::tempdir().expect("tempdir");
        let future = dir.path().join("not/yet/created");
        let info = disk_info(&future).expect("nearest existing ancestor is used");
        assert_eq!(info.path, future);
        assert!(free_bytes(&future).is_some());
        assert!(free_bytes(dir.path()).is_some());
    }

    #[test]
    fn mountinfo_parsing_unescapes_and_picks_the_longest_prefix() {
        let table = b"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
            28 27 0:25 / /data rw shared:1 - tmpfs tmpfs rw\n\
            29 27 8:17 / /data2 rw - xfs /dev/sdb1 rw\n\
            30 27 8:33 / /mnt/my\\040disk rw master:2 shared:3 - ext4 /dev/sdc1 rw\n\
            31 27 8:34 / /data rw - ext4 /dev/sdc2 rw\n\
            garbage line\n";
        let mounts = parse_mountinfo(table);
        assert_eq!(mounts.len(), 5);
        assert_eq!(mounts[3].mount_point, Path::new("/mnt/my disk"));
        assert_eq!((mounts[3].major, mounts[3].minor), (8, 33));

        let pick = |p: &str| longest_prefix(mounts.clone(), Path::new(p)).map(|m| m.source);
        assert_eq!(pick("/data2/pg").as_deref(), Some("/dev/sdb1"));
        // Two mounts on /data: the later one is on top.
        assert_eq!(pick("/data/pg").as_deref(), Some("/dev/sdc2"));
        assert_eq!(pick("/mnt/my disk/x").as_deref(), Some("/dev/sdc1"));
        assert_eq!(pick("/mnt/other").as_deref(), Some("/dev/vda"));
        assert_eq!(pick("/").as_deref(), Some("/dev/vda"));
    }

    #[test]
    fn cgroup_v2_limits_take_the_tightest_ancestor() {
        let root = tempfile::tempdir().expect("tempdir");
        let leaf = root.path().join("system.slice/pg.service");
        fs::create_dir_all(&leaf).expect("mkdir");
        fs::write(root.path().join("system.slice/memory.max"), "2147483648\n").expect("write");
        fs::write(leaf.join("memory.max"), "max\n").expect("write");
        fs::write(leaf.join("cpu.max"), "150000 100000\n").expect("write");
        let limits = cgroup_limits_in(root.path(), "0::/system.slice/pg.service\n");
        assert_eq!(limits.memory_max, Some(2 << 30));
        assert_eq!(limits.cpu_max, Some(1.5));

        let none = cgroup_limits_in(root.path(), "0::/elsewhere\n");
        assert_eq!(none.memory_max, None);
        assert_eq!(none.cpu_max, None);
    }

    #[test]
    fn cgroup_v1_unlimited_is_none_and_quota_is_read() {
        let root = tempfile::tempdir().expect("tempdir");
        let mem = root.path().join("memory/job");
        let cpu = root.path().join("cpu,cpuacct/job");
        fs::create_dir_all(&mem).expect("mkdir");
        fs::create_dir_all(&cpu).expect("mkdir");
        fs::write(mem.join("memory.limit_in_bytes"), "9223372036854771712\n").expect("write");
        fs::write(cpu.join("cpu.cfs_quota_us"), "200000\n").expect("write");
        fs::write(cpu.join("cpu.cfs_period_us"), "100000\n").expect("write");
        let limits = cgroup_limits_in(root.path(), "4:memory:/job\n2:cpu,cpuacct:/job\n0::/\n");
        assert_eq!(limits.memory_max, None);
        assert_eq!(limits.cpu_max, Some(2.0));
    }

    #[test]
    fn cpu_max_parsing() {
        assert_eq!(parse_cpu_max("max 100000"), None);
        assert_eq!(parse_cpu_max("50000 100000"), Some(0.5));
        assert_eq!(parse_cpu_max(""), None);
    }
}
