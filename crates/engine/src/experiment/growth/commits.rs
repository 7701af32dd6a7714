//! The COMMITs of a growth run's version writes: each write's own COMMIT time (where a
//! synchronous standby's wait shows), kept per step and combination of swept settings with
//! their percentiles, the rows written per second of the write phases, the stall seconds and
//! the slowest second, the standbys after the writes, and what a standby fault did meanwhile.
//!
//! **Write phases.** A combination's writes at a step (every design's new version, every
//! round), each from its BEGIN to the end of its COMMIT, laid end to end: the growth, the reads
//! and the other combinations' turns in between are not counted. A version's rows count as
//! written evenly over the time its statements took (BEGIN up to COMMIT) and none while its
//! COMMIT runs.
//!
//! **A growth stall second** is a whole second of the write phases in which no row was
//! written: in practice a second spent inside a COMMIT, waiting for its WAL to be flushed or
//! for a synchronous standby (a COMMIT of 2.6 s holds one or two, by where it falls within
//! the seconds). A second spent sending a large version's rows is work, not a stall, even
//! though no commit finishes in it. Write phases shorter than a second have no whole second:
//! no stall and no slowest second.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::kinds::Design;
use crate::experiment::lab::commit_cost::{LatencyMs, LoadShape, stalls_of};
use crate::experiment::lab::standby_fault::FaultWindow;
use crate::server::replication::ReplicaLag;

/// One version write, as timed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteTiming {
    pub design: Design,
    /// The write round (from 1).
    pub round: u32,
    /// Seconds from the start of its turn (the combination's writes of that round) to its
    /// BEGIN.
    pub at_s: f64,
    /// BEGIN to the end of COMMIT.
    pub seconds: f64,
    /// The COMMIT alone.
    pub commit_seconds: f64,
    /// Rows the version wrote.
    pub rows: u64,
}

/// What a standby fault did beside a combination's write round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthFault {
    /// The round it ran beside (its window counts from that round's start).
    pub round: u32,
    pub window: FaultWindow,
    /// COMMITs in progress while the standby was gone (stopped, or its replay paused).
    pub commits: u32,
    /// Their COMMIT time, in all: how long commits waited meanwhile.
    pub commits_waited_s: f64,
    /// The longest of them, ms.
    pub longest_commit_ms: f64,
}

impl GrowthFault {
    /// The fault's record from its window and the writes of its round.
    pub(crate) fn of(window: FaultWindow, round: u32, writes: &[WriteTiming]) -> GrowthFault {
        let during: Vec<&WriteTiming> = match (window.from_s, window.to_s) {
            (Some(from), Some(to)) => writes
                .iter()
                .filter(|w| w.round == round)
                .filter(|w| w.at_s + w.seconds > from && w.at_s + w.seconds - w.commit_seconds < to)
                .collect(),
            _ => Vec::new(),
        };
        GrowthFault {
            round,
            window,
            commits: during.len() as u32,
            commits_waited_s: during
                .iter()
                .map(|w| w.commit_seconds)
                .fold(0.0, |a, b| a + b),
            longest_commit_ms: during
                .iter()
                .map(|w| w.commit_seconds * 1000.0)
                .fold(0.0, f64::max),
        }
    }
}

/// One combination's commits at one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepCommits {
    /// The step (versions held when it began).
    pub versions: u64,
    /// The combination of swept settings (an index into the spec's).
    #[serde(default)]
    pub combo: usize,
    /// The swept settings as `SHOW` reported them in the writing session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Every version write, in the order written.
    pub writes: Vec<WriteTiming>,
    /// The COMMITs' percentiles, ms.
    pub commit_ms: LatencyMs,
    /// Rows written per whole second of the write phases (see the module's doc), the seconds
    /// without a row written (inside COMMITs), the slowest second's rows, and the standbys
    /// after this combination's last writes of the step (flattened: the same JSON fields as
    /// before).
    #[serde(flatten)]
    pub shape: LoadShape,
    /// `--standby-fault`: what it did beside the first write round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<GrowthFault>,
}

impl StepCommits {
    /// The record of these writes (None when there were none).
    pub(crate) fn of(
        (versions, combo): (u64, usize),
        settings: BTreeMap<String, String>,
        writes: Vec<WriteTiming>,
        replicas: Vec<ReplicaLag>,
        fault: Option<GrowthFault>,
    ) -> Option<StepCommits> {
        let commit_ms = commit_ms(&writes)?;
        let shape = LoadShape::of(rows_per_second(&writes), replicas);
        Some(StepCommits {
            versions,
            combo,
            settings,
            writes,
            commit_ms,
            shape,
            fault,
        })
    }
}

