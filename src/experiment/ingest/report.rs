//! ingest results: one record per trial (rows/s, batch latency, WAL, commits, rows/s per
//! second of the run) and the summary a DBA reads first (best configuration per method, the
//! knee of the batch curve, decay over time, the fsync wall).

use serde::{Deserialize, Serialize};

use super::spec::{IngestSpec, Method, SyncCommit};
use crate::measure::units::format_count;

/// Batch latency percentiles, milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

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
}

/// The column titles of the results table; `IngestTrial::cells` matches them.
pub const COLUMNS: &[&str] = &[
    "method",
    "batch",
    "clients",
    "sync",
    "rows",
    "seconds",
    "rows/s",
    "p50 ms",
    "p99 ms",
    "WAL B/row",
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

impl IngestTrial {
    pub fn series_name(&self) -> String {
        format!(
            "{} ×{} sync={}",
            self.method.as_str(),
            self.clients,
            self.synchronous_commit.as_str()
        )
    }

    pub fn cells(&self) -> Vec<String> {
        vec![
            self.method.as_str().to_string(),
            self.batch.to_string(),
            self.clients.to_string(),
            self.synchronous_commit.as_str().to_string(),
            format_count(self.rows as f64),
            format!("{:.2}", self.seconds),
            format_count(self.rows_per_s.round()),
            ms(self.latency_ms.p50),
            ms(self.latency_ms.p99),
            format!("{:.0}", self.wal_bytes_per_row),
        ]
    }
}

/// Relative slowdown of the last quarter of a per-second series against the first.
pub fn decay_pct(series: &[f64]) -> Option<f64> {
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

/// The best trial of a method, and its knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodBest {
    pub method: Method,
    pub batch: u64,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    pub rows_per_s: f64,
    /// The smallest batch of any trial of this method reaching ≥ 90% of its best rows/s.
    pub knee_batch: u64,
    pub knee_rows_per_s: f64,
}

/// The knee of one batch curve (one method at one client count and synchronous_commit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesKnee {
    pub series: String,
    pub method: Method,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    pub best_batch: u64,
    pub best_rows_per_s: f64,
    pub knee_batch: u64,
    pub knee_rows_per_s: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestSummary {
    pub best: Vec<MethodBest>,
    pub knees: Vec<SeriesKnee>,
    pub findings: Vec<String>,
}

/// The ingest part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestReport {
    pub params: IngestSpec,
    pub trials: Vec<IngestTrial>,
    pub summary: IngestSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<FsyncRef>,
}

/// A knee: the smallest batch whose rows/s reaches 90% of the best among `trials`.
fn knee<'a>(trials: &[&'a IngestTrial]) -> Option<(&'a IngestTrial, &'a IngestTrial)> {
    let best = *trials
        .iter()
        .max_by(|a, b| a.rows_per_s.total_cmp(&b.rows_per_s))?;
    let knee = *trials
        .iter()
        .filter(|t| t.rows_per_s >= 0.9 * best.rows_per_s)
        .min_by(|a, b| {
            a.batch
                .cmp(&b.batch)
                .then(b.rows_per_s.total_cmp(&a.rows_per_s))
        })?;
    Some((best, knee))
}

fn rate(v: f64) -> String {
    format_count(v.round())
}

impl IngestReport {
    pub fn new(spec: &IngestSpec) -> Self {
        IngestReport {
            params: spec.clone(),
            trials: vec![],
            summary: IngestSummary::default(),
            fsync: None,
        }
    }

