//! What every caller asks of a finished run, whatever its kind: its findings, its decision
//! rules, its timed trials, whether it measured anything, the spec it ran and what a tune
//! reads of it. Each kind's report implements [`KindReport`] in the kind's own folder
//! (`<kind>/facts.rs`); [`ReportBody::facts`] is the one arm that picks it, so the history,
//! the tune and the front ends read a report without naming its kind.

use std::collections::BTreeMap;

use super::decision::DecisionParams;
use super::findings::Decided;
use super::record::ReportBody;
use super::samples::Sample;
use super::spec::ExperimentSpec;
use crate::host::load::TrialHost;
use crate::measure::verdict::Better;

/// A finished run's facts, as its kind recorded them.
pub trait KindReport {
    /// The spec the run ran (its stored parameters).
    fn spec(&self) -> ExperimentSpec;
    /// The decision rules (confidence, smallest effect, repeats) the run's verdicts used.
    fn decision(&self) -> DecisionParams;
    /// Every decided question with the statistics core's finding, in the summary's order.
    fn decided(&self) -> Vec<Decided>;
    /// Whether the run measured nothing (no trial, no step, no plan).
    fn is_empty(&self) -> bool;
    /// The host readings of the run's timed trials (warm-ups and projections aside).
    fn hosts(&self) -> Vec<TrialHost>;
    /// Whether the timed trials followed a CHECKPOINT, as the trials recorded it (None: the
    /// kind takes none, or the record is from before pglab said).
    fn took_checkpoints(&self) -> Option<bool>;
    /// Timed trials (configurations) the run holds: what a tune's pace is counted in.
    fn trial_count(&self) -> usize;
    /// Seconds of the run's own timed work (warm-ups and projected steps aside).
    fn work_seconds(&self) -> f64;
    /// Every setting of the run with its trial values, in a stable order (what a comparison
    /// matches across two runs).
    fn samples(&self) -> Vec<Sample>;
    /// A tune's pass measure of every combination of the settings sweep, by combination
    /// index (seconds, or rows or transactions per second where higher is better).
    fn per_combo(&self) -> BTreeMap<usize, f64>;
}

impl ReportBody {
    /// This run's facts, whatever its kind: the one place a report is matched kind by kind.
    pub fn facts(&self) -> &dyn KindReport {
        match self {
            ReportBody::IndexBuild(b) => b.as_ref(),
            ReportBody::Ingest(b) => b.as_ref(),
            ReportBody::Growth(b) => b.as_ref(),
            ReportBody::Query(b) => b.as_ref(),
        }
    }
}

/// What one pass of a workload is measured by (a tune's objective): the kind says, from its
/// spec (`Experiment::pass_measure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PassMeasure {
    pub better: Better,
    /// The unit a value is in: `rows/s`, `tx/s` or `s`.
    pub unit: &'static str,
    /// What one value is, in words.
    pub what: &'static str,
}

/// `per_combo`'s common step: combinations with time measured, as `measure(sum, seconds)`.
pub(crate) fn per_second_or_seconds(
    acc: BTreeMap<usize, (f64, f64)>,
    rate: bool,
) -> BTreeMap<usize, f64> {
    acc.into_iter()
        .filter(|(_, (_, s))| *s > 0.0)
        .map(|(c, (count, s))| (c, if rate { count / s } else { s }))
        .collect()
}
