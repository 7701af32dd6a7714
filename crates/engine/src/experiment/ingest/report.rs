//! ingest results: one record per trial (rows/s, batch latency, WAL, commits, rows/s per
//! second of the run); the summary a DBA reads first is built in `summary`.

use serde::{Deserialize, Serialize};

use super::kinds::{Method, SyncCommit};
use super::plan::TrialPlan;
use super::spec::IngestSpec;
use super::summary::IngestSummary;
pub use crate::experiment::lab::commit_cost::{LatencyMs, stalls_of};
use crate::experiment::lab::fault_report::FaultTrial;
use crate::measure::units::format_count;

/// Why a trial's load ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// All requested rows are in.
    Rows,
    /// The duration limit came first.
    Duration,
}

/// One configuration loaded and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestTrial {
    /// 1-based round: the configuration's `repeat`-th trial (records before repeats: 1).
    #[serde(default = "first_round")]
    pub repeat: u32,
    /// A `CHECKPOINT` ran just before the trial, so no earlier work's dirty buffers were
    /// written during it.
    #[serde(default)]
    pub checkpoint: bool,
    pub method: Method,
    pub batch: u64,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    pub pipeline: bool,
    /// Rows inserted (and committed) by this trial.
    pub rows: u64,
    /// Rows each client inserted.
    pub client_rows: Vec<u64>,
    /// `SELECT count(*)` of the table after the trial (the whole table when appending).
    pub rows_counted: u64,
    /// Rows already in the table when the trial began (appending), else 0.
    pub rows_before: u64,
    /// Wall time from the first batch to the last commit.
    pub seconds: f64,
    pub rows_per_s: f64,
    pub latency_ms: LatencyMs,
    /// WAL generated during the trial (`pg_current_wal_insert_lsn` difference; includes any
    /// other activity on the server at that time).
    pub wal_bytes: i64,
    pub wal_bytes_per_row: f64,
    /// Transactions committed by the clients.
    pub commits: u64,
    pub commits_per_s: f64,
    /// Rows/s in each second of the trial (the last, partial second scaled, and kept only when
    /// it lasted at least half a second).
    pub series: Vec<f64>,
    /// How much slower the last quarter of `series` ran than the first, in percent (None
    /// with fewer than 4 seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay_pct: Option<f64>,
    /// `pg_total_relation_size` of the table after the trial.
    pub table_bytes: i64,
    pub stopped_by: StopReason,
    /// commits/s ÷ the disk's fsync ops/s, for commits that wait for a flush.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_fraction: Option<f64>,
    /// pglab's own CPU seconds (user + system, all its threads) while the clients loaded.
    #[serde(default)]
    pub client_cpu_s: f64,
    /// `client_cpu_s` ÷ the host's CPU capacity (CPUs × seconds) over the same window, 0..=1:
    /// above `cpu::CLIENT_CPU_LIMIT` the trial names the load generator as a confounder.
    #[serde(default)]
    pub client_cpu_share: f64,
    /// Busy share of all the host's CPUs over that window (pglab and the server included),
    /// 0..=1; absent where `/proc/stat` cannot be read or did not tick during the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_share: Option<f64>,
    /// Checkpoints the server started while the clients loaded (None: not readable): the
    /// full-page writes after each one make the WAL and the load heavier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints_during: Option<i64>,
    /// The combination of swept server settings (`--set`): an index into the spec's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    /// The swept settings as `SHOW` reported them in a loading client's session.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
    /// The table's distribution and the cluster's node count.
    #[serde(default)]
    pub distribution: crate::experiment::lab::distribute::Distribution,
    /// Whole seconds of the trial in which no row committed (a stall: commits waiting for a
    /// standby that is gone, a lock, a checkpoint).
    #[serde(default)]
    pub stall_seconds: u32,
    /// The slowest second's rows/s (None under one second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_second: Option<f64>,
    /// The primary's standbys as `pg_stat_replication` showed them right after the load
    /// (empty: none): the lag this load left.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<crate::server::replication::ReplicaLag>,
    /// What `--standby-fault` did to the standby during this trial (None: no fault asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<crate::experiment::lab::standby_fault::FaultWindow>,
    /// What the host did beside the load: CPU other processes took, steal, memory stalls
    /// (None: not read, or a record from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::load::TrialHost>,
}

/// The column titles of the results table; `IngestTrial::cells` matches them.
pub const COLUMNS: &[&str] = &[
    "method",
    "batch",
    "clients",
    "sync",
    "#",
    "rows",
    "seconds",
    "rows/s",
    "batch p50 ms",
    "batch p99 ms",
    "WAL B/row",
    "pglab CPU",
];

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn first_round() -> u32 {
    1
}

