//! A throughput trial second by second: the coordinator reads the clients' shared count of
//! finished transactions at every whole second from the common start, so the trial has
//! transactions per second, its slowest second and its stall seconds (none finished) — the
//! seconds a commit waiting for a standby that is gone, a lock or a checkpoint shows as.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::experiment::lab::commit_cost::LatencyMs;
use crate::server::replication::ReplicaLag;

/// What a throughput trial recorded beyond its transactions/s: the latency of each statement
/// execution, the per-second series and the standbys after the load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadRecord {
    /// Every execution of a statement of the workload (autocommit: with its commit), in
    /// milliseconds; `BEGIN`/`ROLLBACK` of `--writes rollback` are not counted.
    pub statement_ms: LatencyMs,
    /// Transactions (runs of the workload) finished in each whole second of the trial (the
    /// last, partial second scaled, and kept only when it lasted half a second or more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<f64>,
    /// Whole seconds in which no transaction finished.
    #[serde(default)]
    pub stall_seconds: u32,
    /// The slowest second's transactions/s (None under one second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_second: Option<f64>,
    /// The primary's standbys as `pg_stat_replication` showed them right after the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaLag>,
    /// What `--standby-fault` did to the standby during the trial (None: no fault asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::experiment::lab::standby_fault::FaultWindow>,
}

/// The running count at each whole second of a trial.
pub struct PerSecond {
    done: Arc<AtomicU64>,
    next: tokio::time::Instant,
    samples: Vec<u64>,
}

impl PerSecond {
    /// Counting from `t0` (the clients' common start).
    pub fn new(done: Arc<AtomicU64>, t0: Instant) -> PerSecond {
        PerSecond {
            done,
            next: tokio::time::Instant::from_std(t0) + Duration::from_secs(1),
            samples: Vec::new(),
        }
    }

    /// Wait for the next whole second.
    pub async fn tick(&self) {
        tokio::time::sleep_until(self.next).await;
    }

    /// Read the count at the second just reached.
    pub fn sample(&mut self) {
        self.samples.push(self.done.load(Ordering::Relaxed));
        self.next += Duration::from_secs(1);
    }

    /// Transactions per second over a trial of `seconds` that finished `total`.
    pub fn series(&self, total: u64, seconds: f64) -> Vec<f64> {
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
