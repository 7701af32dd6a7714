//! What every caller asks of a finished growth run ([`KindReport`]): one finding per design,
//! step and timing across swept settings; measured steps only (projections aside).

use std::collections::BTreeMap;

use crate::experiment::ExperimentSpec;
use crate::experiment::lab::decision::DecisionParams;
use crate::experiment::lab::findings::Decided;
use crate::experiment::lab::kind_report::{KindReport, per_second_or_seconds};
use crate::experiment::lab::samples::Sample;
use crate::host::load::TrialHost;

use super::{GrowthReport, GrowthStep};

impl GrowthReport {
    fn measured_steps(&self) -> impl Iterator<Item = &GrowthStep> {
        self.steps.iter().filter(|s| !s.projected)
    }
}

/// A step's timed work: its write and its read.
fn step_seconds(s: &GrowthStep) -> f64 {
    s.write_seconds.unwrap_or(0.0) + s.read_seconds.unwrap_or(0.0)
}

impl KindReport for GrowthReport {
    fn spec(&self) -> ExperimentSpec {
        ExperimentSpec::Growth(self.params.clone())
    }

    fn decision(&self) -> DecisionParams {
        self.params.decision
    }

    /// (The snapshot-against-ranges comparisons are pairs, not sweeps: they are in the
    /// report's findings as sentences.)
    fn decided(&self) -> Vec<Decided> {
        self.summary
            .settings
            .iter()
            .map(|s| Decided {
                question: s
                    .sentence
                    .split_once(": ")
                    .map_or(String::new(), |(q, _)| q.to_string()),
                finding: s.finding.clone(),
            })
            .collect()
    }

    fn samples(&self) -> Vec<Sample> {
        super::samples::samples(self)
    }

    fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    fn hosts(&self) -> Vec<TrialHost> {
        self.steps.iter().filter_map(|s| s.host).collect()
    }

    fn took_checkpoints(&self) -> Option<bool> {
        self.steps.iter().find_map(|s| s.checkpoint)
    }

    fn trial_count(&self) -> usize {
        self.measured_steps().count()
    }

    fn work_seconds(&self) -> f64 {
        self.measured_steps().map(step_seconds).sum()
    }

    fn per_combo(&self) -> BTreeMap<usize, f64> {
        let mut acc: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        for s in self.measured_steps() {
            acc.entry(s.combo).or_default().1 += step_seconds(s);
        }
        per_second_or_seconds(acc, false)
    }
}