impl IngestTrial {
    /// The configuration this trial ran.
    pub(crate) fn config(&self) -> TrialPlan {
        TrialPlan {
            method: self.method,
            batch: self.batch,
            clients: self.clients,
            sync: self.synchronous_commit,
            combo: self.combo,
        }
    }

    /// The swept settings as `name=value` (what SHOW reported), empty when none.
    pub(crate) fn settings_label(&self) -> String {
        self.settings
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The configuration but the level: `insert batch 1, 1 client`.
    pub(crate) fn subject(&self) -> String {
        format!(
            "{} batch {}, {}",
            self.method.as_str(),
            self.batch,
            super::verdicts::clients(self.clients)
        )
    }

    /// The trial as the standby fault's findings read it.
    pub(crate) fn fault_view(&self) -> FaultTrial<'_> {
        FaultTrial {
            subject: self.subject(),
            rest: self.settings_label(),
            level: self.synchronous_commit,
            series: &self.series,
            longest_ms: self.latency_ms.max,
            fault: self.fault.as_ref(),
            replicas: &self.replicas,
        }
    }

    pub(crate) fn series_name(&self) -> String {
        let name = format!(
            "{}, {}, sync={}",
            self.method.as_str(),
            super::verdicts::clients(self.clients),
            self.synchronous_commit.as_str()
        );
        let s = self.settings_label();
        if s.is_empty() {
            name
        } else {
            format!("{name} · {s}")
        }
    }

    /// The rows it inserted; for a trial `--duration` stopped before its rows were in, of
    /// how many and where it was cut: "630 of 20k, cut at 2s".
    pub fn rows_cell(&self, spec: &IngestSpec) -> String {
        let rows = format_count(self.rows as f64);
        match (self.stopped_by, spec.duration_s) {
            (StopReason::Duration, limit) => format!(
                "{rows} of {}, cut at {}",
                format_count(spec.rows as f64),
                limit.map_or("the limit".into(), crate::measure::units::format_seconds)
            ),
            (StopReason::Rows, _) => rows,
        }
    }

    pub(crate) fn cells(&self, spec: &IngestSpec) -> Vec<String> {
        vec![
            self.method.as_str().to_string(),
            self.batch.to_string(),
            self.clients.to_string(),
            self.synchronous_commit.as_str().to_string(),
            self.repeat.to_string(),
            self.rows_cell(spec),
            format!("{:.2}", self.seconds),
            format_count(self.rows_per_s.round()),
            ms(self.latency_ms.p50),
            ms(self.latency_ms.p99),
            format!("{:.0}", self.wal_bytes_per_row),
            format!("{:.0}%", self.client_cpu_share * 100.0),
        ]
    }
}

/// Relative slowdown of the last quarter of a per-second series against the first.
pub(crate) fn decay_pct(series: &[f64]) -> Option<f64> {
    if series.len() < 4 {
        return None;
    }
    let q = series.len() / 4;
    let first = series[..q].iter().sum::<f64>() / q as f64;
    let last = series[series.len() - q..].iter().sum::<f64>() / q as f64;
    (first > 0.0).then(|| (1.0 - last / first) * 100.0)
}

/// Where the disk's fsync rate came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsyncRef {
    pub ops_per_s: f64,
    /// "spec" (given by the caller, e.g. the Host pane's probe) or "probe" (measured by this
    /// run for 2 s in the server's data directory).
    pub source: String,
}

/// The ingest part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestReport {
    pub params: IngestSpec,
    pub trials: Vec<IngestTrial>,
    pub summary: IngestSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<FsyncRef>,
    /// Citus, a distributed table: the connection settings COPY depends on, as the run's
    /// sessions had them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citus_connections: Option<super::citus_copy::CitusConnections>,
}

impl IngestReport {
    pub fn new(spec: &IngestSpec) -> Self {
        IngestReport {
            params: spec.clone(),
            trials: vec![],
            summary: IngestSummary::default(),
            fsync: None,
            citus_connections: None,
        }
    }

    /// Compare the commits of `insert` trials that wait for every flush with the disk's
    /// fsync rate, once it is known.
    pub(crate) fn apply_fsync(&mut self) {
        let Some(ops) = self
            .fsync
            .as_ref()
            .map(|f| f.ops_per_s)
            .filter(|o| *o > 0.0)
        else {
            return;
        };
        for t in &mut self.trials {
            if t.method == Method::Insert && t.synchronous_commit.waits_for_flush() {
                t.fsync_fraction = Some(t.commits_per_s / ops);
            }
        }
    }
}

pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_compares_the_last_quarter_with_the_first() {
        assert_eq!(decay_pct(&[600.0, 600.0, 350.0]), None);
        let d = decay_pct(&[600.0, 590.0, 500.0, 420.0, 360.0, 350.0, 350.0, 340.0]).unwrap();
        assert!((d - (1.0 - 345.0 / 595.0) * 100.0).abs() < 1e-9, "{d}");
    }
}
