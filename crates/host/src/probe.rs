//! Disk probes: how fast the data directory's filesystem takes a large durable write, and how
//! long one small durable write takes (what every commit waits for).
//!
//! Both are blocking functions: run them with `tokio::task::spawn_blocking`. Both refuse to
//! start when the volume would be left short (see [`super::probe_site`], which also says where
//! they may write at all), check the cancel token between writes, report progress through a
//! callback, and remove their probe file (`.pglab-probe-<pid>-<kind>` in the directory probed)
//! on every exit: success, error, cancel, and unwinding; a killed probe's file goes at the next
//! start.
//!
//! The data written is a fixed pseudo-random pattern, stamped with a counter per block, rather
//! than zeros: compressing filesystems (btrfs, ZFS with compression) and thin-provisioned or
//! deduplicating storage would otherwise store almost nothing and report fantasy speeds.
//! Generating it once keeps the probe I/O-bound rather than CPU-bound.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Default size of the sequential write: 256 MB (1024-based, as PostgreSQL writes sizes).
pub(crate) const DEFAULT_SEQ_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Default block of the sequential write: 64 kB, like `dd bs=64k`.
pub(crate) const DEFAULT_SEQ_BLOCK_BYTES: usize = 64 * 1024;
/// Default length of the fsync probe.
pub(crate) const DEFAULT_FSYNC_DURATION: Duration = Duration::from_secs(5);
/// Default block of the fsync probe: one PostgreSQL page (8 kB).
pub(crate) const DEFAULT_FSYNC_BLOCK_BYTES: usize = 8192;
/// The fsync probe cycles its writes over this much preallocated file, like `pg_test_fsync`
/// (one 16 MB WAL segment).
pub(crate) const FSYNC_REGION_BYTES: u64 = 16 * 1024 * 1024;

/// Highest latency the histogram resolves (longer ones are clamped there): one hour, in ns.
const LATENCY_HIGH_NS: u64 = 3_600_000_000_000;

/// Progress is reported in steps of at least this fraction (and always at the end).
const PROGRESS_STEP: f64 = 0.01;

/// Input of [`seq_write`].
#[derive(Debug, Clone, PartialEq)]
pub struct SeqWriteSpec {
    /// Directory to probe; must exist and be writable.
    pub dir: PathBuf,
    /// Bytes to write in all (the last block may be partial).
    pub total_bytes: u64,
    /// Size of each `write()`; 0 means the default.
    pub block_bytes: usize,
}

impl Default for SeqWriteSpec {
    fn default() -> Self {
        SeqWriteSpec {
            dir: PathBuf::from("."),
            total_bytes: DEFAULT_SEQ_TOTAL_BYTES,
            block_bytes: DEFAULT_SEQ_BLOCK_BYTES,
        }
    }
}

/// Outcome of [`seq_write`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeqWriteResult {
    pub bytes: u64,
    /// Wall time of the writes and the final `fdatasync`.
    pub seconds: f64,
    /// Decimal megabytes (1 MB = 10^6 bytes) per second, as `dd` prints them.
    pub mb_per_s: f64,
    pub dir: PathBuf,
}

/// Input of [`fsync_latency`].
#[derive(Debug, Clone, PartialEq)]
pub struct FsyncSpec {
    /// Directory to probe; must exist and be writable.
    pub dir: PathBuf,
    /// How long to keep writing; at least one operation is always timed.
    pub duration: Duration,
    /// Bytes per write; 0 means the default.
    pub block_bytes: usize,
}

impl Default for FsyncSpec {
    fn default() -> Self {
        FsyncSpec {
            dir: PathBuf::from("."),
            duration: DEFAULT_FSYNC_DURATION,
            block_bytes: DEFAULT_FSYNC_BLOCK_BYTES,
        }
    }
}

/// Outcome of [`fsync_latency`]. Latencies are of one `pwrite` + `fdatasync`, in microseconds;
/// the percentiles are accurate to 3 significant digits (and never above `max_us`, which is
/// exact).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FsyncResult {
    pub ops: u64,
    pub seconds: f64,
    pub ops_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub dir: PathBuf,
}

