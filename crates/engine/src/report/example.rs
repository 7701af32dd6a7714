//! Fabricated reports with known numbers, for tests (comparison, rendering, history) and the
//! TUI's snapshot tests. pglab never records these in a history by itself.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use crate::experiment::index_build::{
    IndexBuildReport, IndexBuildSpec, IndexMethod, IndexTrial, KeyType, Order,
};
use crate::experiment::lab::record::SCHEMA_VERSION;
use crate::experiment::{ExperimentSpec, Outcome, ReportBody, RunReport};
use crate::host::HostFingerprint;
use crate::measure::units::parse_size;
use crate::server::ServerFingerprint;

/// A plausible 2-core host.
pub fn host() -> HostFingerprint {
    HostFingerprint {
        hostname: "lab1".into(),
        cpu_model: "AMD EPYC 7B13".into(),
        physical_cores: Some(1),
        logical_cores: 2,
        total_memory: 8 << 30,
        os: "Debian GNU/Linux 13".into(),
        kernel: "6.1.0".into(),
        filesystem: Some("ext4 on /dev/vda1 (/)".into()),
    }
}

/// A sandbox server with default settings.
pub fn server() -> ServerFingerprint {
    let settings: BTreeMap<String, String> = [
        ("shared_buffers", "128MB"),
        ("maintenance_work_mem", "64MB"),
        ("max_parallel_maintenance_workers", "2"),
        ("max_worker_processes", "8"),
        ("work_mem", "4MB"),
        ("synchronous_commit", "on"),
        ("fsync", "on"),
        ("wal_level", "replica"),
        ("max_wal_size", "1GB"),
        ("checkpoint_timeout", "5min"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    ServerFingerprint {
        version: "PostgreSQL 15.18".into(),
        version_num: 150018,
        location: "sandbox (/tmp/pglab/run, port 54321)".into(),
        sandbox: true,
        settings,
        cluster: None,
    }
}

/// One measured setting: order, workers, maintenance_work_mem, the seconds of each repeat.
pub type Timing<'a> = (Order, u32, &'a str, &'a [f64]);

/// A finished index-build run on `rows` int4 rows with these timings (summary computed).
pub fn index_build(run_id: &str, rows: u64, timings: &[Timing<'_>]) -> RunReport {
    let spec = index_build_spec(rows, timings);
    let mut body = IndexBuildReport::new(&spec);
    for (order, w, m, secs) in timings {
        let bytes = parse_size(m).map(|s| s.bytes).unwrap_or(1 << 20);
        for (i, s) in secs.iter().enumerate() {
            body.trials
                .push(index_trial(rows, *order, *w, m, bytes, i, *s));
        }
    }
    body.summarize(&[]);
    let took: f64 = timings.iter().flat_map(|t| t.3.iter()).sum();
    index_build_report(run_id, spec, body, took)
}

/// The spec a sweep over `timings` would have had: each order, worker count and
/// maintenance_work_mem they name (in first-seen order, sizes ascending), and as many repeats
/// as the longest timing.
fn index_build_spec(rows: u64, timings: &[Timing<'_>]) -> IndexBuildSpec {
    let mut orders: Vec<Order> = Vec::new();
    let mut workers: Vec<u32> = Vec::new();
    let mut mwm = Vec::new();
    for (o, w, m, _) in timings {
        if !orders.contains(o) {
            orders.push(*o);
        }
        if !workers.contains(w) {
            workers.push(*w);
        }
        let size =
            parse_size(m).unwrap_or_else(|_| crate::measure::units::Size::from_bytes(1 << 20));
        if !mwm.contains(&size) {
            mwm.push(size);
        }
    }
    mwm.sort_by_key(|s| s.bytes);
    IndexBuildSpec {
        set: Default::default(),
        checkpoint: Default::default(),
        rows,
        key: KeyType::Int4,
        orders,
        mwm,
        workers,
        repeat: crate::experiment::lab::decision::Repeat::Fixed(
            timings.iter().map(|t| t.3.len()).max().unwrap_or(1) as u32,
        ),
        decision: Default::default(),
        warmup: false,
        shuffle: false,
        method: IndexMethod::Btree,
        concurrently: false,
        seed: 42,
        distribute: false,
        shards: None,
        table: None,
        writes_lab: false,
    }
}

/// Repeat `i` (from 0) of one setting that took `s` seconds, its phases split 55/5/40 and a
/// sort that spills when maintenance_work_mem (`bytes`) is under 80 bytes a row.
fn index_trial(
    rows: u64,
    order: Order,
    w: u32,
    m: &str,
    bytes: u64,
    i: usize,
    s: f64,
) -> IndexTrial {
    IndexTrial {
        combo: 0,
        built_at_bytes: None,
        settings: Default::default(),
        order,
        rows,
        key_type: "int4".into(),
        maintenance_work_mem: m.to_string(),
        maintenance_work_mem_bytes: bytes,
        workers_requested: w,
        workers_launched: w,
        repeat: i as u32 + 1,
        warmup: false,
        seconds: s,
        phase_seconds: BTreeMap::from([
            ("building index: scanning table".to_string(), s * 0.55),
            ("building index: sorting live tuples".to_string(), s * 0.05),
            (
                "building index: loading tuples in tree".to_string(),
                s * 0.40,
            ),
        ]),
        index_bytes: (rows * 22) as i64,
        temp_bytes: if bytes < rows * 80 {
            (rows * 24) as i64
        } else {
            0
        },
        checkpoint: true,
        distribution: Default::default(),
        host: None,
        sort_method: Some(if bytes < rows * 80 {
            crate::experiment::index_build::SortMethod::External {
                disk_kb: rows * 24 / 1024,
            }
        } else {
            crate::experiment::index_build::SortMethod::InMemory {
                kb: rows * 40 / 1024,
            }
        }),
        sort: Some(if bytes < rows * 80 {
            "external sort".into()
        } else {
            "internal sort".into()
        }),
    }
}

/// The run around an index-build `body`: started 2026-03-01 10:00 UTC, finished `took`
/// seconds plus two later, on the example host and server.
fn index_build_report(
    run_id: &str,
    spec: IndexBuildSpec,
    body: IndexBuildReport,
    took: f64,
) -> RunReport {
    let started_at = Utc
        .with_ymd_and_hms(2026, 3, 1, 10, 0, 0)
        .single()
        .unwrap_or_default();
    RunReport {
        whatif: None,
        schema_version: SCHEMA_VERSION,
        run_id: run_id.to_string(),
        pglab_version: env!("CARGO_PKG_VERSION").into(),
        outcome: Outcome::Finished,
        error: None,
        started_at,
        finished_at: started_at + chrono::Duration::milliseconds((took * 1000.0) as i64 + 2000),
        preset: Some("cybertec-quick".into()),
        tune: None,
        target: "postgres@/tmp/pglab/run/.s.PGSQL.54321 db=postgres".into(),
        server: Some(server()),
        host: host(),
        spec_key: ExperimentSpec::IndexBuild(spec).spec_key(),
        notes: vec![],
        body: ReportBody::IndexBuild(Box::new(body)),
    }
}

/// `body` as a finished run on the example host and server (for tests that read a report's
/// body, such as a tune's objective).
pub fn with_body(body: ReportBody) -> RunReport {
    let mut r = cybertec_10m("with-body");
    r.body = body;
    r
}

/// The 10M-row measurements from the design notes (sorted and random, serial, 3 repeats).
pub fn cybertec_10m(run_id: &str) -> RunReport {
    index_build(
        run_id,
        10_000_000,
        &[
            (Order::Sorted, 0, "1MB", &[9.4, 10.0, 9.7]),
            (Order::Sorted, 0, "16MB", &[6.7, 6.7, 6.8]),
            (Order::Sorted, 0, "64MB", &[6.8, 7.3, 7.0]),
            (Order::Sorted, 0, "256MB", &[7.3, 7.9, 7.5]),
            (Order::Sorted, 0, "1GB", &[6.1, 6.6, 6.3]),
            (Order::Random, 0, "1MB", &[12.7, 13.0, 12.8]),
            (Order::Random, 0, "16MB", &[11.6, 11.7, 11.6]),
            (Order::Random, 0, "64MB", &[12.4, 12.9, 12.6]),
            (Order::Random, 0, "256MB", &[12.8, 14.1, 13.2]),
            (Order::Random, 0, "1GB", &[13.0, 13.2, 13.0]),
        ],
    )
}

/// A 10M-row sweep with six repeats, enough for verdicts: random input has a best group
/// (16MB..256MB within noise, 1MB and 1GB slower), sorted input shows no significant
/// difference anywhere. Numbers shaped like [`cybertec_10m`].
pub fn decided_10m(run_id: &str) -> RunReport {
    const SORTED: [f64; 6] = [6.70, 6.75, 6.68, 6.72, 6.78, 6.66];
    const RANDOM_16: [f64; 6] = [11.6, 11.7, 11.55, 11.65, 11.6, 11.72];
    const RANDOM_64: [f64; 6] = [11.68, 11.6, 11.75, 11.62, 11.7, 11.66];
    const RANDOM_256: [f64; 6] = [11.7, 11.64, 11.8, 11.66, 11.6, 11.74];
    const RANDOM_1M: [f64; 6] = [12.7, 13.0, 12.8, 12.9, 12.75, 12.85];
    const RANDOM_1G: [f64; 6] = [13.0, 13.2, 13.0, 13.1, 12.95, 13.15];
    let shifted: Vec<[f64; 6]> = [0.0, 0.02, -0.02, 0.01, 0.03]
        .iter()
        .map(|d| SORTED.map(|x| x + d))
        .collect();
    index_build(
        run_id,
        10_000_000,
        &[
            (Order::Sorted, 0, "1MB", &shifted[0]),
            (Order::Sorted, 0, "16MB", &shifted[1]),
            (Order::Sorted, 0, "64MB", &shifted[2]),
            (Order::Sorted, 0, "256MB", &shifted[3]),
            (Order::Sorted, 0, "1GB", &shifted[4]),
            (Order::Random, 0, "1MB", &RANDOM_1M),
            (Order::Random, 0, "16MB", &RANDOM_16),
            (Order::Random, 0, "64MB", &RANDOM_64),
            (Order::Random, 0, "256MB", &RANDOM_256),
            (Order::Random, 0, "1GB", &RANDOM_1G),
        ],
    )
}

mod growth;
pub use growth::growth;
#[cfg(test)]
mod schema_tests;
