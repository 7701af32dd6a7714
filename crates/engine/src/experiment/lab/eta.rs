//! How long a run will take, said before it starts (the TUI's estimate line, the headless
//! header) and while it runs (until its own progress can say more): a range of seconds.
//!
//! Two sources, the better first. The last runs of the same parameters on this host: their
//! durations are the range. Else the pace past runs of the same experiment measured on this
//! host, applied to this spec's work, each kind by its own measure in its own `eta.rs`:
//! index-build seconds per row built, ingest rows/s per method, synchronous_commit and batch
//! (the disk's fsync rate for single-row commits when no run measured them), growth seconds
//! per row filled (plus the waits of a standby fault), query seconds per trial of the same
//! statements. The range spans the paces seen. No past run that says anything: no estimate,
//! and the caller says so.

use super::experiment::{Experiment, each_kind};
use crate::experiment::{ExperimentSpec, Outcome, RunReport};
use crate::measure::units::format_seconds;

/// The most recent runs an estimate looks at.
const RECENT: usize = 10;

/// A range of seconds and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Eta {
    pub low_s: f64,
    pub high_s: f64,
    /// "the last 2 runs of these parameters", "the pace of 3 past ingest runs".
    pub basis: String,
}

impl Eta {
    pub(crate) fn new(low: f64, high: f64, basis: String) -> Eta {
        let (low, high) = (low.min(high).max(0.0), high.max(low).max(0.0));
        Eta {
            low_s: low,
            high_s: high,
            basis,
        }
    }

    /// "40 s–1m 05s", or one value when the ends are within 15% of each other.
    pub fn range_text(&self) -> String {
        // Ends that print alike ("0 ms–0 ms") are one value.
        if self.high_s <= self.low_s * 1.15
            || format_seconds(self.low_s) == format_seconds(self.high_s)
        {
            format!("≈ {}", format_seconds((self.low_s + self.high_s) / 2.0))
        } else {
            format!(
                "{}–{}",
                format_seconds(self.low_s),
                format_seconds(self.high_s)
            )
        }
    }

    /// What is left after `elapsed` seconds, by the same range (None once past its end).
    pub fn remaining(&self, elapsed: f64) -> Option<Eta> {
        (elapsed < self.high_s).then(|| {
            Eta::new(
                (self.low_s - elapsed).max(0.0),
                self.high_s - elapsed,
                self.basis.clone(),
            )
        })
    }
}

/// The estimate for `spec` from `history` (oldest first), looking only at finished runs on
/// `host` (a hostname; None: any).
pub fn estimate(spec: &ExperimentSpec, history: &[RunReport], host: Option<&str>) -> Option<Eta> {
    let kind = spec.kind();
    let mut past: Vec<&RunReport> = history
        .iter()
        .filter(|r| r.outcome == Outcome::Finished && r.kind() == kind)
        .filter(|r| host.is_none_or(|h| r.host.hostname == h))
        .collect();
    past.reverse();
    same_spec(spec, &past).or_else(|| by_pace(spec, &past))
}

/// The range of the last runs of exactly these parameters.
fn same_spec(spec: &ExperimentSpec, past: &[&RunReport]) -> Option<Eta> {
    let key = spec.spec_key();
    let secs: Vec<f64> = past
        .iter()
        .filter(|r| r.spec_key == key)
        .take(5)
        .map(|r| r.seconds())
        .collect();
    let (lo, hi) = span(&secs)?;
    let basis = match secs.len() {
        1 => "the last run of these parameters".to_string(),
        n => format!("the last {n} runs of these parameters"),
    };
    // One run says little about the spread: widen it.
    Some(if secs.len() == 1 {
        Eta::new(lo * 0.9, hi * 1.2, basis)
    } else {
        Eta::new(lo, hi, basis)
    })
}

/// The smallest and largest finite value.
pub(crate) fn span(v: &[f64]) -> Option<(f64, f64)> {
    let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if finite.is_empty() {
        return None;
    }
    Some(
        finite
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x))),
    )
}

/// The kind's own estimate from the pace of its recent runs (each kind's `eta.rs`).
fn by_pace(spec: &ExperimentSpec, past: &[&RunReport]) -> Option<Eta> {
    let recent: Vec<&RunReport> = past.iter().take(RECENT).copied().collect();
    each_kind!(spec, s => s.eta_by_pace(&recent))
}

/// Other parameters' pace says less than the same parameters' runs: its range is widened.
pub(crate) const PACE_LOW: f64 = 0.75;
pub(crate) const PACE_HIGH: f64 = 1.5;

