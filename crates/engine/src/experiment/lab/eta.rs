//! How long a run will take, said before it starts (the TUI's estimate line, the headless
//! header) and while it runs (until its own progress can say more): a range of seconds.
//!
//! Two sources, the better first. The last runs of the same parameters on this host: their
//! durations are the range. Else the pace past runs of the same experiment measured on this
//! host, applied to this spec's work: index-build seconds per row built, ingest rows/s per
//! method, synchronous_commit and batch (the disk's fsync rate for single-row commits when no
//! run measured them), growth seconds per row filled (plus the waits of a standby fault, see
//! `eta_growth.rs`), query seconds per trial of the same statements. The range spans the
//! paces seen. No past run that says anything: no estimate, and the caller says so.

#[path = "eta_growth.rs"]
pub(crate) mod growth;

use crate::experiment::ingest::{Method, SyncCommit};
use crate::experiment::{ExperimentSpec, Outcome, ReportBody, RunReport};
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
    fn new(low: f64, high: f64, basis: String) -> Eta {
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

fn span(v: &[f64]) -> Option<(f64, f64)> {
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

fn by_pace(spec: &ExperimentSpec, past: &[&RunReport]) -> Option<Eta> {
    let recent: Vec<&RunReport> = past.iter().take(RECENT).copied().collect();
    match spec {
        ExperimentSpec::IndexBuild(s) => index_build(s, &recent),
        ExperimentSpec::Growth(s) => growth::by_pace(s, &recent),
        ExperimentSpec::Ingest(s) => ingest(s, &recent),
        ExperimentSpec::Query(s) => query(s, &recent),
    }
}

/// Two paces of past index-build runs (the same key type first): seconds per row built,
/// over their timed builds, and the rest of the run (dataset, CHECKPOINTs, warm-ups,
/// connecting) per trial. One pace for the whole run made a small run's fixed costs scale
/// with the rows: a 100k-row run's pace put a 400k-row one at three times its time.
fn index_build(
    s: &crate::experiment::index_build::IndexBuildSpec,
    recent: &[&RunReport],
) -> Option<Eta> {
    let paces = |same_key: bool| -> Vec<f64> {
        recent
            .iter()
            .filter_map(|r| match &r.body {
                ReportBody::IndexBuild(b) => Some((*r, b)),
                _ => None,
            })
            .filter(|(_, b)| !same_key || b.params.key == s.key)
            .filter_map(|(r, b)| {
                let timed: Vec<&_> = b.trials.iter().filter(|t| !t.warmup).collect();
                let rows: f64 = timed.iter().map(|t| t.rows as f64).sum();
                let build: f64 = timed.iter().map(|t| t.seconds).sum();
                let per_row = (rows > 0.0).then(|| build / rows)?;
                let rest = (r.seconds() - build).max(0.0) / b.trials.len().max(1) as f64;
                let trials = s.trials() as f64;
                Some(per_row * trials * s.rows as f64 + rest * trials)
            })
            .collect()
    };
    let mut times = paces(true);
    if times.is_empty() {
        times = paces(false);
    }
    ranged(&times, 1.0, "index-build")
}

/// Past runs of the same statements (or script) in the same mode: the seconds per timed
/// trial, and the rest of the run (setup, plans, warm-ups, restarts) per combination, the
/// DBA's own statements having no pace but their own. One pace per trial, setup included, put
/// a 12-trial run at 1.6 times its time after a 5-trial one.
fn query(s: &crate::experiment::query::QuerySpec, recent: &[&RunReport]) -> Option<Eta> {
    let digest = crate::experiment::query::statements_digest(s);
    let combos = s.combo_count().max(1) as f64;
    let times: Vec<f64> = recent
        .iter()
        .filter_map(|r| match &r.body {
            ReportBody::Query(b) => Some((*r, b)),
            _ => None,
        })
        .filter(|(_, b)| b.statements_digest == digest && b.params.throughput() == s.throughput())
        .filter(|(_, b)| !b.trials.is_empty())
        .map(|(r, b)| {
            // A statement trial's seconds are per execution, of a batch of them.
            let timed: f64 = b
                .trials
                .iter()
                .map(|t| t.seconds * t.executions.max(1) as f64)
                .sum();
            let per_trial = timed / b.trials.len() as f64;
            let past_combos = b.combos.len().max(1) as f64;
            let rest = (r.seconds() - timed).max(0.0) / past_combos;
            per_trial * s.trials() as f64 + rest * combos
        })
        .collect();
    ranged(&times, 1.0, "query")
}

/// Other parameters' pace says less than the same parameters' runs: its range is widened.
const PACE_LOW: f64 = 0.75;
const PACE_HIGH: f64 = 1.5;

/// `work` × the fastest and slowest pace (widened); None without a pace.
fn ranged(paces: &[f64], work: f64, what: &str) -> Option<Eta> {
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

/// Each planned trial at the rows/s past trials of its method, synchronous_commit and
/// (nearest) batch reached, capped by the trial's duration, plus the runs' own time between
/// trials.
fn ingest(s: &crate::experiment::ingest::IngestSpec, recent: &[&RunReport]) -> Option<Eta> {
    let reports: Vec<(&RunReport, &crate::experiment::ingest::IngestReport)> = recent
        .iter()
        .filter_map(|r| match &r.body {
            ReportBody::Ingest(b) => Some((*r, b.as_ref())),
            _ => None,
        })
        .collect();
    // Seconds a past run spent around its trials (setup, CHECKPOINTs), per trial.
    let between: Vec<f64> = reports
        .iter()
        .filter(|(_, b)| !b.trials.is_empty())
        .map(|(r, b)| {
            let inside: f64 = b.trials.iter().map(|t| t.seconds).sum();
            (r.seconds() - inside).max(0.0) / b.trials.len() as f64
        })
        .collect();
    let overhead = crate::measure::stats::median(&between).unwrap_or(0.5);
    let rounds = s.rounds() as f64;
    let (mut low, mut high) = (0.0, 0.0);
    let mut from_probe = false;
    for p in s.plan() {
        let (fast, slow) = match rates(&reports, p.method, p.sync, p.batch) {
            Some(r) => r,
            None => {
                // A commit per row waits for a flush: the disk's fsync rate is the pace.
                let f = s
                    .fsync_ops_per_s
                    .filter(|_| p.method == Method::Insert && p.sync == SyncCommit::On)?;
                from_probe = true;
                (f * p.clients as f64, f)
            }
        };
        let time = |rate: f64| {
            let t = s.rows as f64 / rate.max(1e-9);
            s.duration_s.map_or(t, |d| t.min(d)) + overhead
        };
        low += time(fast) * rounds;
        high += time(slow) * rounds;
    }
    let n = reports.len();
    let basis = match (n, from_probe) {
        (0, _) => "the disk's fsync rate".to_string(),
        (n, false) => format!(
            "the rows/s of {n} past ingest run{} on this host",
            if n == 1 { "" } else { "s" }
        ),
        (n, true) => format!(
            "the rows/s of {n} past ingest run{} and the disk's fsync rate",
            if n == 1 { "" } else { "s" }
        ),
    };
    Some(Eta::new(low * PACE_LOW, high * PACE_HIGH, basis))
}

/// The fastest and slowest rows/s this method and synchronous_commit reach at `batch`: what
/// past trials reached at that batch, or between the nearest batches below and above it
/// (log-log, rows/s grow with the batch until something else limits them), or at the
/// nearest one on one side.
fn rates(
    reports: &[(&RunReport, &crate::experiment::ingest::IngestReport)],
    method: Method,
    sync: SyncCommit,
    batch: u64,
) -> Option<(f64, f64)> {
    let trials: Vec<&crate::experiment::ingest::IngestTrial> = reports
        .iter()
        .flat_map(|(_, b)| b.trials.iter())
        .filter(|t| t.method == method && t.synchronous_commit == sync && t.rows_per_s > 0.0)
        .collect();
    // (fastest, slowest) at exactly `b`.
    let at = |b: u64| -> Option<(f64, f64)> {
        let rs: Vec<f64> = trials
            .iter()
            .filter(|t| t.batch == b)
            .map(|t| t.rows_per_s)
            .collect();
        span(&rs).map(|(lo, hi)| (hi, lo))
    };
    if let Some(r) = at(batch) {
        return Some(r);
    }
    let below = trials.iter().map(|t| t.batch).filter(|b| *b < batch).max();
    let above = trials.iter().map(|t| t.batch).filter(|b| *b > batch).min();
    match (below, above) {
        (Some(a), Some(b)) => {
            let (fa, sa) = at(a)?;
            let (fb, sb) = at(b)?;
            let w = ((batch as f64).ln() - (a as f64).ln()) / ((b as f64).ln() - (a as f64).ln());
            let mix = |x: f64, y: f64| (x.ln() * (1.0 - w) + y.ln() * w).exp();
            Some((mix(fa, fb), mix(sa, sb)))
        }
        (Some(a), None) => at(a),
        (None, Some(b)) => at(b),
        (None, None) => None,
    }
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
