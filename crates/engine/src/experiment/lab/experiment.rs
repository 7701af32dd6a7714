//! The one trait an experiment kind implements to be run by the lab. A kind is a folder beside
//! `lab/` (`index_build/`, `ingest/`, `growth/`, `query/`) holding its spec, its run, its
//! report and summary, and an `experiment.rs` with this trait's implementation for its spec.
//!
//! The lab knows the kinds only through the trait and the variants of three enums
//! ([`ExperimentKind`], [`ExperimentSpec`], [`ReportBody`]); a fifth kind adds its folder,
//! implements [`Experiment`], adds one variant to each enum and one arm to [`each_kind!`].

use std::future::Future;
use std::time::Duration;

use super::checkpoint::CheckpointMode;
use super::context::{RunCtx, RunError};
use super::field::{Cost, FieldDef, FieldErrors, ParamText};
use super::record::ReportBody;
use super::spec::{ExperimentKind, ExperimentSpec};
use super::whatif::SettingsSweep;
use crate::measure::rules::Rules;

/// An experiment kind's spec: what the lab needs to edit, estimate, run and record it.
pub trait Experiment: Sized {
    /// Which kind this is.
    const KIND: ExperimentKind;
    /// Its parameters, as the TUI editor, the command-line flags and preset files know them.
    const FIELDS: &'static [FieldDef];
    /// What a run of it fills in, stored in the history as one [`ReportBody`] variant.
    type Report;

    /// A spec from text parameters, every field present (the defaults filled in).
    fn parse(params: &ParamText) -> Result<Self, FieldErrors>;
    /// The text form (presets, history, "same spec" matching).
    fn to_text(&self) -> ParamText;
    /// This spec as the enum the lab carries around.
    fn into_spec(self) -> ExperimentSpec;

    /// What the run will cost, shown before it starts and checked against free space.
    fn estimate(&self) -> Cost;
    /// The estimate given the free disk space (None: unknown), for a kind whose work depends
    /// on the space there is.
    fn estimate_with_free(&self, _free: Option<u64>) -> Cost {
        self.estimate()
    }
    /// The work of each trial relative to the others, in trial order (empty: all alike).
    fn trial_weights(&self) -> Vec<f64> {
        Vec::new()
    }
    /// Seconds each trial spends beyond what its weight's pace says (a standby fault's `for`),
    /// in trial order (empty: none).
    fn trial_fixed_seconds(&self) -> Vec<f64> {
        Vec::new()
    }
    /// The confidence and smallest effect the run's verdicts use.
    fn rules(&self) -> Rules;
    /// The server settings the run sweeps (`--set`).
    fn settings(&self) -> &SettingsSweep;
    fn settings_mut(&mut self) -> &mut SettingsSweep;
    /// Whether trials start after a CHECKPOINT (the `checkpoint` field, where the kind has it).
    fn checkpoint_mode(&self) -> CheckpointMode {
        CheckpointMode::Off
    }
    /// Citus: the columns the run distributes its tables by (empty: plain tables only).
    fn distributed_columns(&self) -> Vec<String> {
        Vec::new()
    }
    /// The statement timeout a run gets when none is given.
    fn default_statement_timeout(&self) -> Option<Duration> {
        None
    }
    /// Whether the run needs the lab schema on a server pglab did not start.
    fn writes_on_foreign_servers(&self) -> bool {
        true
    }
    /// The run the TUI's `r` starts: one trial of the first value of every list of this kind
    /// (the swept server settings are cut by the caller).
    fn one_trial(&self) -> Self;

    /// The empty report a run starts from.
    fn new_report(&self) -> Self::Report;
    /// The report as the lab stores it.
    fn into_body(report: Self::Report) -> ReportBody;
    /// This kind's report inside a stored one (None: the body is of another kind).
    fn report_in(body: &mut ReportBody) -> Option<&mut Self::Report>;
    /// Run every trial, filling `report` as results arrive.
    fn run(
        &self,
        ctx: &RunCtx,
        report: &mut Self::Report,
    ) -> impl Future<Output = Result<(), RunError>> + Send;
}

/// `each_kind!(spec, s => expr)`: `expr` with `s` bound to `&K`, the kind's spec, whichever
/// kind `spec` (an `&ExperimentSpec`) holds; `each_kind!(mut spec, s => expr)` binds `&mut K`.
macro_rules! each_kind {
    (mut $spec:expr, $s:ident => $e:expr) => {
        match $spec {
            $crate::experiment::ExperimentSpec::IndexBuild($s) => $e,
            $crate::experiment::ExperimentSpec::Ingest($s) => $e,
            $crate::experiment::ExperimentSpec::Growth($s) => $e,
            $crate::experiment::ExperimentSpec::Query(boxed) => {
                let $s = &mut **boxed;
                $e
            }
        }
    };
    ($spec:expr, $s:ident => $e:expr) => {
        match $spec {
            $crate::experiment::ExperimentSpec::IndexBuild($s) => $e,
            $crate::experiment::ExperimentSpec::Ingest($s) => $e,
            $crate::experiment::ExperimentSpec::Growth($s) => $e,
            $crate::experiment::ExperimentSpec::Query(boxed) => {
                let $s = &**boxed;
                $e
            }
        }
    };
}
pub(crate) use each_kind;
