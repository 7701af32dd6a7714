//! Where the search starts: a prior, not a grid. For each setting that matters to the
//! workload's kind, a few values around a hardware-aware starting point plus the server's
//! current value.
//!
//! The starting point is the formula pgtune uses (Alexey Vasiliev's pgtune,
//! <https://github.com/le0pard/pgtune>, its "mixed" profile): `shared_buffers` = RAM/4,
//! `effective_cache_size` = 3·RAM/4, `maintenance_work_mem` = RAM/16 (at most 2GB),
//! `wal_buffers` = 3% of `shared_buffers` (at most 16MB), `work_mem` = (RAM −
//! shared_buffers) / (3·max_connections) / max_parallel_workers_per_gather / 2,
//! `max_wal_size` 4GB, `random_page_cost` 1.1 (SSD) or 4 (HDD), `effective_io_concurrency`
//! 200 (SSD) or 2 (HDD), `max_parallel_workers_per_gather` = ⌈cores/2⌉ (at most 4). It is a
//! starting point and always one candidate; it is never the answer by itself.
//!
//! Settings that trade durability for speed are candidates only when the caller allows it,
//! and each carries the sentence saying what a crash loses.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::ExperimentKind;

const MB: u64 = 1 << 20;
const GB: u64 = 1 << 30;

/// What the prior needs to know about the machine.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Memory available to the server (the cgroup limit when lower than RAM), bytes.
    pub ram: u64,
    pub cores: usize,
    /// The disk answered like an SSD (fsync rate measured at ≥ 1000/s).
    pub ssd: bool,
    /// The server's `max_connections` (pgtune's work_mem divides by it).
    pub max_connections: u64,
}

/// The target's hardware as the DBA gave it (`--ram`, `--cores`, `--storage`), and whether the
/// server runs on this machine (then this host is read for what was not given).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GivenHardware {
    pub ram: Option<u64>,
    pub cores: Option<usize>,
    pub ssd: Option<bool>,
    /// The server is on this machine (its socket, localhost, pglab's sandbox).
    pub local: bool,
}

impl GivenHardware {
    /// What a server on another machine needs before pgtune's prior means anything: None
    /// when everything is known, else the sentence asking for it.
    pub(crate) fn missing_for_remote(&self) -> Option<String> {
        if self.local || (self.ram.is_some() && self.cores.is_some()) {
            return None;
        }
        Some("the server runs on another machine, so this host's memory and cores say nothing about it: give the server's with --ram 64GB --cores 16 (and --storage ssd|hdd) for pgtune's prior and the memory check".into())
    }
}

/// Every setting that trades durability for speed, which `--allow-durability-tradeoff`
/// opens (`auto` searches the first two; fsync only when named in `--settings`).
pub const DURABILITY: [&str; 3] = ["synchronous_commit", "full_page_writes", "fsync"];

/// A setting's own effect on a crash, for the ones that trade durability for speed.
pub(crate) fn durability_loss(name: &str) -> Option<&'static str> {
    match name {
        "synchronous_commit" => Some(
            "with synchronous_commit off a crash of the server loses the transactions of the last ~0.6 s (3 × wal_writer_delay) that clients were told had committed; the database stays consistent",
        ),
        "full_page_writes" => Some(
            "with full_page_writes off a crash (or power loss) during a page write can leave torn pages: the database may be corrupt and need restoring from a backup",
        ),
        "fsync" => Some(
            "with fsync off a crash of the operating system or a power loss can corrupt the whole cluster beyond repair: restore from a backup",
        ),
        _ => None,
    }
}

/// The settings worth searching for a workload of `kind` (`auto`), in search order: the
/// ones likely to matter most first. The experiment's own knobs (index-build's
/// `maintenance_work_mem`, ingest's `synchronous_commit`) are its parameters, not settings.
pub(crate) fn auto_settings(kind: ExperimentKind, durability: bool) -> Vec<&'static str> {
    let info = kind.info();
    let mut v = info.tune_settings.to_vec();
    if durability && info.commits {
        if !info
            .own_settings
            .iter()
            .any(|(s, _)| *s == "synchronous_commit")
        {
            v.push("synchronous_commit");
        }
        v.push("full_page_writes");
    }
    v
}

