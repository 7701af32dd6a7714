//! A throughput trial second by second: the coordinator reads the clients' shared count of
//! finished transactions at every whole second from the common start, so the trial has
//! transactions per second, its slowest second and its stall seconds (none finished) — the
//! seconds a commit waiting for a standby that is gone, a lock or a checkpoint shows as.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::experiment::lab::commit_cost::{LatencyMs, LoadShape};

/// What a throughput trial recorded beyond its transactions/s: the latency of each statement
/// execution, the per-second series and the standbys after the load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// Every execution of a statement of the workload (autocommit: with its commit), in
    /// milliseconds; `BEGIN`/`ROLLBACK` of `--writes rollback` are not counted.
    pub statement_ms: LatencyMs,
    /// Transactions finished per whole second, the stall seconds, the slowest second and the
    /// standbys right after the load (flattened: the same JSON fields as before).
    #[serde(flatten)]
    pub shape: LoadShape,
    /// What `--standby-fault` did to the standby during the trial (None: no fault asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::experiment::lab::standby_fault::FaultWindow>,
}

/// The running count at each whole second of a trial.
pub(crate) struct PerSecond {
    done: Arc<AtomicU64>,
    next: tokio::time::Instant,
    samples: Vec<u64>,
}

impl PerSecond {
    /// Counting from `t0` (the clients' common start).
    pub(crate) fn new(done: Arc<AtomicU64>, t0: Instant) -> PerSecond {
        PerSecond {
            done,
            next: tokio::time::Instant::from_std(t0) + Duration::from_secs(1),
            samples: Vec::new(),
        }
    }

    /// Wait for the next whole second.
    pub(crate) async fn tick(&self) {
        tokio::time::sleep_until(self.next).await;
    }

    /// Read the count at the second just reached.
    pub(crate) fn sample(&mut self) {
        self.samples.push(self.done.load(Ordering::Relaxed));
        self.next += Duration::from_secs(1);
    }

    /// Transactions per second over a trial of `seconds` that finished `total`.
    pub(crate) fn series(&self, total: u64, seconds: f64) -> Vec<f64> {
        series_of(&self.samples, total, seconds)
    }
}

/// Per whole second the difference of the running counts `at` (the count at the end of each
/// second), then the rest up to `total` over the partial second left when it lasted at least
/// half a second.
fn series_of(at: &[u64], total: u64, seconds: f64) -> Vec<f64> {
    let whole = (seconds.floor().max(0.0) as usize).min(at.len());
    let mut out = Vec::with_capacity(whole + 1);
    let mut before = 0;
    for &n in &at[..whole] {
        out.push(n.saturating_sub(before) as f64);
        before = n;
    }
    let part = seconds - whole as f64;
    if part >= 0.5 {
        out.push(total.saturating_sub(before) as f64 / part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_seconds_are_differences_and_the_rest_is_scaled() {
        assert_eq!(
            series_of(&[100, 190, 190, 260], 300, 4.5),
            [100.0, 90.0, 0.0, 70.0, 80.0]
        );
        // A short partial second is left out; samples past the end are not seconds.
        assert_eq!(series_of(&[100, 190, 250], 255, 2.2), [100.0, 90.0]);
        assert_eq!(series_of(&[], 40, 0.8), [50.0]);
        assert_eq!(series_of(&[], 40, 0.3), Vec::<f64>::new());
        let (stalls, worst) = crate::experiment::lab::commit_cost::stalls_of(&series_of(
            &[100, 100, 100, 180],
            180,
            4.0,
        ));
        assert_eq!((stalls, worst), (2, Some(0.0)));
    }

    /// The load's shape is flattened into the record: a record written before it was a
    /// struct of its own reads back the same, and is written again byte for byte.
    #[test]
    fn a_record_keeps_its_json_with_the_shape_flattened() {
        let old = concat!(
            r#"{"statement_ms":{"p50":1.0,"p95":2.0,"p99":3.0,"p999":4.0,"max":5.0},"#,
            r#""series":[10.0,0.0,12.5],"stall_seconds":1,"worst_second":0.0,"#,
            r#""replicas":[{"application_name":"pglab_standby_1","state":"streaming","#,
            r#""sync_state":"sync","write_lag_ms":4.1,"flush_lag_ms":null,"#,
            r#""replay_lag_ms":4.3,"replay_behind_bytes":0}],"#,
            r#""fault":{"fault":"stop-at=1s,for=2s","standby":"pglab_standby_1","#,
            r#""from_s":1.0,"to_s":3.0}}"#
        );
        let r: LoadRecord = serde_json::from_str(old).unwrap();
        assert_eq!(r.shape.series, [10.0, 0.0, 12.5]);
        assert_eq!(
            (r.shape.stall_seconds, r.shape.worst_second),
            (1, Some(0.0))
        );
        assert_eq!(r.shape.replicas[0].sync_state, "sync");
        assert_eq!(r.fault.as_ref().and_then(|f| f.to_s), Some(3.0));
        assert_eq!(serde_json::to_string(&r).unwrap(), old);
        // A record of a trial without a series (under one second, or before it was kept):
        // the defaults, and the skipped fields still left out.
        let bare = r#"{"statement_ms":{"p50":1.0,"p95":2.0,"p99":3.0,"p999":4.0,"max":5.0}}"#;
        let r: LoadRecord = serde_json::from_str(bare).unwrap();
        assert_eq!((&r.shape, &r.fault), (&LoadShape::default(), &None));
        let again = serde_json::to_string(&r).unwrap();
        assert_eq!(again, bare.replace("}}", r#"},"stall_seconds":0}"#));
    }

    #[tokio::test]
    async fn the_count_is_read_at_each_whole_second() {
        let done = Arc::new(AtomicU64::new(0));
        let t0 = Instant::now() - Duration::from_millis(1990);
        let mut p = PerSecond::new(done.clone(), t0);
        done.store(7, Ordering::Relaxed);
        p.tick().await;
        p.sample();
        p.tick().await;
        p.sample();
        assert_eq!(p.samples, [7, 7]);
        assert!(t0.elapsed() >= Duration::from_secs(2));
    }
}
