//! The growth estimate by pace: past growth runs' seconds per row filled, applied to the rows
//! this spec fills, plus what a standby fault (`--standby-fault …,for=`) holds the run up.
//!
//! The fault runs beside each combination's first write round of every filled step; at a
//! `synchronous_commit` level that waits for the standby, the round's commits wait until it is
//! back, however few rows the round writes — time no pace per row carries. Each such round is
//! counted at the fault's `for` (a level that does not wait ends the fault with its writes:
//! nothing). Past runs' own fault windows are taken out of their pace, so that a faulted run's
//! waits are not spread over the rows of the next.

use super::GrowthSpec;
use crate::experiment::lab::eta::{Eta, ranged};
use crate::experiment::lab::record::{ReportBody, RunReport};
use crate::experiment::lab::standby_fields::SYNC_COMMIT;
use crate::experiment::lab::sync_commit::SyncCommit;

/// Pace × the rows the largest planned step fills, plus the fault's waits.
pub(super) fn by_pace(s: &GrowthSpec, recent: &[&RunReport]) -> Option<Eta> {
    let paces: Vec<f64> = recent.iter().filter_map(|r| pace(r)).collect();
    let top = s.planned_steps(None).last().copied().unwrap_or(0);
    let work: u64 = s.designs.iter().map(|&d| s.rows(d, top)).sum();
    let eta = ranged(&paces, work.max(1) as f64, "growth")?;
    let waits = fault_seconds(s);
    Some(Eta::new(eta.low_s + waits, eta.high_s + waits, eta.basis))
}

/// A past run's seconds per row filled, its standby fault's windows left out.
fn pace(r: &RunReport) -> Option<f64> {
    let ReportBody::Growth(b) = &r.body else {
        return None;
    };
    let filled: u64 = b
        .steps
        .iter()
        .filter_map(|st| st.grow.as_ref())
        .map(|g| g.rows)
        .sum();
    let faulted: f64 = b
        .commits
        .iter()
        .filter_map(|c| c.fault.as_ref())
        .filter_map(|f| Some(f.window.to_s? - f.window.from_s?))
        .map(|s| s.max(0.0))
        .sum();
    (filled > 0).then(|| (r.seconds() - faulted).max(0.0) / filled as f64)
}

/// Seconds the fault holds the run up: its `for` beside the first write round of every filled
/// step, for each combination whose `synchronous_commit` waits for the standby.
pub(super) fn fault_seconds(s: &GrowthSpec) -> f64 {
    fault_seconds_per_step(s) * s.planned_steps(None).len() as f64
}

/// Seconds the fault holds up one filled step: its `for` for each combination whose
/// `synchronous_commit` waits for the standby.
pub(crate) fn fault_seconds_per_step(s: &GrowthSpec) -> f64 {
    let Some(for_s) = s.fault.and_then(|f| f.for_s) else {
        return 0.0;
    };
    let waiting = s
        .set
        .combos()
        .iter()
        .filter(|c| {
            c.iter().any(|(name, v)| {
                name == SYNC_COMMIT && SyncCommit::parse(v).is_ok_and(|l| l.waits_for_standby())
            })
        })
        .count();
    for_s * waiting as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn spec(pairs: &[(&str, &str)]) -> GrowthSpec {
        let mut p = ExperimentKind::Growth.defaults();
        p.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_standby_fault_adds_its_for_to_each_waiting_round() {
        let base = [("units", "100"), ("steps", "0,2,4"), ("design", "snapshot")];
        let levels = [("sync-commit", "local,on,remote_apply")];
        let fault = [("standby-fault", "stop-at=0s,for=30s")];
        // Three steps, two of the three levels wait for the standby: six rounds of 30 s.
        let s = spec(&[&base[..], &levels, &fault].concat());
        assert_eq!(fault_seconds(&s), 180.0);
        // No fault, or none at a level that waits: nothing.
        assert_eq!(fault_seconds(&spec(&[&base[..], &levels].concat())), 0.0);
        let local = [("sync-commit", "off,local")];
        assert_eq!(
            fault_seconds(&spec(&[&base[..], &local, &fault].concat())),
            0.0
        );
        // The estimate by pace carries them on top of the rows' time.
        let past = crate::report::example::growth("p");
        let without = spec(&[&base[..], &levels].concat());
        let a = by_pace(&without, &[&past]).unwrap();
        let b = by_pace(&s, &[&past]).unwrap();
        assert!((b.low_s - a.low_s - 180.0).abs() < 1e-6, "{a:?} {b:?}");
        assert!((b.high_s - a.high_s - 180.0).abs() < 1e-6, "{a:?} {b:?}");
    }

    #[test]
    fn a_past_runs_fault_windows_are_not_part_of_its_pace() {
        let mut past = crate::report::example::growth("p");
        let clean = pace(&past).unwrap();
        let filled = (past.seconds()) / clean;
        // The same run, 10 s longer for a fault window of 10 s: the same pace.
        past.finished_at += chrono::Duration::seconds(10);
        let ReportBody::Growth(b) = &mut past.body else {
            unreachable!()
        };
        let window = crate::experiment::lab::standby_fault::FaultWindow {
            from_s: Some(0.5),
            to_s: Some(10.5),
            ..Default::default()
        };
        let write = crate::experiment::growth::WriteTiming {
            design: crate::experiment::growth::Design::Snapshot,
            round: 1,
            at_s: 0.0,
            seconds: 11.0,
            commit_seconds: 10.5,
            rows: 1000,
        };
        let fault =
            crate::experiment::growth::GrowthFault::of(window, 1, std::slice::from_ref(&write));
        b.commits.extend(crate::experiment::growth::StepCommits::of(
            (10, 0),
            Default::default(),
            vec![write],
            vec![],
            Some(fault),
        ));
        let p = pace(&past).unwrap();
        assert!((p - clean).abs() * filled < 1e-6, "{p} against {clean}");
    }
}