/// Which direction of a setting costs less (memory, disk, recovery time), when one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Cheaper {
    /// Less is cheaper (memory, WAL kept on disk, workers).
    Lower,
    /// Shorter recovery needs the lower value too; kept apart for the sentence.
    LowerRecovery,
}

/// The cost direction of `name` (None: no value is cheaper than another).
pub(crate) fn cheaper(name: &str) -> Option<Cheaper> {
    match name {
        "shared_buffers"
        | "work_mem"
        | "maintenance_work_mem"
        | "hash_mem_multiplier"
        | "wal_buffers"
        | "max_parallel_workers_per_gather" => Some(Cheaper::Lower),
        "max_wal_size" | "checkpoint_timeout" => Some(Cheaper::LowerRecovery),
        _ => None,
    }
}

/// pgtune's values ("mixed" profile) for the settings it has a formula for.
pub fn pgtune(hw: &Hardware) -> BTreeMap<&'static str, String> {
    let ram = hw.ram.max(256 * MB);
    let sb = ram / 4;
    let workers = hw.cores.div_ceil(2).clamp(1, 4) as u64;
    let wal_buffers = (sb * 3 / 100).clamp(32 * 1024, 16 * MB);
    // pgtune rounds wal_buffers between 14MB and 16MB up to 16MB.
    let wal_buffers = if wal_buffers > 14 * MB {
        16 * MB
    } else {
        wal_buffers
    };
    let conns = hw.max_connections.max(1);
    let work_mem = ((ram - sb) / (conns * 3) / workers / 2).max(64 * 1024);
    let mut m = BTreeMap::new();
    m.insert("shared_buffers", size(sb));
    m.insert("effective_cache_size", size(ram / 4 * 3));
    m.insert("maintenance_work_mem", size((ram / 16).min(2 * GB)));
    m.insert("wal_buffers", size(wal_buffers));
    m.insert("work_mem", size(work_mem));
    m.insert("max_wal_size", "4GB".to_string());
    m.insert(
        "random_page_cost",
        if hw.ssd { "1.1" } else { "4" }.to_string(),
    );
    m.insert(
        "effective_io_concurrency",
        if hw.ssd { "200" } else { "2" }.to_string(),
    );
    m.insert("max_parallel_workers_per_gather", workers.to_string());
    m
}

/// A size as a setting literal in whole MB when it is one (or is 64MB or more), else rounded
/// down to whole kB (the unit PostgreSQL's memory settings count in).
fn size(bytes: u64) -> String {
    // From 64MB on, whole MB (rounded down) read better than an exact kB count.
    let bytes = if bytes >= 64 * MB {
        bytes / MB * MB
    } else {
        bytes
    };
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{}MB", bytes / MB)
    } else {
        format!("{}kB", (bytes / 1024).max(1))
    }
}

/// A size as a DBA writes it: whole GB from 1GB on (`12GB`, `18GB`), the nearest power of
/// two in MB below (`30854kB` → `32MB`, `7713kB` → `8MB`), in kB below 1MB. Candidates and
/// results are written this way; pgtune's own set keeps its exact values, since it is
/// measured as the formula gives it.
pub(crate) fn dba_size(bytes: u64) -> String {
    let nearest_pow2 = |x: f64| 2f64.powf(x.log2().round()).max(1.0) as u64;
    if bytes >= GB {
        format!("{}GB", (bytes as f64 / GB as f64).round() as u64)
    } else if bytes >= MB - MB / 4 {
        let mb = nearest_pow2(bytes as f64 / MB as f64);
        if mb >= 1024 {
            "1GB".into()
        } else {
            format!("{mb}MB")
        }
    } else {
        format!("{}kB", nearest_pow2((bytes / 1024).max(64) as f64))
    }
}

