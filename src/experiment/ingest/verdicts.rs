//! The questions an ingest run can answer, each one a sweep for the statistics core
//! (`measure::finding`), rows/s higher is better:
//!
//! - **batch**: one method at one client count and `synchronous_commit`, across batch sizes
//!   (the batch curve; its tie group with the best gives the knee);
//! - **method**: the methods at one batch size (and clients, sync). `insert` commits every
//!   row and has no batch, so it joins the comparison at every batch as the unbatched
//!   baseline;
//! - **clients**: one method and batch across client counts;
//! - **sync**: one method, batch and client count across `synchronous_commit` values.
//!
//! A question is asked only where the run varied that parameter (two settings or more). The
//! cheapest member of a tie group is what pglab recommends: the smallest batch, the fewest
//! clients, the simplest method (`insert` < `insert-tx` < `values` < `copy`), and the most
//! durable `synchronous_commit` (`on` < `remote_apply` < `remote_write` < `local` < `off`:
//! what a commit gives up).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::kinds::{Method, SyncCommit};
use super::plan::TrialPlan;
use super::report::IngestTrial;
use crate::measure::finding::{SettingTrials, needs_more};
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

/// Which parameter a comparison varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    Batch,
    Method,
    Clients,
    SyncCommit,
}

impl Question {
    pub fn as_str(self) -> &'static str {
        match self {
            Question::Batch => "batch",
            Question::Method => "method",
            Question::Clients => "clients",
            Question::SyncCommit => "sync-commit",
        }
    }
}

/// One question: the configurations compared, in the order of the varied parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub question: Question,
    /// The parameters held fixed (the varied one is None).
    pub method: Option<Method>,
    pub batch: Option<u64>,
    pub clients: Option<u32>,
    pub sync: Option<SyncCommit>,
    pub members: Vec<TrialPlan>,
}

impl Group {
    /// What a member is called in this comparison: `16`, `copy`, `4 clients`, `off`.
    pub fn label(&self, c: &TrialPlan) -> String {
        match self.question {
            Question::Batch => c.batch.to_string(),
            Question::Method => c.method.as_str().to_string(),
            Question::Clients => clients(c.clients),
            Question::SyncCommit => c.sync.as_str().to_string(),
        }
    }

    /// Lower is cheaper (see the module documentation).
    pub fn cost_rank(&self, c: &TrialPlan) -> usize {
        match self.question {
            Question::Batch => c.batch as usize,
            Question::Method => Method::ALL.iter().position(|m| *m == c.method).unwrap_or(0),
            Question::Clients => c.clients as usize,
            Question::SyncCommit => sync_risk(c.sync),
        }
    }

    /// What is held fixed, as the start of a finding: `copy ×1 sync=on by batch`.
    pub fn context(&self) -> String {
        let m = self.method.map(|m| m.as_str().to_string());
        let b = self.batch.map(|b| format!("at batch {b}"));
        let c = self.clients.map(|c| format!("×{c}"));
        let s = self.sync.map(|s| format!("sync={}", s.as_str()));
        let fixed: Vec<String> = [m, b, c, s].into_iter().flatten().collect();
        format!("{} by {}", fixed.join(" "), self.question.as_str())
    }

    /// The trials of every member, as the core's sweep (rows/s).
    pub fn settings(&self, trials: &[IngestTrial]) -> Vec<SettingTrials> {
        self.members
            .iter()
            .map(|c| SettingTrials {
                label: self.label(c),
                cost_rank: self.cost_rank(c),
                values: rows_per_s(trials, c),
            })
            .collect()
    }
}

/// "1 client", "4 clients".
pub fn clients(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}

/// What a `synchronous_commit` value gives up, least first.
fn sync_risk(s: SyncCommit) -> usize {
    match s {
        SyncCommit::On => 0,
        SyncCommit::RemoteApply => 1,
        SyncCommit::RemoteWrite => 2,
        SyncCommit::Local => 3,
        SyncCommit::Off => 4,
    }
}

/// The rows/s of every trial of configuration `c`, in run order.
pub fn rows_per_s(trials: &[IngestTrial], c: &TrialPlan) -> Vec<f64> {
    trials
        .iter()
        .filter(|t| t.config() == *c)
        .map(|t| t.rows_per_s)
        .collect()
}

