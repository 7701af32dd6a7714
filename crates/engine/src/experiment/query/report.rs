//! The query experiment's record: the parameters, every combination (index value × server
//! settings), each statement's plan per combination (whole, and as pglab reads it), the
//! candidate indexes built or imagined, the setup, every trial, and the summary.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::batch::Sizing;
use super::plan::PlanFacts;
use super::setup::SetupInfo;
use super::spec::QuerySpec;
use super::summary::QuerySummary;
use crate::experiment::lab::whatif::Combo;

/// One combination of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComboInfo {
    pub combo: usize,
    /// `none`, `idx 1`, … and the settings: `work_mem=64MB · idx 1`.
    pub label: String,
    /// 0: no candidate index; i: the i-th candidate.
    pub index_value: usize,
    /// The swept server settings of this combination.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Combo,
}

/// How a candidate index was tried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexCandidate {
    /// 1-based.
    pub value: usize,
    /// As the DBA wrote it.
    pub sql: String,
    /// The table it is on, as the server names it (`schema.table`).
    pub table: String,
    /// `built` (measured for real) or `hypothetical` (HypoPG: planner estimate, not measured).
    pub how: String,
    /// The name pglab built it under (built ones).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Seconds the build took (built ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_bytes: Option<i64>,
    /// Dropped after its trials.
    #[serde(default)]
    pub dropped: bool,
}

impl IndexCandidate {
    pub(crate) fn hypothetical(&self) -> bool {
        self.how == "hypothetical"
    }
}

/// A statement's plan under one combination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComboPlan {
    /// Index of the statement (in `params.statements`, or the script's SQL commands).
    pub statement: usize,
    pub name: String,
    pub combo: usize,
    /// A plain EXPLAIN under a hypothetical index: the planner's estimate, not measured.
    #[serde(default)]
    pub estimate_only: bool,
    #[serde(flatten)]
    pub facts: PlanFacts,
    /// The EXPLAIN output as the server gave it.
    pub plan: serde_json::Value,
}

/// Latency percentiles of one throughput trial, in ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// One timed execution (statement mode) or one throughput trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryTrial {
    /// Statement mode: the statement's index; throughput mode: 0.
    pub statement: usize,
    /// The statement's name, or `N clients` in throughput mode.
    pub name: String,
    pub combo: usize,
    /// Each swept setting as `SHOW` reported it in the trial's session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// 1-based round.
    pub repeat: u32,
    /// Statement mode: wall time per execution (the trial's timed total ÷ its executions);
    /// throughput mode: the trial's length.
    pub seconds: f64,
    /// Statement mode: executions the trial timed (its batch, see [`super::batch`]);
    /// throughput mode: 1.
    #[serde(default = "one")]
    pub executions: u32,
    /// Rows returned (or affected) by one execution; throughput mode: rows returned by all
    /// transactions.
    pub rows: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Throughput mode: transactions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
    /// Throughput mode: pglab's CPU (user + system) during the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_s: Option<f64>,
    /// Statement mode, `cache = cold`: the trial started after a restart.
    #[serde(default)]
    pub cold: bool,
    /// Throughput mode: statement latency, transactions per second and the standbys after
    /// the load (absent in records before they were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<super::per_second::LoadRecord>,
    /// What the host did beside the trial: CPU other processes took, steal, memory stalls
    /// (None: not read — a cold trial, or a record from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::load::TrialHost>,
}

fn one() -> u32 {
    1
}

impl QueryTrial {
    /// A statement-mode trial of statement 0, for tests.
    #[cfg(test)]
    pub(crate) fn test(combo: usize, seconds: f64, repeat: u32) -> QueryTrial {
        QueryTrial {
            statement: 0,
            name: "q".into(),
            combo,
            settings: BTreeMap::new(),
            repeat,
            seconds,
            executions: 1,
            rows: 1,
            clients: None,
            tps: None,
            transactions: None,
            latency_ms: None,
            client_cpu_s: None,
            cold: false,
            load: None,
            host: None,
        }
    }

    /// The measure the verdicts compare: seconds, or transactions/s.
    pub(crate) fn value(&self) -> f64 {
        self.tps.unwrap_or(self.seconds)
    }
}