/// The COMMIT percentiles of these writes, ms.
pub(crate) fn commit_ms(writes: &[WriteTiming]) -> Option<LatencyMs> {
    let ms: Vec<f64> = writes.iter().map(|w| w.commit_seconds * 1000.0).collect();
    LatencyMs::of_ms(&ms)
}

/// Rows written in each whole second of these writes laid end to end: a write's rows spread
/// evenly over its statements' time (before its COMMIT), none during its COMMIT; the last
/// partial second is left out.
pub(crate) fn rows_per_second(writes: &[WriteTiming]) -> Vec<f64> {
    let total: f64 = writes.iter().map(|w| w.seconds.max(0.0)).sum();
    let mut series = vec![0.0; total.floor() as usize];
    let mut t = 0.0;
    for w in writes {
        let body = (w.seconds - w.commit_seconds).max(0.0);
        let rows = w.rows as f64;
        if body <= 0.0 {
            if let Some(s) = series.get_mut(t as usize) {
                *s += rows;
            }
        } else {
            let (from, to) = (t, t + body);
            for (k, s) in series
                .iter_mut()
                .enumerate()
                .skip(from as usize)
                .take_while(|(k, _)| (*k as f64) < to)
            {
                let overlap = (to.min(k as f64 + 1.0) - from.max(k as f64)).max(0.0);
                *s += rows * overlap / body;
            }
        }
        t += w.seconds.max(0.0);
    }
    series
}

/// A combination's commits over every step it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComboCommits {
    pub combo: usize,
    /// Its swept settings (`synchronous_commit=on pglab.standby_rtt=2ms`).
    pub label: String,
    pub commits: u32,
    pub commit_ms: LatencyMs,
    /// Over all its write phases laid end to end (see the module's doc).
    pub stall_seconds: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_second: Option<f64>,
    /// Whole seconds its write phases lasted.
    pub seconds: u32,
}

