//! What a commit level costs, in the words every experiment that sweeps `synchronous_commit`
//! uses: latency percentiles, the seconds without a commit and the slowest second, the
//! standby's lag after the load; per level one line ("on p50 2.31 ms [2.28 … 2.40], p99 …"),
//! per configuration one finding, and what each level buys after them.

use serde::{Deserialize, Serialize};

use super::sync_commit::{SyncCommit, durability};
use crate::measure::interval::estimate;
use crate::measure::stats::{median, quantile_sorted};
use crate::server::replication::ReplicaLag;

/// Latency percentiles (an ingest batch, a statement execution), milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyMs {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    /// The 99.9th percentile (absent in records before it was kept).
    #[serde(default)]
    pub p999: f64,
    pub max: f64,
}

impl LatencyMs {
    /// The percentiles of these latencies (ms): p50 the median, the others by nearest rank
    /// (with a handful of values, p99 and above are the largest); None when there are none.
    pub(crate) fn of_ms(values: &[f64]) -> Option<LatencyMs> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let q = |q: f64| quantile_sorted(&v, q);
        Some(LatencyMs {
            p50: median(&v)?,
            p95: q(0.95)?,
            p99: q(0.99)?,
            p999: q(0.999)?,
            max: *v.last()?,
        })
    }
}

/// Seconds without a commit, and the slowest second's rate, of a per-second series.
pub fn stalls_of(series: &[f64]) -> (u32, Option<f64>) {
    let stalls = series.iter().filter(|r| **r <= 0.0).count() as u32;
    (stalls, series.iter().copied().reduce(f64::min))
}

/// How a load went second by second, and the standbys after it: what a growth step's writes
/// ([`crate::experiment::growth::StepCommits`]) and a throughput trial
/// ([`crate::experiment::query::per_second::LoadRecord`]) both record. Embedded in their
/// records with `#[serde(flatten)]`: its fields stand in the record's JSON as before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadShape {
    /// The work done in each whole second of the load: rows written (a growth step's write
    /// phases) or transactions finished (a throughput trial, its last partial second scaled
    /// and kept when it lasted half a second or more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<f64>,
    /// Whole seconds in which nothing was done: no row written, no transaction finished.
    #[serde(default)]
    pub stall_seconds: u32,
    /// The slowest whole second's work (None under one second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_second: Option<f64>,
    /// The primary's standbys as `pg_stat_replication` showed them right after the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaLag>,
}

impl LoadShape {
    /// The shape of this per-second `series` ([`stalls_of`]), with the standbys after it.
    pub(crate) fn of(series: Vec<f64>, replicas: Vec<ReplicaLag>) -> LoadShape {
        let (stall_seconds, worst_second) = stalls_of(&series);
        LoadShape {
            series,
            stall_seconds,
            worst_second,
            replicas,
        }
    }
}

/// A synchronous standby among these (`sync`, or one of a quorum).
pub(crate) fn synchronous(replicas: &[ReplicaLag]) -> bool {
    replicas
        .iter()
        .any(|r| r.sync_state == "sync" || r.sync_state == "quorum")
}

/// "insert batch 1, 1 client wal_compression=on: commit latency by synchronous_commit (…): parts";
/// `per`: what one of the values is (a trial, a growth step).
fn by_level(subject: &str, settings: &str, (what, per): (&str, &str), parts: &[String]) -> String {
    format!(
        "{subject}{}{settings}: {what} by synchronous_commit (p50 median [interval] of the {per}s; p99 / p99.9 / max the worst {per}'s): {}",
        if settings.is_empty() { "" } else { " " },
        parts.join("; ")
    )
}

/// "what each level buys: …", the levels in PostgreSQL's order.
pub(crate) fn buys(mut levels: Vec<SyncCommit>, sync_standby: bool) -> String {
    levels.sort_by_key(|l| SyncCommit::ALL.iter().position(|a| a == l));
    levels.dedup();
    let mut buys: Vec<&str> = levels
        .iter()
        .map(|l| durability(*l, sync_standby))
        .collect();
    buys.dedup();
    format!("what each level buys: {}", buys.join("; "))
}

/// One trial at a level, as its finding reads it.
#[derive(Clone, Copy)]
pub(crate) struct LevelTrial<'a> {
    pub latency: LatencyMs,
    pub stall_seconds: u32,
    pub worst_second: Option<f64>,
    pub replicas: &'a [ReplicaLag],
}

