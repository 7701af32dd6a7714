//! What every caller asks of a finished query run ([`KindReport`]): one finding per statement
//! (or client count); a tune's pass measure is transactions per second in throughput mode
//! and the statements' seconds, each counted as often as its weight, otherwise.

use std::collections::BTreeMap;

use crate::experiment::ExperimentSpec;
use crate::experiment::lab::decision::DecisionParams;
use crate::experiment::lab::findings::Decided;
use crate::experiment::lab::kind_report::{KindReport, per_second_or_seconds};
use crate::experiment::lab::samples::Sample;
use crate::host::load::TrialHost;

use super::QueryReport;

impl KindReport for QueryReport {
    fn spec(&self) -> ExperimentSpec {
        ExperimentSpec::Query(Box::new(self.params.clone()))
    }

    fn decision(&self) -> DecisionParams {
        self.params.decision
    }

    fn decided(&self) -> Vec<Decided> {
        self.summary
            .units
            .iter()
            .map(|u| Decided {
                question: u.name.clone(),
                finding: u.finding.clone(),
            })
            .collect()
    }

    /// Nothing timed and no plan read (a plans-only run is not empty).
    fn samples(&self) -> Vec<Sample> {
        super::samples::samples(self)
    }

    fn is_empty(&self) -> bool {
        self.trials.is_empty() && self.plans.is_empty()
    }

    fn hosts(&self) -> Vec<TrialHost> {
        self.trials.iter().filter_map(|t| t.host).collect()
    }

    fn took_checkpoints(&self) -> Option<bool> {
        None
    }

    fn trial_count(&self) -> usize {
        self.trials.len()
    }

    /// A statement trial's seconds are per execution, of a batch of them.
    fn work_seconds(&self) -> f64 {
        self.trials
            .iter()
            .map(|t| t.seconds * t.executions.max(1) as f64)
            .sum()
    }

    fn per_combo(&self) -> BTreeMap<usize, f64> {
        let throughput = self.trials.iter().any(|t| t.transactions.is_some());
        let mut acc: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        for t in &self.trials {
            let e = acc.entry(t.combo).or_default();
            e.0 += t.transactions.unwrap_or(0) as f64;
            // A timed statement counts as often as its weight (a captured workload's calls).
            let weight = self
                .params
                .statements
                .get(t.statement)
                .and_then(|s| s.weight)
                .filter(|_| !throughput)
                .unwrap_or(1);
            e.1 += t.seconds * weight as f64;
        }
        per_second_or_seconds(acc, throughput)
    }
}
