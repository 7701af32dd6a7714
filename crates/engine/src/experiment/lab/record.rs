//! The finished, serialisable result of a run: what ran, where, and what it measured.
//! Stored in the history, printed by `--format json`, rendered by the reports.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::spec::ExperimentKind;
use crate::experiment::{growth, index_build, ingest, query};
use crate::host::HostFingerprint;
use crate::server::ServerFingerprint;

/// Where the runner hands each finished run's report: pglab's history file
/// (`history::HistoryFile`), or anything else a front end chooses. The runner owns
/// this seam so the experiments never reach up into the history; it only calls it.
pub trait Recorder: Send + Sync + std::fmt::Debug {
    /// Keep `report`; an error is a sentence the runner logs (the run itself stands).
    fn record(&self, report: &RunReport) -> Result<(), String>;
}

/// Bumped when a field changes meaning or disappears (adding fields does not bump it).
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Finished,
    Failed,
    Cancelled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Finished => "finished",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// The tune a run belongs to: its id (shared by every round, kept across `--resume`) and
/// its workload as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuneRef {
    pub id: String,
    pub workload: String,
}

/// A run's report. The experiment-specific part is flattened in: `experiment`, `params`,
/// `trials`/`steps` and `summary` sit at the top level of the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub run_id: String,
    pub pglab_version: String,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The tune this run was a round of, when it was one (the history groups them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneRef>,
    /// The target as `user@host:port/db` (never a password).
    pub target: String,
    pub server: Option<ServerFingerprint>,
    pub host: HostFingerprint,
    /// The spec key: runs with the same key ran the same experiment with the same parameters.
    pub spec_key: String,
    #[serde(default)]
    pub notes: Vec<String>,
    /// The server settings the run swept (`--set`): how each was applied, the restarts, how
    /// the server got its own settings back. Absent when nothing was swept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whatif: Option<super::whatif::WhatIfRecord>,
    #[serde(flatten)]
    pub body: ReportBody,
}

/// The experiment-specific part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "experiment", rename_all = "kebab-case")]
pub enum ReportBody {
    IndexBuild(Box<index_build::IndexBuildReport>),
    Ingest(Box<ingest::IngestReport>),
    Growth(Box<growth::GrowthReport>),
    Query(Box<query::QueryReport>),
}

impl ReportBody {
    pub(crate) fn kind(&self) -> ExperimentKind {
        match self {
            ReportBody::IndexBuild(_) => ExperimentKind::IndexBuild,
            ReportBody::Ingest(_) => ExperimentKind::Ingest,
            ReportBody::Growth(_) => ExperimentKind::Growth,
            ReportBody::Query(_) => ExperimentKind::Query,
        }
    }
}

impl RunReport {
    pub fn kind(&self) -> ExperimentKind {
        self.body.kind()
    }
    pub fn seconds(&self) -> f64 {
        (self.finished_at - self.started_at).num_milliseconds() as f64 / 1000.0
    }
}