/// The configurations the trials ran, in order of first appearance (round 1 is plan order).
pub fn configurations(trials: &[IngestTrial]) -> Vec<TrialPlan> {
    let mut out: Vec<TrialPlan> = Vec::new();
    for t in trials {
        if !out.contains(&t.config()) {
            out.push(t.config());
        }
    }
    out
}

/// Every question `configs` can answer, in a stable order: batch curves, then methods,
/// clients and synchronous_commit.
pub fn groups(configs: &[TrialPlan]) -> Vec<Group> {
    let mut out = Vec::new();
    let keys = |f: &dyn Fn(&TrialPlan) -> (Method, u64, u32, SyncCommit)| {
        configs.iter().map(f).collect::<BTreeSet<_>>()
    };
    let push = |out: &mut Vec<Group>, mut g: Group, order: &dyn Fn(&TrialPlan) -> usize| {
        g.members.sort_by_key(|c| order(c));
        g.members.dedup();
        if g.members.len() >= 2 {
            out.push(g);
        }
    };
    // Batch curves: method, clients, sync fixed.
    for (method, _, clients, sync) in keys(&|c| (c.method, 0, c.clients, c.sync)) {
        let members = configs
            .iter()
            .filter(|c| c.method == method && c.clients == clients && c.sync == sync)
            .copied()
            .collect();
        let g = Group {
            question: Question::Batch,
            method: Some(method),
            batch: None,
            clients: Some(clients),
            sync: Some(sync),
            members,
        };
        push(&mut out, g, &|c| c.batch as usize);
    }
    // Methods at one batch; insert (no batch) at every batch.
    let batches: BTreeSet<(u64, u32, SyncCommit)> = configs
        .iter()
        .filter(|c| c.method != Method::Insert)
        .map(|c| (c.batch, c.clients, c.sync))
        .collect();
    let mut batches: Vec<_> = batches.into_iter().collect();
    batches.sort_by_key(|(b, c, s)| (*c, sync_risk(*s), *b));
    for (batch, clients, sync) in batches {
        let members = configs
            .iter()
            .filter(|c| c.clients == clients && c.sync == sync)
            .filter(|c| c.batch == batch || c.method == Method::Insert)
            .copied()
            .collect();
        let g = Group {
            question: Question::Method,
            method: None,
            batch: Some(batch),
            clients: Some(clients),
            sync: Some(sync),
            members,
        };
        push(&mut out, g, &|c| c.method as usize);
    }
    // Clients, then synchronous_commit.
    for (method, batch, _, sync) in keys(&|c| (c.method, c.batch, 0, c.sync)) {
        let members = configs
            .iter()
            .filter(|c| c.method == method && c.batch == batch && c.sync == sync)
            .copied()
            .collect();
        let g = Group {
            question: Question::Clients,
            method: Some(method),
            batch: Some(batch),
            clients: None,
            sync: Some(sync),
            members,
        };
        push(&mut out, g, &|c| c.clients as usize);
    }
    for (method, batch, clients, _) in keys(&|c| (c.method, c.batch, c.clients, SyncCommit::On)) {
        let members = configs
            .iter()
            .filter(|c| c.method == method && c.batch == batch && c.clients == clients)
            .copied()
            .collect();
        let g = Group {
            question: Question::SyncCommit,
            method: Some(method),
            batch: Some(batch),
            clients: Some(clients),
            sync: None,
            members,
        };
        push(&mut out, g, &|c| sync_risk(c.sync));
    }
    out
}

/// For `repeat = auto`: the configurations that need another trial because some question
/// they take part in is still `too few trials` (or they have fewer than 3 trials), in plan
/// order. Empty when every verdict is decided.
pub fn undecided(plan: &[TrialPlan], trials: &[IngestTrial], rules: &Rules) -> Vec<TrialPlan> {
    let mut need: BTreeSet<TrialPlan> = BTreeSet::new();
    for g in groups(plan) {
        let settings = g.settings(trials);
        for i in needs_more(&settings, Better::Higher, rules) {
            need.insert(g.members[i]);
        }
    }
    // A configuration in no comparison still gets its minimum of trials.
    for c in plan {
        let one = [SettingTrials {
            label: String::new(),
            cost_rank: 0,
            values: rows_per_s(trials, c),
        }];
        if !needs_more(&one, Better::Higher, rules).is_empty() {
            need.insert(*c);
        }
    }
    plan.iter().filter(|c| need.contains(c)).copied().collect()
}
