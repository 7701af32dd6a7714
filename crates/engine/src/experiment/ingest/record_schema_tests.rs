//! The ingest record with every field it can write, against
//! `assets/schema/ingest.schema.json`: a run sweeping synchronous_commit and a server setting
//! under a standby fault, whose trials keep their stalls, standbys and the fault's window.

use std::collections::BTreeMap;

use super::citus_copy::CitusConnections;
use super::summary::tests::trial;
use super::{FsyncRef, IngestReport, IngestSpec, IngestTrial, LatencyMs, Method, SyncCommit};
use crate::experiment::lab::distribute::Distribution;
use crate::experiment::lab::field::ParamText;
use crate::experiment::lab::record::{ReportBody, RunReport};
use crate::experiment::lab::record_schema::{assert_fits, fault_window, full_envelope, replica};
use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../assets/schema/ingest.schema.json"
));

fn spec() -> IngestSpec {
    let mut p: ParamText = ExperimentKind::Ingest.defaults();
    for (k, v) in [
        ("method", "copy"),
        ("batch", "100"),
        ("sync-commit", "local,on"),
        ("set", "wal_compression=off,on"),
        ("duration", "3s"),
        ("repeat", "3"),
        ("checkpoint", "on"),
        ("standby-fault", "stop-at=1s,for=1s"),
        ("warmup", "on"),
        ("distribute", "id"),
    ] {
        p.insert(k.into(), v.into());
    }
    IngestSpec::parse(&p).expect("the parameters parse")
}

/// A trial at `sync` under a standby fault, every field present.
fn full_trial(sync: SyncCommit, rps: f64, repeat: u32) -> IngestTrial {
    IngestTrial {
        combo: 1,
        checkpoints_during: Some(1),
        settings: BTreeMap::from([("wal_compression".into(), "on".into())]),
        latency_ms: LatencyMs {
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.0,
            max: 5.0,
        },
        series: vec![rps, 0.0, rps],
        decay_pct: Some(2.0),
        table_bytes: 8192,
        fsync_fraction: Some(0.5),
        distribution: Distribution {
            column: Some("id".into()),
            shards: 32,
            nodes: 3,
        },
        stall_seconds: 1,
        worst_second: Some(0.0),
        replicas: vec![replica()],
        fault: Some(fault_window("stop-at=1s,for=1s")),
        ..trial(Method::Copy, 100, sync, rps, repeat)
    }
}

/// A swept run's ingest record under a standby fault, every field present.
pub(crate) fn full_record() -> RunReport {
    let spec = spec();
    let mut r = IngestReport::new(&spec);
    for repeat in 1..=3 {
        for (sync, rps) in [(SyncCommit::Local, 1000.0), (SyncCommit::On, 500.0)] {
            r.trials.push(full_trial(sync, rps + repeat as f64, repeat));
        }
    }
    r.fsync = Some(FsyncRef {
        ops_per_s: 500.0,
        source: "probe".into(),
    });
    r.citus_connections = Some(CitusConnections {
        pool_size: 16,
        cached_per_worker: 1,
    });
    r.summarize(&["a confounder".into()]);
    let key = ExperimentSpec::Ingest(spec).spec_key();
    full_envelope(ReportBody::Ingest(Box::new(r)), key)
}

#[test]
fn every_field_a_run_with_a_standby_writes_is_in_the_schema() {
    let r = full_record();
    let ReportBody::Ingest(i) = &r.body else {
        unreachable!()
    };
    assert!(!i.summary.groups.is_empty(), "{:?}", i.summary);
    assert_fits(SCHEMA, &r);
}