/// "on p50 2.31 ms [2.28 … 2.40], p99 3.1, p99.9 4.0, max 6.2 ms, 0 stall s, slowest second
/// 410 rows/s, standby replay lag up to 0.4 ms" (`unit`: of the per-second rate).
pub(crate) fn level_line(
    level: SyncCommit,
    ts: &[LevelTrial],
    unit: &str,
    confidence: f64,
) -> Option<String> {
    let p50 = estimate(
        &ts.iter().map(|t| t.latency.p50).collect::<Vec<_>>(),
        confidence,
    )?;
    let worst = |f: fn(&LatencyMs) -> f64| ts.iter().map(|t| f(&t.latency)).fold(0.0, f64::max);
    let stalls: u32 = ts.iter().map(|t| t.stall_seconds).sum();
    let slowest = ts
        .iter()
        .filter_map(|t| t.worst_second)
        .reduce(f64::min)
        .map(|w| format!(", slowest second {w:.0} {unit}"))
        .unwrap_or_default();
    let lag = ts
        .iter()
        .flat_map(|t| t.replicas.iter())
        .filter_map(|r| r.replay_lag_ms)
        .reduce(f64::max)
        .map(|l| format!(", standby replay lag up to {l:.1} ms"))
        .unwrap_or_default();
    Some(format!(
        "{} p50 {:.2} ms [{:.2} … {:.2}], p99 {:.2}, p99.9 {:.2}, max {:.2} ms, {stalls} stall s{slowest}{lag}",
        level.as_str(),
        p50.median,
        p50.ci_low,
        p50.ci_high,
        worst(|l| l.p99),
        worst(|l| l.p999),
        worst(|l| l.max),
    ))
}

/// One measured unit of a configuration at a level (an ingest or query trial, a growth
/// step of a combination), as the findings group it.
pub(crate) struct LevelRow<'a> {
    /// The configuration but its settings: `insert batch 1, 1 client`, `1 client`, `growth writes`.
    pub subject: String,
    /// Its other swept settings (`wal_compression=on`), empty when none.
    pub settings: String,
    pub level: SyncCommit,
    pub trial: LevelTrial<'a>,
}

/// What the findings say: `what` is measured ("commit latency"), `unit` the per-second rate's
/// ("rows/s"), `per` what one value is ("trial", "step").
#[derive(Clone, Copy)]
pub(crate) struct LevelWords<'a> {
    pub what: &'a str,
    pub unit: &'a str,
    pub per: &'a str,
}

/// One finding per configuration (subject and settings) measured at two levels or more, each
/// level in its line, then what each level buys — the same words for every experiment.
pub(crate) fn level_findings(rows: &[LevelRow], words: LevelWords, confidence: f64) -> Vec<String> {
    let key = |r: &LevelRow| (r.subject.clone(), r.settings.clone());
    let mut keys = Vec::new();
    for r in rows {
        if !keys.contains(&key(r)) {
            keys.push(key(r));
        }
    }
    let (mut out, mut seen, mut sync_standby) = (Vec::new(), Vec::new(), false);
    for k in keys {
        let of: Vec<&LevelRow> = rows.iter().filter(|r| key(r) == k).collect();
        let mut levels: Vec<SyncCommit> = Vec::new();
        for r in &of {
            if !levels.contains(&r.level) {
                levels.push(r.level);
            }
        }
        if levels.len() < 2 {
            continue;
        }
        sync_standby |= of.iter().any(|r| synchronous(r.trial.replicas));
        let parts: Vec<String> = levels
            .iter()
            .filter_map(|l| {
                let ts: Vec<LevelTrial> = of
                    .iter()
                    .filter(|r| r.level == *l)
                    .map(|r| r.trial)
                    .collect();
                level_line(*l, &ts, words.unit, confidence)
            })
            .collect();
        seen.extend(levels);
        out.push(by_level(&k.0, &k.1, (words.what, words.per), &parts));
    }
    if !out.is_empty() {
        out.push(buys(seen, sync_standby));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_seconds_without_a_commit() {
        assert_eq!(stalls_of(&[]), (0, None));
        assert_eq!(stalls_of(&[500.0, 0.0, 0.0, 420.0]), (2, Some(0.0)));
        assert_eq!(stalls_of(&[500.0, 380.0]), (0, Some(380.0)));
    }

    #[test]
    fn percentiles_of_a_few_latencies() {
        assert_eq!(LatencyMs::of_ms(&[]), None);
        let l = LatencyMs::of_ms(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!(
            (l.p50, l.p95, l.p99, l.p999, l.max),
            (2.5, 10.0, 10.0, 10.0, 10.0)
        );
        let many: Vec<f64> = (1..=1000).map(f64::from).collect();
        let l = LatencyMs::of_ms(&many).unwrap();
        assert_eq!((l.p50, l.p95, l.p99, l.max), (500.5, 950.0, 990.0, 1000.0));
        assert_eq!(l.p999, 999.0);
    }
}