/// Bytes of a size literal (`128MB`, `8kB`), None when it is not one.
pub(crate) fn bytes_of(v: &str) -> Option<u64> {
    crate::measure::units::parse_size(v).ok().map(|s| s.bytes)
}

/// The candidate values of `name`: the current value first, pgtune's (when it has one),
/// and a few around them; duplicates (by meaning, `1024kB` = `1MB`) removed. `ram` caps
/// memory values (shared_buffers at half of it).
pub(crate) fn candidates(
    name: &str,
    current: &str,
    pg: Option<&str>,
    hw: &Hardware,
) -> Vec<String> {
    let mut v: Vec<String> = vec![current.to_string()];
    let mut push = |x: String| v.push(x);
    match name {
        "shared_buffers" | "work_mem" | "maintenance_work_mem" | "effective_cache_size" => {
            if let Some(p) = pg.and_then(bytes_of) {
                let cap = if name == "shared_buffers" {
                    hw.ram / 2
                } else {
                    hw.ram
                };
                push(dba_size(p.min(cap)));
                push(dba_size((p / 4).max(MB)));
            }
        }
        "wal_buffers" => {
            push(pg.unwrap_or("16MB").to_string());
            push("64MB".into());
        }
        "max_wal_size" => {
            push(pg.unwrap_or("4GB").to_string());
            push("16GB".into());
        }
        "checkpoint_timeout" => {
            push("15min".into());
            push("30min".into());
        }
        // A hash's memory is work_mem × this (PostgreSQL 15's default 2): raced with
        // work_mem as a pair when both move.
        "hash_mem_multiplier" => {
            push("1".into());
            push("4".into());
        }
        "random_page_cost" => {
            push(pg.unwrap_or("1.1").to_string());
            push("2".into());
        }
        "effective_io_concurrency" => {
            push(pg.unwrap_or("200").to_string());
            push("32".into());
        }
        "max_parallel_workers_per_gather" => {
            push("0".into());
            if let Some(p) = pg {
                push(p.to_string());
            }
        }
        "wal_compression" => push(if current == "off" { "on" } else { "off" }.into()),
        "jit" | "synchronous_commit" | "full_page_writes" | "fsync" => {
            push(if current == "off" { "on" } else { "off" }.into())
        }
        _ => {}
    }
    dedup_by_meaning(v)
}