/// Why a probe did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cancelled")]
    Cancelled,
    /// Refused before writing anything: see [`super::probe_site::lacks_room`].
    #[error(
        "only {} free in {}: the disk probe keeps twice what it writes plus 1 GB free there (it needs {}), so it does not run; free some space or name another directory with --probe-dir",
        gb(.free), .dir.display(), gb(.need)
    )]
    NoRoom { dir: PathBuf, need: u64, free: u64 },
    #[error("cannot write the probe file in {dir}: {source}")]
    Io {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// Sequential write throughput: the equivalent of
/// `dd if=/dev/zero of=F bs=64k count=N conv=fdatasync` (but with incompressible data).
///
/// Writes `total_bytes` in `block_bytes` blocks, then one `fdatasync`; the time includes the
/// `fdatasync`, so the page cache cannot flatter the result. Cancel is checked before every
/// block; the final `fdatasync` cannot be interrupted, and a cancel that arrived during it
/// still yields [`ProbeError::Cancelled`]. Progress is the fraction written, held below 1.0
/// until the `fdatasync` has returned.
pub fn seq_write(
    spec: &SeqWriteSpec,
    cancel: &CancellationToken,
    progress: &mut dyn FnMut(f64),
) -> Result<SeqWriteResult, ProbeError> {
    let io_err = |source| ProbeError::Io {
        dir: spec.dir.clone(),
        source,
    };
    if cancel.is_cancelled() {
        return Err(ProbeError::Cancelled);
    }
    let block = if spec.block_bytes == 0 {
        DEFAULT_SEQ_BLOCK_BYTES
    } else {
        spec.block_bytes
    };
    room(&spec.dir, spec.total_bytes)?;
    let mut buf = pattern(block);
    let (_guard, mut file) = ProbeFile::create(&spec.dir, "seq").map_err(io_err)?;
    let mut reporter = Reporter::new(progress);

    let start = Instant::now();
    let mut written: u64 = 0;
    let mut n: u64 = 0;
    while written < spec.total_bytes {
        if cancel.is_cancelled() {
            return Err(ProbeError::Cancelled);
        }
        let len = usize::try_from(spec.total_bytes - written).map_or(block, |left| left.min(block));
        stamp(&mut buf, n);
        let chunk = buf.get(..len).unwrap_or(&buf);
        file.write_all(chunk).map_err(io_err)?;
        written += chunk.len() as u64;
        n += 1;
        reporter.report((written as f64 / spec.total_bytes as f64).min(0.99));
    }
    file.sync_data().map_err(io_err)?;
    let seconds = start.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
    if cancel.is_cancelled() {
        return Err(ProbeError::Cancelled);
    }
    reporter.finish();

    Ok(SeqWriteResult {
        bytes: written,
        seconds,
        mb_per_s: written as f64 / seconds / 1e6,
        dir: spec.dir.clone(),
    })
}

/// Durable small-write latency, like `pg_test_fsync`'s `fdatasync` test.
///
/// Preallocates a 16 MB file (written and fsynced, so the timed loop changes no metadata), then
/// for `duration` repeats: `pwrite` one block at the next offset (cycling over the region) and
/// `fdatasync`, timing each pair. At least one operation is timed. Cancel is checked before
/// every operation (each takes well under 100 ms on working storage). Progress is the fraction
/// of `duration` elapsed.
pub fn fsync_latency(
    spec: &FsyncSpec,
    cancel: &CancellationToken,
    progress: &mut dyn FnMut(f64),
) -> Result<FsyncResult, ProbeError> {
    let io_err = |source| ProbeError::Io {
        dir: spec.dir.clone(),
        source,
    };
    if cancel.is_cancelled() {
        return Err(ProbeError::Cancelled);
    }
    let block = if spec.block_bytes == 0 {
        DEFAULT_FSYNC_BLOCK_BYTES
    } else {
        spec.block_bytes
    };
    room(&spec.dir, FSYNC_REGION_BYTES)?;
    let (_guard, mut file) = ProbeFile::create(&spec.dir, "fsync").map_err(io_err)?;

    // Preallocate the region with real data, like pg_test_fsync does.
    let slots = (FSYNC_REGION_BYTES / block as u64).max(1);
    let region = slots * block as u64;
    let fill = pattern(DEFAULT_SEQ_BLOCK_BYTES);
    let mut filled: u64 = 0;
    while filled < region {
        if cancel.is_cancelled() {
            return Err(ProbeError::Cancelled);
        }
        let len = usize::try_from(region - filled).map_or(fill.len(), |left| left.min(fill.len()));
        let chunk = fill.get(..len).unwrap_or(&fill);
        file.write_all(chunk).map_err(io_err)?;
        filled += chunk.len() as u64;
    }
    file.sync_all().map_err(io_err)?;

    let mut buf = pattern(block);
    // A histogram (3 significant digits) rather than a list: memory stays bounded however
    // long the probe runs and however fast the storage acknowledges (tmpfs: ~1 µs per op).
    let mut latencies_ns = Histogram::<u64>::new_with_max(LATENCY_HIGH_NS, 3)
        .map_err(|e| io_err(io::Error::other(format!("latency histogram: {e}"))))?;
    let mut max_ns: u64 = 0;
    let mut reporter = Reporter::new(progress);
    let duration_secs = spec.duration.as_secs_f64();
    let start = Instant::now();
    let mut op: u64 = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(ProbeError::Cancelled);
        }
        stamp(&mut buf, op);
        let offset = (op % slots) * block as u64;
        let t0 = Instant::now();
        file.write_all_at(&buf, offset).map_err(io_err)?;
        file.sync_data().map_err(io_err)?;
        let ns = u64::try_from(t0.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .max(1);
        latencies_ns.saturating_record(ns);
        max_ns = max_ns.max(ns);
        op += 1;

        let elapsed = start.elapsed();
        if elapsed >= spec.duration {
            break;
        }
        if duration_secs > 0.0 {
            reporter.report((elapsed.as_secs_f64() / duration_secs).min(0.99));
        }
    }
    let seconds = start.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
    reporter.finish();

    // The histogram reports a bucket's upper edge; never let a percentile exceed the true max.
    let quantile_us = |q| latencies_ns.value_at_quantile(q).min(max_ns) as f64 / 1e3;
    Ok(FsyncResult {
        ops: op,
        seconds,
        ops_per_s: op as f64 / seconds,
        p50_us: quantile_us(0.5),
        p99_us: quantile_us(0.99),
        max_us: max_ns as f64 / 1e3,
        dir: spec.dir.clone(),
    })
}

