//! How long an ingest run will take, by the rows/s past trials of each method reached (the
//! lab's `eta`).

use crate::experiment::ReportBody;
use crate::experiment::RunReport;
use crate::experiment::lab::eta::{Eta, PACE_HIGH, PACE_LOW, span};

use super::{IngestSpec, Method, SyncCommit};

/// Each planned trial at the rows/s past trials of its method, synchronous_commit and
/// (nearest) batch reached, capped by the trial's duration, plus the runs' own time between
/// trials.
pub(super) fn by_pace(s: &IngestSpec, recent: &[&RunReport]) -> Option<Eta> {
    let reports: Vec<(&RunReport, &super::IngestReport)> = recent
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
    reports: &[(&RunReport, &super::IngestReport)],
    method: Method,
    sync: SyncCommit,
    batch: u64,
) -> Option<(f64, f64)> {
    let trials: Vec<&super::IngestTrial> = reports
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
