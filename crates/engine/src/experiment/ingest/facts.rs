//! What every caller asks of a finished ingest run ([`KindReport`]): one finding per decided
//! question (the group's sentence names it), rows per second per combination for a tune.

use std::collections::BTreeMap;

use crate::experiment::ExperimentSpec;
use crate::experiment::lab::decision::DecisionParams;
use crate::experiment::lab::findings::Decided;
use crate::experiment::lab::kind_report::{KindReport, per_second_or_seconds};
use crate::experiment::lab::samples::Sample;
use crate::host::load::TrialHost;

use super::IngestReport;

impl KindReport for IngestReport {
    fn spec(&self) -> ExperimentSpec {
        ExperimentSpec::Ingest(self.params.clone())
    }

    fn decision(&self) -> DecisionParams {
        self.params.decision
    }

    fn decided(&self) -> Vec<Decided> {
        self.summary
            .groups
            .iter()
            .filter_map(|g| {
                let finding = g.decided.clone()?;
                let question = g
                    .finding
                    .split_once(": ")
                    .map_or(g.question.as_str().to_string(), |(q, _)| q.to_string());
                Some(Decided { question, finding })
            })
            .collect()
    }

    fn samples(&self) -> Vec<Sample> {
        super::samples::samples(self)
    }

    fn is_empty(&self) -> bool {
        self.trials.is_empty()
    }

    fn hosts(&self) -> Vec<TrialHost> {
        self.trials.iter().filter_map(|t| t.host).collect()
    }

    fn took_checkpoints(&self) -> Option<bool> {
        self.trials.first().map(|t| t.checkpoint)
    }

    fn trial_count(&self) -> usize {
        self.trials.len()
    }

    fn work_seconds(&self) -> f64 {
        self.trials.iter().map(|t| t.seconds).sum()
    }

    /// Rows per second: every trial's rows over its seconds, summed per combination.
    fn per_combo(&self) -> BTreeMap<usize, f64> {
        let mut acc: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        for t in &self.trials {
            let e = acc.entry(t.combo).or_default();
            e.0 += t.rows as f64;
            e.1 += t.seconds;
        }
        per_second_or_seconds(acc, true)
    }
}