/// Per combination (in the sweep's order), its commits over every step.
pub(crate) fn per_combo(steps: &[StepCommits], labels: &[String]) -> Vec<ComboCommits> {
    let mut combos: Vec<usize> = steps.iter().map(|s| s.combo).collect();
    combos.sort_unstable();
    combos.dedup();
    combos
        .into_iter()
        .filter_map(|c| {
            let writes: Vec<WriteTiming> = steps
                .iter()
                .filter(|s| s.combo == c)
                .flat_map(|s| s.writes.iter().cloned())
                .collect();
            let series = rows_per_second(&writes);
            let (stall_seconds, worst_second) = stalls_of(&series);
            Some(ComboCommits {
                combo: c,
                label: labels.get(c).cloned().unwrap_or_default(),
                commits: writes.len() as u32,
                commit_ms: commit_ms(&writes)?,
                stall_seconds,
                worst_second,
                seconds: series.len() as u32,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(round: u32, at_s: f64, seconds: f64, commit_seconds: f64, rows: u64) -> WriteTiming {
        WriteTiming {
            design: Design::Snapshot,
            round,
            at_s,
            seconds,
            commit_seconds,
            rows,
        }
    }

    #[test]
    fn rows_spread_over_the_statements_and_none_while_committing() {
        // 1.5 s of rows (300), then a 2.6 s COMMIT, then 1 s of rows (100) with a quick one.
        let s = rows_per_second(&[w(1, 0.0, 4.1, 2.6, 300), w(1, 4.1, 1.0, 0.1, 100)]);
        assert_eq!(s.len(), 5);
        let want = [200.0, 100.0, 0.0, 0.0, 100.0];
        for (got, want) in s.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{s:?}");
        }
        // Seconds 2 and 3 lie wholly inside the COMMIT: two stall seconds.
        assert_eq!(stalls_of(&s), (2, Some(0.0)));
        // A large version's seconds of sending rows are work, not stalls.
        let big = rows_per_second(&[w(1, 0.0, 5.2, 0.2, 50_000)]);
        assert_eq!(stalls_of(&big).0, 0, "{big:?}");
        // Shorter than a second: nothing to say.
        assert!(rows_per_second(&[w(1, 0.0, 0.4, 0.1, 10)]).is_empty());
    }

    #[test]
    fn a_fault_counts_the_commits_it_held() {
        let writes = [
            w(1, 0.0, 3.0, 2.5, 100),  // COMMIT 0.5–3.0: overlaps the window
            w(1, 3.0, 0.2, 0.01, 100), // after the window
            w(2, 0.0, 3.0, 2.5, 100),  // another round
        ];
        let window = FaultWindow {
            fault: "stop-at=100ms,for=2s".into(),
            from_s: Some(0.1),
            to_s: Some(2.4),
            ..Default::default()
        };
        let f = GrowthFault::of(window.clone(), 1, &writes);
        assert_eq!(f.commits, 1);
        assert!((f.commits_waited_s - 2.5).abs() < 1e-9);
        assert!((f.longest_commit_ms - 2500.0).abs() < 1e-6);
        // A fault that never began held nothing.
        let never = FaultWindow {
            from_s: None,
            to_s: None,
            ..window
        };
        assert_eq!(GrowthFault::of(never, 1, &writes).commits, 0);
    }

    #[test]
    fn per_combination_over_every_step() {
        let step = |combo, writes: Vec<WriteTiming>| {
            StepCommits::of((0, combo), BTreeMap::new(), writes, vec![], None).unwrap()
        };
        let steps = [
            step(
                0,
                vec![w(1, 0.0, 0.4, 0.001, 10), w(1, 0.4, 0.4, 0.002, 10)],
            ),
            step(1, vec![w(1, 0.0, 0.6, 0.003, 10)]),
            step(0, vec![w(1, 0.0, 0.6, 0.003, 10)]),
        ];
        // Each step alone is shorter than a second.
        assert!(steps.iter().all(|s| s.shape.series.is_empty()));
        let labels = ["local".to_string(), "on".to_string()];
        let c = per_combo(&steps, &labels);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].label.as_str(), c[0].commits, c[0].seconds),
            ("local", 3, 1)
        );
        assert!((c[0].commit_ms.p50 - 2.0).abs() < 1e-9);
        assert_eq!(c[0].stall_seconds, 0);
        assert_eq!((c[1].commits, c[1].seconds), (1, 0));
        assert!(StepCommits::of((0, 0), BTreeMap::new(), vec![], vec![], None).is_none());
    }

    /// The load's shape is flattened into the step's record: a record written before it was a
    /// struct of its own reads back the same, and is written again byte for byte.
    #[test]
    fn a_step_keeps_its_json_with_the_shape_flattened() {
        let old = concat!(
            r#"{"versions":10,"combo":1,"settings":{"synchronous_commit":"on"},"#,
            r#""writes":[{"design":"snapshot","round":1,"at_s":0.0,"seconds":4.1,"#,
            r#""commit_seconds":2.6,"rows":300}],"#,
            r#""commit_ms":{"p50":2600.0,"p95":2600.0,"p99":2600.0,"p999":2600.0,"max":2600.0},"#,
            r#""series":[200.0,100.0,0.0,0.0],"stall_seconds":2,"worst_second":0.0,"#,
            r#""fault":{"round":1,"window":{"fault":"stop-at=100ms,for=2s","#,
            r#""standby":"pglab_standby_1","from_s":0.1,"to_s":2.4},"commits":1,"#,
            r#""commits_waited_s":2.6,"longest_commit_ms":2600.0}}"#
        );
        let s: StepCommits = serde_json::from_str(old).unwrap();
        assert_eq!(s.shape.series, [200.0, 100.0, 0.0, 0.0]);
        assert_eq!(
            (s.shape.stall_seconds, s.shape.worst_second),
            (2, Some(0.0))
        );
        assert!(s.shape.replicas.is_empty());
        assert_eq!(s.fault.as_ref().map(|f| f.commits), Some(1));
        assert_eq!(serde_json::to_string(&s).unwrap(), old);
        // Older still: no series, stalls nor fault recorded.
        let bare = concat!(
            r#"{"versions":0,"writes":[],"#,
            r#""commit_ms":{"p50":1.0,"p95":1.0,"p99":1.0,"max":1.0}}"#
        );
        let s: StepCommits = serde_json::from_str(bare).unwrap();
        assert_eq!((s.combo, &s.shape), (0, &LoadShape::default()));
    }
}