/// Whether two values of a setting mean the same (`1024kB` = `1MB`, `On` = `on`).
pub(crate) fn same_value(a: &str, b: &str) -> bool {
    match (bytes_of(a), bytes_of(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

/// Whether candidate `v` is pgtune's value `pg`, as given or as a DBA writes it.
pub(crate) fn is_pgtunes(pg: &str, v: &str) -> bool {
    same_value(pg, v) || bytes_of(pg).is_some_and(|b| dba_size(b) == v)
}

fn dedup_by_meaning(v: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in v {
        let same = |y: &String| same_value(&x, y);
        if !out.iter().any(same) {
            out.push(x);
        }
    }
    out
}

/// True when `a` is cheaper than `b` for `name` (same-kind values only).
pub(crate) fn is_cheaper(name: &str, a: &str, b: &str) -> bool {
    if cheaper(name).is_none() {
        return false;
    }
    matches!((number_of(a), number_of(b)), (Some(x), Some(y)) if x < y)
}

/// A value as a number to order by: bytes for a size, seconds for a duration, else the
/// number itself (None for `on`, `pglz`, …).
pub(crate) fn number_of(v: &str) -> Option<f64> {
    bytes_of(v).map(|b| b as f64).or_else(|| {
        crate::measure::units::parse_duration(v)
            .ok()
            .map(|d| d.as_secs_f64())
            .or_else(|| v.parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(gb: u64, cores: usize) -> Hardware {
        Hardware {
            ram: gb * GB,
            cores,
            ssd: true,
            max_connections: 100,
        }
    }

    /// pgtune's own example: 16 GB, 4 cores, SSD, 100 connections, "mixed" → shared_buffers
    /// 4GB, effective_cache_size 12GB, maintenance_work_mem 1GB, wal_buffers 16MB,
    /// work_mem (12GB / 300 / 2 / 2) = 10485kB.
    #[test]
    fn the_pgtune_formula_by_hand() {
        let p = pgtune(&hw(16, 4));
        assert_eq!(p["shared_buffers"], "4096MB");
        assert_eq!(p["effective_cache_size"], "12288MB");
        assert_eq!(p["maintenance_work_mem"], "1024MB");
        assert_eq!(p["wal_buffers"], "16MB");
        assert_eq!(p["work_mem"], "10485kB");
        assert_eq!(p["max_parallel_workers_per_gather"], "2");
        assert_eq!(p["random_page_cost"], "1.1");
        let small = pgtune(&Hardware {
            ssd: false,
            ..hw(1, 1)
        });
        assert_eq!(small["wal_buffers"], "7864kB");
        assert_eq!(small["random_page_cost"], "4");
        assert_eq!(small["max_parallel_workers_per_gather"], "1");
    }

    #[test]
    fn candidates_hold_the_current_value_first_and_pgtunes() {
        let h = hw(16, 4);
        let p = pgtune(&h);
        let c = candidates(
            "shared_buffers",
            "128MB",
            p.get("shared_buffers").map(String::as_str),
            &h,
        );
        assert_eq!(c, ["128MB", "4GB", "1GB"]);
        // The current value equal to pgtune's by meaning is one candidate.
        let c = candidates("max_wal_size", "4GB", Some("4GB"), &h);
        assert_eq!(c, ["4GB", "16GB"]);
        let c = candidates("wal_buffers", "16384kB", Some("16MB"), &h);
        assert_eq!(c, ["16384kB", "64MB"]);
        assert_eq!(candidates("jit", "on", None, &h), ["on", "off"]);
    }

    /// The values the issue saw, as a DBA writes them.
    #[test]
    fn sizes_are_written_as_a_dba_writes_them() {
        assert_eq!(dba_size(30854 * 1024), "32MB");
        assert_eq!(dba_size(7713 * 1024), "8MB");
        assert_eq!(dba_size(18078 * MB), "18GB");
        assert_eq!(dba_size(12288 * MB), "12GB");
        assert_eq!(dba_size(1000 * MB), "1GB");
        assert_eq!(dba_size(MB), "1MB");
        assert_eq!(dba_size(300 * 1024), "256kB");
        assert_eq!(dba_size(10), "64kB");
        let h = hw(32, 8);
        let p = pgtune(&h);
        for c in candidates("work_mem", "4MB", p.get("work_mem").map(String::as_str), &h) {
            let mb: u64 = c.trim_end_matches("MB").parse().unwrap_or(3);
            assert!(
                c.ends_with("MB") && mb.is_power_of_two(),
                "{c} from pgtune's {}",
                p["work_mem"]
            );
        }
    }

    #[test]
    fn durability_settings_only_when_allowed_and_with_their_loss() {
        let plain = auto_settings(ExperimentKind::Growth, false);
        assert!(!plain.contains(&"synchronous_commit"));
        let traded = auto_settings(ExperimentKind::Growth, true);
        for s in ["synchronous_commit", "full_page_writes"] {
            assert!(traded.contains(&s));
            assert!(durability_loss(s).unwrap().contains("crash"));
        }
        // Every one the flag opens says what a crash loses; no other does.
        for s in DURABILITY {
            assert!(durability_loss(s).unwrap().contains("crash"), "{s}");
        }
        assert!(durability_loss("wal_compression").is_none());
        // ingest's synchronous_commit is its own parameter (sync-commit).
        assert!(!auto_settings(ExperimentKind::Ingest, true).contains(&"synchronous_commit"));
    }

    #[test]
    fn cheaper_means_less_memory_or_less_to_recover() {
        assert!(is_cheaper("shared_buffers", "128MB", "1GB"));
        assert!(!is_cheaper("shared_buffers", "1GB", "128MB"));
        assert!(is_cheaper("checkpoint_timeout", "5min", "15min"));
        assert!(!is_cheaper("random_page_cost", "1.1", "4"));
    }
}
