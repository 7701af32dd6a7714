//! The synchronous_commit findings from hand-made trials: latency percentiles, stalls, the
//! standby's lag, and what each level buys with and without a synchronous standby.

use super::tests::{NOISE, report};
use crate::experiment::ingest::kinds::{Method, SyncCommit};
use crate::experiment::ingest::report::LatencyMs;

#[test]
fn sync_levels_give_latency_stalls_lag_and_what_each_level_buys() {
    use crate::server::replication::ReplicaLag;
    let mut r = report(
        &[
            (Method::Insert, 1, SyncCommit::Local, 2000.0),
            (Method::Insert, 1, SyncCommit::On, 400.0),
        ],
        &NOISE,
    );
    for (i, t) in r.trials.iter_mut().enumerate() {
        let on = t.synchronous_commit == SyncCommit::On;
        t.latency_ms = LatencyMs {
            p50: if on { 2.3 } else { 0.4 } + i as f64 * 0.001,
            p95: 3.0,
            p99: if on { 3.5 } else { 0.9 },
            p999: if on { 6.0 } else { 2.0 },
            max: if on { 9.0 } else { 4.0 },
        };
        t.stall_seconds = u32::from(on && i == 1);
        t.worst_second = Some(if on { 0.0 } else { 1900.0 });
        t.replicas = vec![ReplicaLag {
            application_name: "pglab_standby_1".into(),
            state: "streaming".into(),
            sync_state: "sync".into(),
            write_lag_ms: Some(1.1),
            flush_lag_ms: Some(1.2),
            replay_lag_ms: Some(if on { 1.3 } else { 0.2 }),
            replay_behind_bytes: Some(0),
        }];
    }
    r.summarize(&[]);
    let all = r.summary.findings.join("\n");
    let line = r
        .summary
        .findings
        .iter()
        .find(|f| f.contains("commit latency by synchronous_commit"))
        .unwrap_or_else(|| panic!("{all}"));
    assert!(line.contains("local p50 0.40 ms ["), "{line}");
    assert!(line.contains("on p50 2.30 ms ["), "{line}");
    assert!(line.contains("p99 3.50, p99.9 6.00, max 9.00 ms, 1 stall s, slowest second 0 rows/s, standby replay lag up to 1.3 ms"), "{line}");
    let buys = r
        .summary
        .findings
        .iter()
        .find(|f| f.starts_with("what each level buys"))
        .unwrap_or_else(|| panic!("{all}"));
    assert!(buys.contains("local: on the primary's disk"), "{buys}");
    assert!(
        buys.contains("on: also flushed to the synchronous standby's disk"),
        "{buys}"
    );
    // Without a synchronous standby the remote levels buy nothing over local, and it says so.
    for t in &mut r.trials {
        t.replicas.clear();
    }
    r.summarize(&[]);
    assert!(
        r.summary
            .findings
            .iter()
            .any(|f| f.contains("without a synchronous standby: the same as local")),
        "{:#?}",
        r.summary.findings
    );
}