/// Refuse before writing `bytes` in `dir` when its volume would be left short.
fn room(dir: &Path, bytes: u64) -> Result<(), ProbeError> {
    match super::probe_site::lacks_room(dir, bytes) {
        Some((need, free)) => Err(ProbeError::NoRoom {
            dir: dir.to_path_buf(),
            need,
            free,
        }),
        None => Ok(()),
    }
}

/// Bytes as decimal gigabytes or megabytes, for the free-space sentence.
fn gb(bytes: &u64) -> String {
    if *bytes >= 1_000_000_000 {
        format!("{:.1} GB", *bytes as f64 / 1e9)
    } else {
        format!("{:.0} MB", *bytes as f64 / 1e6)
    }
}

/// Removes the probe file when dropped, whatever way the probe ends.
#[derive(Debug)]
struct ProbeFile {
    path: PathBuf,
}

impl ProbeFile {
    /// Creates `.pglab-probe-<pid>-<kind>` in `dir`. `create_new`, so a file this probe did not
    /// create is never truncated nor, by the guard, removed.
    /// A killed probe's files in `dir` are removed first.
    fn create(dir: &Path, kind: &str) -> io::Result<(ProbeFile, File)> {
        super::probe_site::remove_stale(dir);
        let path = dir.join(format!(
            "{}{}-{kind}",
            super::probe_site::PROBE_FILE_PREFIX,
            std::process::id()
        ));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok((ProbeFile { path }, file))
    }
}

impl Drop for ProbeFile {
    fn drop(&mut self) {
        match fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("cannot remove probe file {}: {e}", self.path.display()),
        }
    }
}

/// Throttles progress callbacks to steps of [`PROGRESS_STEP`].
struct Reporter<'a> {
    progress: &'a mut dyn FnMut(f64),
    last: f64,
}

impl<'a> Reporter<'a> {
    fn new(progress: &'a mut dyn FnMut(f64)) -> Self {
        Reporter {
            progress,
            last: 0.0,
        }
    }

    fn report(&mut self, fraction: f64) {
        if fraction - self.last >= PROGRESS_STEP {
            self.last = fraction;
            (self.progress)(fraction);
        }
    }

    fn finish(&mut self) {
        self.last = 1.0;
        (self.progress)(1.0);
    }
}

/// `len` bytes of a fixed xorshift64 sequence: incompressible, and free after the first call.
fn pattern(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = Vec::with_capacity(len + 8);
    while buf.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        buf.extend_from_slice(&state.to_le_bytes());
    }
    buf.truncate(len);
    buf
}

/// Deduplicating storage works on 4 KiB pages.
const PAGE_BYTES: usize = 4096;

