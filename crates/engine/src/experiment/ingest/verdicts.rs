//! The questions an ingest run can answer, each one a sweep for the statistics core
//! (`measure::finding`), rows/s higher is better:
//!
//! - **batch**: one method at one client count and `synchronous_commit`, across batch sizes
//!   (the batch curve; its tie group with the best gives the knee);
//! - **method**: the methods at one batch size (and clients, sync). `insert` commits every
//!   row and has no batch, so it joins the comparison at every batch as the unbatched
//!   baseline;
//! - **clients**: one method and batch across client counts;
//! - **sync**: one method, batch and client count across `synchronous_commit` values;
//! - **settings**: one configuration across the combinations of swept server settings
//!   (`--set`); every other question holds the combination fixed.
//!
//! A question is asked only where the run varied that parameter (two settings or more), and
//! each question is one family for the core (its verdicts hold together at the run's
//! confidence; the questions of one run are read one at a time, as a DBA asks them). The
//! cheapest setting shown as good as the best is what pglab recommends: the smallest batch, the fewest
//! clients, the simplest method (`insert` < `insert-tx` < `values` < `copy`), and the most
//! durable `synchronous_commit` (`remote_apply` < `on` < `remote_write` < `local` < `off`:
//! what a commit gives up; `remote_apply` has `on`'s durability and visibility on the standby
//! besides), and the server settings as listed (the first value is the one to
//! keep on a tie).

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
    Settings,
}

impl Question {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Question::Batch => "batch",
            Question::Method => "method",
            Question::Clients => "clients",
            Question::SyncCommit => "sync-commit",
            Question::Settings => "settings",
        }
    }
}

/// One question: the configurations compared, in the order of the varied parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub question: Question,
    /// The parameters held fixed (the varied one is None).
    pub method: Option<Method>,
    pub batch: Option<u64>,
    pub clients: Option<u32>,
    pub sync: Option<SyncCommit>,
    /// The settings combination held fixed (None: it varies).
    pub combo: Option<usize>,
    /// The label of every settings combination of the run (indexed by combination).
    pub combo_labels: Vec<String>,
    pub members: Vec<TrialPlan>,
}

impl Group {
    /// What a member is called in this comparison: `16`, `copy`, `4 clients`, `off`.
    pub(crate) fn label(&self, c: &TrialPlan) -> String {
        match self.question {
            Question::Batch => c.batch.to_string(),
            Question::Method => c.method.as_str().to_string(),
            Question::Clients => clients(c.clients),
            Question::SyncCommit => c.sync.as_str().to_string(),
            Question::Settings => self.combo_name(c.combo),
        }
    }

    fn combo_name(&self, i: usize) -> String {
        self.combo_labels.get(i).cloned().unwrap_or_default()
    }

    /// The settings combination held fixed, as a label (empty when none is swept or it varies).
    pub(crate) fn fixed_combo_label(&self) -> String {
        self.combo.map(|c| self.combo_name(c)).unwrap_or_default()
    }

    /// Lower is cheaper (see the module documentation).
    pub(crate) fn cost_rank(&self, c: &TrialPlan) -> usize {
        match self.question {
            Question::Batch => c.batch as usize,
            Question::Method => Method::ALL.iter().position(|m| *m == c.method).unwrap_or(0),
            Question::Clients => c.clients as usize,
            Question::SyncCommit => sync_risk(c.sync),
            Question::Settings => c.combo,
        }
    }

    /// What is held fixed, as the start of a finding: `copy, 1 client, sync=on, by batch`.
    pub(crate) fn context(&self) -> String {
        let m = self.method.map(|m| m.as_str().to_string());
        let b = self.batch.map(|b| format!("at batch {b}"));
        let c = self.clients.map(clients);
        let s = self.sync.map(|s| format!("sync={}", s.as_str()));
        let combo = Some(self.fixed_combo_label()).filter(|l| !l.is_empty());
        let fixed: Vec<String> = [m, b, c, s, combo].into_iter().flatten().collect();
        format!("{}, by {}", fixed.join(", "), self.question.as_str())
    }

