//! The trials a spec expands to: its configurations (method × synchronous_commit × clients ×
//! batch), each run `repeat` times. Trials go by rounds — round 1 of every configuration,
//! then round 2 … — so that drift of the server or host over the run (a filling cache, a
//! growing WAL, a neighbour's load) spreads over all configurations instead of favouring the
//! ones that ran first. With `repeat = auto` the later rounds hold only the configurations
//! whose verdicts are still undecided (see `verdicts::undecided`).

use super::kinds::{Method, SyncCommit};
use super::spec::IngestSpec;
use crate::experiment::lab::whatif::combo_label;

/// One configuration the run loads `rows` rows with, `repeat` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TrialPlan {
    pub method: Method,
    pub batch: u64,
    pub clients: u32,
    pub sync: SyncCommit,
    /// The combination of swept server settings (`--set`): an index into the spec's.
    pub combo: usize,
}

impl TrialPlan {
    /// "copy, 2 clients, sync=off": the chart series the trial belongs to.
    pub(crate) fn series(&self) -> String {
        format!(
            "{}, {}, sync={}",
            self.method.as_str(),
            super::verdicts::clients(self.clients),
            self.sync.as_str()
        )
    }
    /// "copy · batch 64 · 2 clients · sync=off".
    pub(crate) fn label(&self) -> String {
        format!(
            "{} · batch {} · {} client{} · sync={}",
            self.method.as_str(),
            self.batch,
            self.clients,
            if self.clients == 1 { "" } else { "s" },
            self.sync.as_str()
        )
    }
}

impl IngestSpec {
    /// The label of every settings combination (empty strings when nothing is swept).
    pub(crate) fn combo_labels(&self) -> Vec<String> {
        self.set.combos().iter().map(combo_label).collect()
    }

    /// The configurations in the order of one round: per method, per synchronous_commit, per
    /// client count, per batch (insert commits every row, so it runs at batch 1 only).
    pub(crate) fn plan(&self) -> Vec<TrialPlan> {
        let mut out = Vec::new();
        for &method in &self.methods {
            let batches: &[u64] = if method == Method::Insert {
                &[1]
            } else {
                &self.batches
            };
            for &sync in &self.sync {
                for &clients in &self.clients {
                    for &batch in batches {
                        for combo in 0..self.set.combo_count() {
                            out.push(TrialPlan {
                                method,
                                batch,
                                clients,
                                sync,
                                combo,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// Trials at the most: every configuration `repeat` times (`auto`: up to `max-repeat`,
    /// and usually fewer).
    pub fn trials(&self) -> usize {
        self.plan().len() * self.repeat.most(self.decision.max_repeat) as usize
    }

    /// Rounds at the most.
    pub(crate) fn rounds(&self) -> u32 {
        self.repeat.most(self.decision.max_repeat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::field::ParamText;

    fn spec(pairs: &[(&str, &str)]) -> IngestSpec {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut full = crate::experiment::ExperimentKind::Ingest.defaults();
        full.extend(p);
        IngestSpec::parse(&full).unwrap()
    }

    #[test]
    fn insert_runs_at_batch_one_only() {
        let s = spec(&[
            ("method", "insert,copy"),
            ("batch", "1,10,100"),
            ("repeat", "1"),
        ]);
        let plan = s.plan();
        assert_eq!(plan.len(), 1 + 3);
        assert_eq!(plan[0].method, Method::Insert);
        assert_eq!(plan[0].batch, 1);
        assert_eq!(plan[0].series(), "insert, 1 client, sync=on");
        assert_eq!(s.trials(), 4);
    }

    #[test]
    fn trials_count_every_round_at_the_most() {
        let s = spec(&[("method", "copy"), ("batch", "1,10"), ("repeat", "4")]);
        assert_eq!((s.plan().len(), s.rounds(), s.trials()), (2, 4, 8));
        let s = spec(&[
            ("method", "copy"),
            ("batch", "1,10"),
            ("repeat", "auto"),
            ("max-repeat", "7"),
        ]);
        assert_eq!((s.rounds(), s.trials()), (7, 14));
    }
}
