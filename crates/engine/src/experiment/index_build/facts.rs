//! What every caller asks of a finished index-build run ([`KindReport`]): one finding per
//! input order, timed trials without the warm-ups.

use std::collections::BTreeMap;

use crate::experiment::ExperimentSpec;
use crate::experiment::lab::decision::DecisionParams;
use crate::experiment::lab::findings::Decided;
use crate::experiment::lab::kind_report::{KindReport, per_second_or_seconds};
use crate::experiment::lab::samples::Sample;
use crate::host::load::TrialHost;

use super::{IndexBuildReport, IndexTrial};

impl IndexBuildReport {
    fn timed(&self) -> impl Iterator<Item = &IndexTrial> {
        self.trials.iter().filter(|t| !t.warmup)
    }
}

impl KindReport for IndexBuildReport {
    fn spec(&self) -> ExperimentSpec {
        ExperimentSpec::IndexBuild(self.params.clone())
    }

    fn decision(&self) -> DecisionParams {
        self.params.decision
    }

    fn decided(&self) -> Vec<Decided> {
        self.summary
            .orders
            .iter()
            .map(|o| Decided {
                question: o.order.name(),
                finding: o.finding.clone(),
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
        self.timed().filter_map(|t| t.host).collect()
    }

    fn took_checkpoints(&self) -> Option<bool> {
        self.timed().next().map(|t| t.checkpoint)
    }

    fn trial_count(&self) -> usize {
        self.timed().count()
    }

    fn work_seconds(&self) -> f64 {
        self.timed().map(|t| t.seconds).sum()
    }

    fn per_combo(&self) -> BTreeMap<usize, f64> {
        let mut acc: BTreeMap<usize, (f64, f64)> = BTreeMap::new();
        for t in self.timed() {
            acc.entry(t.combo).or_default().1 += t.seconds;
        }
        per_second_or_seconds(acc, false)
    }
}