/// `work` × the fastest and slowest pace (widened); None without a pace.
pub(crate) fn ranged(paces: &[f64], work: f64, what: &str) -> Option<Eta> {
    let (lo, hi) = span(paces)?;
    let n = paces.len();
    Some(Eta::new(
        lo * work * PACE_LOW,
        hi * work * PACE_HIGH,
        format!(
            "the pace of {n} past {what} run{} on this host",
            if n == 1 { "" } else { "s" }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentKind;
    use crate::experiment::index_build::Order;

    fn spec(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
        let p = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        kind.parse_spec(&p).unwrap()
    }

    fn with_seconds(mut r: RunReport, secs: f64) -> RunReport {
        r.finished_at = r.started_at + chrono::Duration::milliseconds((secs * 1000.0) as i64);
        r
    }

    #[test]
    fn the_last_runs_of_the_same_parameters_are_the_range() {
        let s = spec(ExperimentKind::IndexBuild, &[("rows", "10k")]);
        let mut a = crate::report::example::index_build(
            "a",
            10_000,
            &[(Order::Random, 0, "64MB", &[1.0, 1.1])],
        );
        a.spec_key = s.spec_key();
        let b = with_seconds(a.clone(), 50.0);
        let a = with_seconds(a, 40.0);
        let e = estimate(&s, &[a.clone(), b], None).unwrap();
        assert_eq!((e.low_s, e.high_s), (40.0, 50.0));
        assert_eq!(e.basis, "the last 2 runs of these parameters");
        assert_eq!(e.range_text(), "40.0 s–50.0 s");
        // One run: widened around it.
        let e = estimate(&s, std::slice::from_ref(&a), None).unwrap();
        assert_eq!((e.low_s, e.high_s), (36.0, 48.0));
        // Another host's runs say nothing about this one.
        assert!(estimate(&s, &[a], Some("elsewhere")).is_none());
    }

    #[test]
    fn other_parameters_give_their_pace_scaled_to_the_work() {
        // A past run built 2 × 100k rows in 1.0 and 1.1 s of a 10 s run: 1.05e-5 s a row
        // built, and 3.95 s a trial besides.
        let past = with_seconds(
            crate::report::example::index_build(
                "p",
                100_000,
                &[(Order::Random, 0, "64MB", &[1.0, 1.1])],
            ),
            10.0,
        );
        let s = spec(
            ExperimentKind::IndexBuild,
            &[
                ("rows", "1M"),
                ("order", "random"),
                ("mwm", "64MB"),
                ("repeat", "4"),
            ],
        );
        let e = estimate(&s, &[past], None).unwrap();
        // 4 builds of 1M rows: 42 s of building and 15.8 s besides.
        let time = 1.05e-5 * 4e6 + 3.95 * 4.0;
        assert!((e.low_s - time * PACE_LOW).abs() < 1e-6, "{e:?}");
        assert!((e.high_s - time * PACE_HIGH).abs() < 1e-6, "{e:?}");
        assert!(e.basis.contains("pace of 1 past index-build run"), "{e:?}");
        assert!(estimate(&s, &[], None).is_none());
    }

    #[test]
    fn ingest_uses_the_rows_per_second_of_its_method_and_the_fsync_rate() {
        let s = spec(
            ExperimentKind::Ingest,
            &[("method", "insert"), ("rows", "1000"), ("repeat", "1")],
        );
        assert!(estimate(&s, &[], None).is_none());
        let ExperimentSpec::Ingest(mut i) = s else {
            unreachable!()
        };
        i.fsync_ops_per_s = Some(500.0);
        let e = estimate(&ExperimentSpec::Ingest(i.clone()), &[], None).unwrap();
        // 1000 rows at 500 commits/s, plus the default time between trials.
        assert!((e.high_s - 2.5 * PACE_HIGH).abs() < 1e-9, "{e:?}");
        assert_eq!(e.basis, "the disk's fsync rate");
        // A duration caps each trial.
        i.duration_s = Some(1.0);
        let e = estimate(&ExperimentSpec::Ingest(i), &[], None).unwrap();
        assert!((e.high_s - 1.5 * PACE_HIGH).abs() < 1e-9, "{e:?}");
    }

    #[test]
    fn ranges_read_as_one_value_when_narrow() {
        let e = Eta::new(10.0, 11.0, String::new());
        assert_eq!(e.range_text(), "≈ 10.5 s");
        assert_eq!(e.remaining(4.0).unwrap().range_text(), "6.0 s–7.0 s");
        assert_eq!(e.remaining(0.5).unwrap().range_text(), "≈ 10.0 s");
        assert!(e.remaining(12.0).is_none());
    }
}