    /// The trials of every member, as the core's sweep (rows/s).
    pub(crate) fn settings(&self, trials: &[IngestTrial]) -> Vec<SettingTrials> {
        self.members
            .iter()
            .map(|c| SettingTrials {
                label: self.label(c),
                cost_rank: self.cost_rank(c),
                values: rows_per_s(trials, c),
                ..SettingTrials::default()
            })
            .collect()
    }
}

/// "1 client", "4 clients".
pub(crate) fn clients(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}

/// What a `synchronous_commit` value gives up, least first.
fn sync_risk(s: SyncCommit) -> usize {
    match s {
        SyncCommit::RemoteApply => 0,
        SyncCommit::On => 1,
        SyncCommit::RemoteWrite => 2,
        SyncCommit::Local => 3,
        SyncCommit::Off => 4,
    }
}

/// The rows/s of every trial of configuration `c`, in run order.
pub(crate) fn rows_per_s(trials: &[IngestTrial], c: &TrialPlan) -> Vec<f64> {
    trials
        .iter()
        .filter(|t| t.config() == *c)
        .map(|t| t.rows_per_s)
        .collect()
}

/// The configurations the trials ran, in order of first appearance (round 1 is plan order).
pub(crate) fn configurations(trials: &[IngestTrial]) -> Vec<TrialPlan> {
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
pub(crate) fn groups(configs: &[TrialPlan], combo_labels: &[String]) -> Vec<Group> {
    let mut out = Vec::new();
    let combos: BTreeSet<usize> = configs.iter().map(|c| c.combo).collect();
    for &combo in &combos {
        let of: Vec<TrialPlan> = configs
            .iter()
            .filter(|c| c.combo == combo)
            .copied()
            .collect();
        out.extend(groups_of(&of, combo, combo_labels));
    }
    // The swept server settings: one configuration across the combinations.
    let keys: BTreeSet<(Method, u64, u32, SyncCommit)> = configs
        .iter()
        .map(|c| (c.method, c.batch, c.clients, c.sync))
        .collect();
    for (method, batch, clients, sync) in keys {
        let mut members: Vec<TrialPlan> = configs
            .iter()
            .filter(|c| {
                c.method == method && c.batch == batch && c.clients == clients && c.sync == sync
            })
            .copied()
            .collect();
        members.sort_by_key(|c| c.combo);
        members.dedup();
        if members.len() >= 2 {
            out.push(Group {
                question: Question::Settings,
                method: Some(method),
                batch: Some(batch),
                clients: Some(clients),
                sync: Some(sync),
                combo: None,
                combo_labels: combo_labels.to_vec(),
                members,
            });
        }
    }
    out
}

/// The questions inside one settings combination.
fn groups_of(configs: &[TrialPlan], combo: usize, combo_labels: &[String]) -> Vec<Group> {
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
            combo: Some(combo),
            combo_labels: combo_labels.to_vec(),
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
            combo: Some(combo),
            combo_labels: combo_labels.to_vec(),
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
            combo: Some(combo),
            combo_labels: combo_labels.to_vec(),
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
            combo: Some(combo),
            combo_labels: combo_labels.to_vec(),
            members,
        };
        push(&mut out, g, &|c| sync_risk(c.sync));
    }
    out
}

/// For `repeat = auto`: the configurations that need another trial because some question
/// they take part in is still undecided and they are not shown slower in it (see
/// `finding::needs_more`), or because they have fewer than 3 trials; in plan order. Empty
/// when every question is decided. Each question is its own family; the caller runs at most
/// `max-repeat` rounds, so no question looks more often than its verdicts paid for.
pub(crate) fn undecided(
    plan: &[TrialPlan],
    trials: &[IngestTrial],
    rules: &Rules,
) -> Vec<TrialPlan> {
    let mut need: BTreeSet<TrialPlan> = BTreeSet::new();
    for g in groups(plan, &[]) {
        let settings = g.settings(trials);
        for i in needs_more(&settings, Better::Higher, rules) {
            need.insert(g.members[i]);
        }
    }
    // A configuration in no comparison still gets its minimum of trials.
    for c in plan {
        let one = [SettingTrials {
            values: rows_per_s(trials, c),
            ..SettingTrials::default()
        }];
        if !needs_more(&one, Better::Higher, rules).is_empty() {
            need.insert(*c);
        }
    }
    plan.iter().filter(|c| need.contains(c)).copied().collect()
}