    /// Compare the commits of `insert` trials that wait for every flush with the disk's
    /// fsync rate, once it is known.
    pub fn apply_fsync(&mut self) {
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

    /// Recompute the summary from the trials so far (also for partial, cancelled runs).
    pub fn summarize(&mut self) {
        let mut s = IngestSummary::default();
        for method in Method::ALL {
            let of: Vec<&IngestTrial> = self.trials.iter().filter(|t| t.method == method).collect();
            let Some((best, knee)) = knee(&of) else {
                continue;
            };
            s.best.push(MethodBest {
                method,
                batch: best.batch,
                clients: best.clients,
                synchronous_commit: best.synchronous_commit,
                rows_per_s: best.rows_per_s,
                knee_batch: knee.batch,
                knee_rows_per_s: knee.rows_per_s,
            });
            let mut f = format!(
                "{}: best {} rows/s at batch {}, {} client{}, sync={}",
                method.as_str(),
                rate(best.rows_per_s),
                best.batch,
                best.clients,
                if best.clients == 1 { "" } else { "s" },
                best.synchronous_commit.as_str()
            );
            let batches: std::collections::BTreeSet<u64> = of.iter().map(|t| t.batch).collect();
            if batches.len() > 1 {
                f.push_str(&format!(
                    "; knee at batch {} ({} rows/s, ≥ 90% of the best)",
                    knee.batch,
                    rate(knee.rows_per_s)
                ));
            }
            s.findings.push(f);
        }

        // One knee per batch curve.
        let mut keys: Vec<(Method, u32, SyncCommit)> = self
            .trials
            .iter()
            .map(|t| (t.method, t.clients, t.synchronous_commit))
            .collect();
        keys.sort();
        keys.dedup();
        for (method, clients, sync) in keys {
            let of: Vec<&IngestTrial> = self
                .trials
                .iter()
                .filter(|t| {
                    t.method == method && t.clients == clients && t.synchronous_commit == sync
                })
                .collect();
            if let Some((best, knee)) = knee(&of) {
                s.knees.push(SeriesKnee {
                    series: best.series_name(),
                    method,
                    clients,
                    synchronous_commit: sync,
                    best_batch: best.batch,
                    best_rows_per_s: best.rows_per_s,
                    knee_batch: knee.batch,
                    knee_rows_per_s: knee.rows_per_s,
                });
            }
        }

        // The fsync wall: one commit per row, each waiting for the disk.
        if let Some(fs) = &self.fsync {
            let walled = self
                .trials
                .iter()
                .filter(|t| t.method == Method::Insert && t.synchronous_commit.waits_for_flush())
                .min_by_key(|t| t.clients);
            if let Some(t) = walled
                && let Some(frac) = t.fsync_fraction
            {
                s.findings.push(format!(
                    "insert, sync={}, {} client{}: {} commits/s = {:.0}% of the disk's {} fsyncs/s ({}): every row waits for a WAL flush",
                    t.synchronous_commit.as_str(),
                    t.clients,
                    if t.clients == 1 { "" } else { "s" },
                    rate(t.commits_per_s),
                    frac * 100.0,
                    rate(fs.ops_per_s),
                    if fs.source == "probe" { "probed for 2 s" } else { "from the host probe" }
                ));
            }
        }

        // synchronous_commit off against on, at the smallest batch and client count.
        for method in Method::ALL {
            let find = |sync: SyncCommit| {
                self.trials
                    .iter()
                    .filter(|t| t.method == method && t.synchronous_commit == sync)
                    .min_by_key(|t| (t.batch, t.clients))
            };
            if let (Some(on), Some(off)) = (find(SyncCommit::On), find(SyncCommit::Off))
                && on.batch == off.batch
                && on.clients == off.clients
                && on.rows_per_s > 0.0
            {
                s.findings.push(format!(
                    "{} at batch {}, {} client{}: synchronous_commit=off {:.1}× the rows/s of on ({} vs {})",
                    method.as_str(),
                    on.batch,
                    on.clients,
                    if on.clients == 1 { "" } else { "s" },
                    off.rows_per_s / on.rows_per_s,
                    rate(off.rows_per_s),
                    rate(on.rows_per_s)
                ));
            }
        }

        // More clients against one, at each method's best batch.
        for b in &s.best {
            let at = |clients: u32| {
                self.trials.iter().find(|t| {
                    t.method == b.method
                        && t.batch == b.batch
                        && t.synchronous_commit == b.synchronous_commit
                        && t.clients == clients
                })
            };
            let most = self
                .trials
                .iter()
                .filter(|t| t.method == b.method && t.batch == b.batch)
                .map(|t| t.clients)
                .max()
                .unwrap_or(1);
            if most > 1
                && let (Some(one), Some(many)) = (at(1), at(most))
                && one.rows_per_s > 0.0
            {
                s.findings.push(format!(
                    "{} at batch {}: {} clients load {:.2}× the rows/s of one ({} vs {})",
                    b.method.as_str(),
                    b.batch,
                    most,
                    many.rows_per_s / one.rows_per_s,
                    rate(many.rows_per_s),
                    rate(one.rows_per_s)
                ));
            }
        }

        // Decay over a trial: the CouchDB post's "falling after a while".
        let mut decayed: Vec<&IngestTrial> = self
            .trials
            .iter()
            .filter(|t| t.decay_pct.is_some_and(|d| d >= 20.0))
            .collect();
        decayed.sort_by(|a, b| {
            b.decay_pct
                .unwrap_or(0.0)
                .total_cmp(&a.decay_pct.unwrap_or(0.0))
        });
        for t in decayed.into_iter().take(3) {
            let q = (t.series.len() / 4).max(1);
            let first = t.series[..q].iter().sum::<f64>() / q as f64;
            let last = t.series[t.series.len() - q..].iter().sum::<f64>() / q as f64;
            s.findings.push(format!(
                "{} batch {}: rows/s fell {:.0}% during the trial (first quarter {}/s, last quarter {}/s)",
                t.series_name(),
                t.batch,
                t.decay_pct.unwrap_or(0.0),
                rate(first),
                rate(last)
            ));
        }
        self.summary = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::field::ParamText;

    fn trial(method: Method, batch: u64, clients: u32, sync: SyncCommit, rps: f64) -> IngestTrial {
        IngestTrial {
            method,
            batch,
            clients,
            synchronous_commit: sync,
            pipeline: false,
            rows: 1000,
            client_rows: vec![1000],
            rows_counted: 1000,
            rows_before: 0,
            seconds: 1000.0 / rps,
            rows_per_s: rps,
            latency_ms: LatencyMs::default(),
            wal_bytes: 100_000,
            wal_bytes_per_row: 100.0,
            commits: 1000 / batch,
            commits_per_s: rps / batch as f64,
            series: vec![],
            decay_pct: None,
            table_bytes: 0,
            stopped_by: StopReason::Rows,
            fsync_fraction: None,
        }
    }

    #[test]
    fn knee_is_the_smallest_batch_within_ten_percent() {
        let spec =
            IngestSpec::parse(&crate::experiment::ExperimentKind::Ingest.defaults()).unwrap();
        let mut r = IngestReport::new(&spec);
        let on = SyncCommit::On;
        for (b, rps) in [
            (1, 700.0),
            (16, 9000.0),
            (64, 18500.0),
            (256, 20000.0),
            (1024, 19000.0),
        ] {
            r.trials.push(trial(Method::Copy, b, 1, on, rps));
        }
        r.summarize();
        let best = &r.summary.best[0];
        assert_eq!(best.batch, 256);
        assert_eq!(best.knee_batch, 64);
        assert_eq!(r.summary.knees.len(), 1);
        assert!(
            r.summary.findings[0].contains("knee at batch 64"),
            "{:?}",
            r.summary.findings
        );
    }

    #[test]
    fn decay_and_sync_findings() {
        assert_eq!(decay_pct(&[600.0, 600.0, 350.0]), None);
        let d = decay_pct(&[600.0, 590.0, 500.0, 420.0, 360.0, 350.0, 350.0, 340.0]).unwrap();
        assert!((d - (1.0 - 345.0 / 595.0) * 100.0).abs() < 1e-9, "{d}");
        let spec = IngestSpec::parse(&ParamText::from([
            ("rows".into(), "1k".into()),
            ("method".into(), "insert".into()),
            ("batch".into(), "1".into()),
            ("clients".into(), "1".into()),
            ("sync-commit".into(), "on".into()),
            ("payload".into(), "100B".into()),
            ("payload-type".into(), "text".into()),
            ("indexes".into(), "0".into()),
            ("append".into(), "off".into()),
            ("pipeline".into(), "off".into()),
            ("duration".into(), "off".into()),
            ("repeat".into(), "1".into()),
            ("max-repeat".into(), "10".into()),
            ("min-effect".into(), "5%".into()),
            ("confidence".into(), "95%".into()),
        ]))
        .unwrap();
        let mut r = IngestReport::new(&spec);
        r.fsync = Some(FsyncRef {
            ops_per_s: 3200.0,
            source: "probe".into(),
        });
        let mut t = trial(Method::Insert, 1, 1, SyncCommit::On, 740.0);
        t.series = vec![800.0, 790.0, 700.0, 650.0, 500.0, 450.0, 420.0, 400.0];
        t.decay_pct = decay_pct(&t.series);
        r.trials.push(t);
        r.trials
            .push(trial(Method::Insert, 1, 1, SyncCommit::Off, 7300.0));
        r.apply_fsync();
        assert_eq!(r.trials[0].fsync_fraction, Some(740.0 / 3200.0));
        assert_eq!(
            r.trials[1].fsync_fraction, None,
            "sync=off waits for no flush"
        );
        r.summarize();
        let all = r.summary.findings.join("\n");
        assert!(all.contains("23% of the disk's 3200 fsyncs/s"), "{all}");
        assert!(all.contains("synchronous_commit=off 9.9×"), "{all}");
        assert!(all.contains("fell"), "{all}");
    }
}