/// Stamps a counter into the first bytes of every 4 KiB page of block number `n`, so no two
/// pages written by a probe are identical and deduplicating storage cannot skip any.
fn stamp(buf: &mut [u8], n: u64) {
    let pages_per_block = buf.len().div_ceil(PAGE_BYTES) as u64;
    for (i, page) in buf.chunks_mut(PAGE_BYTES).enumerate() {
        let id = n.wrapping_mul(pages_per_block).wrapping_add(i as u64);
        for (dst, src) in page.iter_mut().zip(id.to_le_bytes()) {
            *dst = src;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<PathBuf> {
        fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").path())
            .collect()
    }

    fn tiny_seq(dir: &Path) -> SeqWriteSpec {
        SeqWriteSpec {
            dir: dir.to_path_buf(),
            total_bytes: 4 * 1024 * 1024,
            ..SeqWriteSpec::default()
        }
    }

    fn tiny_fsync(dir: &Path) -> FsyncSpec {
        FsyncSpec {
            dir: dir.to_path_buf(),
            duration: Duration::from_millis(200),
            ..FsyncSpec::default()
        }
    }

    #[test]
    fn seq_write_measures_and_cleans_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut seen = Vec::new();
        let r = seq_write(&tiny_seq(dir.path()), &CancellationToken::new(), &mut |f| {
            seen.push(f)
        })
        .expect("probe");
        assert_eq!(r.bytes, 4 * 1024 * 1024);
        assert!(r.seconds > 0.0 && r.mb_per_s > 0.0, "{r:?}");
        assert_eq!(r.dir, dir.path());
        assert_eq!(seen.last(), Some(&1.0));
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn seq_write_writes_a_partial_last_block() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = SeqWriteSpec {
            dir: dir.path().to_path_buf(),
            total_bytes: 100_000,
            block_bytes: 0,
        };
        let r = seq_write(&spec, &CancellationToken::new(), &mut |_| {}).expect("probe");
        assert_eq!(r.bytes, 100_000);
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn fsync_latency_measures_and_cleans_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut last = 0.0;
        let r = fsync_latency(
            &tiny_fsync(dir.path()),
            &CancellationToken::new(),
            &mut |f| last = f,
        )
        .expect("probe");
        assert!(r.ops >= 1);
        assert!(r.seconds > 0.0 && r.ops_per_s > 0.0, "{r:?}");
        assert!(r.p50_us > 0.0 && r.p50_us <= r.p99_us, "{r:?}");
        assert!(r.p99_us <= r.max_us, "{r:?}");
        assert_eq!(last, 1.0);
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn fsync_latency_times_at_least_one_op() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = FsyncSpec {
            duration: Duration::ZERO,
            ..tiny_fsync(dir.path())
        };
        let r = fsync_latency(&spec, &CancellationToken::new(), &mut |_| {}).expect("probe");
        assert_eq!(r.ops, 1);
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn pre_cancelled_probes_return_cancelled_and_leave_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let seq = seq_write(&tiny_seq(dir.path()), &cancel, &mut |_| {});
        assert!(matches!(seq, Err(ProbeError::Cancelled)), "{seq:?}");
        let fsync = fsync_latency(&tiny_fsync(dir.path()), &cancel, &mut |_| {});
        assert!(matches!(fsync, Err(ProbeError::Cancelled)), "{fsync:?}");
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn cancel_mid_run_stops_and_removes_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cancel = CancellationToken::new();
        let mut file_existed = false;
        let seq = seq_write(&tiny_seq(dir.path()), &cancel, &mut |_| {
            file_existed = !entries(dir.path()).is_empty();
            cancel.cancel();
        });
        assert!(matches!(seq, Err(ProbeError::Cancelled)), "{seq:?}");
        assert!(file_existed, "the probe file exists while the probe runs");
        assert!(entries(dir.path()).is_empty());

        let cancel = CancellationToken::new();
        let spec = FsyncSpec {
            duration: Duration::from_secs(600),
            ..tiny_fsync(dir.path())
        };
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                cancel.cancel();
            })
        };
        // Ten minutes requested: only the cancel can end this within the test's lifetime.
        let fsync = fsync_latency(&spec, &cancel, &mut |_| {});
        assert!(canceller.join().is_ok());
        assert!(matches!(fsync, Err(ProbeError::Cancelled)), "{fsync:?}");
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_an_io_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing");
        let err = seq_write(&tiny_seq(&missing), &CancellationToken::new(), &mut |_| {})
            .expect_err("no such directory");
        assert!(matches!(&err, ProbeError::Io { dir, .. } if dir == &missing));
        assert!(err.to_string().contains("cannot write the probe file in"));
    }

    #[test]
    fn pattern_is_not_zero_and_blocks_differ() {
        let mut a = pattern(64 * 1024);
        assert_eq!(a.len(), 64 * 1024);
        assert!(a.iter().filter(|&&b| b == 0).count() < a.len() / 64);
        let mut b = a.clone();
        stamp(&mut a, 1);
        stamp(&mut b, 2);
        assert_ne!(a, b);
        let pages: std::collections::HashSet<&[u8]> =
            a.chunks(PAGE_BYTES).chain(b.chunks(PAGE_BYTES)).collect();
        assert_eq!(
            pages.len(),
            2 * 64 * 1024 / PAGE_BYTES,
            "every page is unique"
        );
        assert!(pattern(3).len() == 3 && pattern(0).is_empty());
    }
}