/// The query experiment's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryReport {
    pub params: QuerySpec,
    /// How the statements ran: `as written`, `READ ONLY transactions`, `rolled back`.
    #[serde(default)]
    pub transactions: String,
    /// Digest of the statements' text (or the script's): runs compare only with the same.
    #[serde(default)]
    pub statements_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<SetupInfo>,
    /// Bytes of the relations the statements' plans read (tables and their indexes).
    #[serde(default)]
    pub data_bytes: i64,
    #[serde(default)]
    pub combos: Vec<ComboInfo>,
    /// The combination that matches the server's own settings without a candidate index
    /// (None: no combination does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_combo: Option<usize>,
    /// The swept settings as a fresh session saw them before the run (`SHOW`): what a
    /// recommendation is a change from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub current_settings: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexCandidate>,
    #[serde(default)]
    pub plans: Vec<ComboPlan>,
    /// How the run's combinations were warmed up (a tune's round keeps the cache warm).
    #[serde(default, skip_serializing_if = "super::kept_warm::WarmCount::is_empty")]
    pub warm: super::kept_warm::WarmCount,
    #[serde(default)]
    pub trials: Vec<QueryTrial>,
    /// Statement mode: each statement's executions per trial and how they were chosen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizing: Vec<Sizing>,
    /// Candidate indexes were all built once and interleaved round by round (only the
    /// combination's own visible to the planner); false: each built for its block of trials.
    #[serde(default)]
    pub interleaved: bool,
    /// How the cache was made cold (cache = cold), said once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_cache: Option<String>,
    #[serde(default)]
    pub summary: QuerySummary,
    /// Reads on a standby (`--on-standby`): what each trial measured there and on the primary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standby_reads: Vec<super::standby_reads::StandbyReadTrial>,
    /// A captured workload's replay: the statements it left out (they cannot run here) and
    /// the coverage left ([`super::replay_skip`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay_skip::ReplayCoverage>,
}

impl QueryReport {
    pub fn new(spec: &QuerySpec) -> QueryReport {
        QueryReport {
            params: spec.clone(),
            transactions: String::new(),
            statements_digest: statements_digest(spec),
            setup: None,
            data_bytes: 0,
            combos: Vec::new(),
            current_combo: None,
            current_settings: BTreeMap::new(),
            indexes: Vec::new(),
            plans: Vec::new(),
            warm: Default::default(),
            trials: Vec::new(),
            sizing: Vec::new(),
            interleaved: false,
            cold_cache: None,
            summary: QuerySummary::default(),
            standby_reads: Vec::new(),
            replay: None,
        }
    }

    /// The plan of statement `s` under combination `c`.
    pub fn plan(&self, s: usize, c: usize) -> Option<&ComboPlan> {
        self.plans.iter().find(|p| p.statement == s && p.combo == c)
    }

    /// A combination's label (`combination c` when unknown).
    pub fn combo_label(&self, c: usize) -> String {
        self.combos
            .get(c)
            .map(|i| i.label.clone())
            .unwrap_or_else(|| format!("combination {c}"))
    }

    /// The names of the measured units: the statements, or `N clients`.
    pub(crate) fn unit_names(&self) -> Vec<String> {
        if self.params.throughput() {
            self.params
                .client_counts()
                .iter()
                .map(|c| clients_name(*c))
                .collect()
        } else {
            self.params
                .statements
                .iter()
                .map(|s| s.name.clone())
                .collect()
        }
    }

    /// The names of the statements plans were taken of (the statements, or the script's
    /// SQL commands by line).
    pub(crate) fn plan_names(&self) -> Vec<String> {
        match &self.params.script {
            Some(script) => script
                .sql_commands()
                .iter()
                .map(|(line, _)| format!("line {line}"))
                .collect(),
            None => self
                .params
                .statements
                .iter()
                .map(|s| s.name.clone())
                .collect(),
        }
    }
}

/// `4 clients`.
pub fn clients_name(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}

/// The digest `history compare` checks: the statements' text (or the script's).
pub fn statements_digest(spec: &QuerySpec) -> String {
    let text = match &spec.script {
        Some(s) => s.text.clone(),
        None => spec
            .statements
            .iter()
            .map(|s| s.sql.as_str())
            .collect::<Vec<_>>()
            .join(";\n"),
    };
    super::sqltext::digest(&text)
}
