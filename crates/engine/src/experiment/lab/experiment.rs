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
use super::eta::Eta;
use super::field::{Cost, FieldErrors, ParamText};
use super::gate::Refusal;
use super::kind_info::KindInfo;
use super::kind_report::PassMeasure;
use super::lab_writes::OwnTables;
use super::preflight::ForeignWrites;
use super::record::{ReportBody, RunReport};
use super::spec::{ExperimentKind, ExperimentSpec};
use super::whatif::SettingsSweep;
use crate::measure::rules::Rules;

/// An experiment kind's spec: what the lab needs to edit, estimate, run and record it.
pub(crate) trait Experiment: Sized {
    /// Which kind this is.
    const KIND: ExperimentKind;
    /// Its name, description, parameters and what a comparison and a tune know of it.
    const INFO: KindInfo;
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
    /// The run the TUI's `r` starts: one trial of the first value of every list of this kind
    /// (the swept server settings are cut by the caller).
    fn one_trial(&self) -> Self;

    /// One trial per configuration (a tune's round); `warmup` asks for an untimed first trial
    /// where the kind takes one.
    fn one_pass(&mut self, warmup: bool);

    /// How long a run of this spec will take by the pace of the kind's `recent` finished runs
    /// on this host (newest first; any kind): None when none says anything.
    fn eta_by_pace(&self, recent: &[&RunReport]) -> Option<Eta>;

    /// The tables a run of this spec makes in the lab schema, `run` standing for its id (what
    /// it writes on a server pglab did not start, said first): None for a kind that writes
    /// nothing of its own (a query) or says so itself (index-build on an existing table).
    fn own_tables(&self, run: &str) -> Option<OwnTables>;

    /// On a server pglab did not start, whether the run writes there ([`ForeignWrites`]): a
    /// kind that writes is refused on a standby and in a read-only database. Unless a kind
    /// says otherwise, it writes.
    fn foreign_writes(&self) -> ForeignWrites {
        ForeignWrites::Always
    }
    /// Every value of the kind's own memory parameters the run will apply (name, bytes, as
    /// written): checked with the swept memory settings against the host's RAM.
    fn memory_values(&self) -> Vec<(String, u64, String)> {
        Vec::new()
    }
    /// Whether the run measures a `synchronous_commit` level that waits for a synchronous
    /// standby (so the sandbox's streaming standby is named for it): by default, a swept
    /// `synchronous_commit` that waits.
    fn waits_for_standby(&self) -> bool {
        super::sync_standby::swept_level_waits(self.settings())
    }
    /// Notes before a run on a Citus cluster of `shard_count` shards over `workers` workers.
    fn citus_notes(&self, _shard_count: u32, _workers: u32) -> Vec<String> {
        Vec::new()
    }
    /// The kind's own checks on the server before anything of the run is sent (the gate): a
    /// query's statements, an existing table's readability. The gate's common checks (the
    /// server, the swept settings, the lab schema's writes) run for every kind.
    fn check_on_server(
        &self,
        _client: &tokio_postgres::Client,
        _schema: &str,
        _on_sandbox: bool,
    ) -> impl Future<Output = Result<(), Refusal>> + Send {
        async { Ok(()) }
    }
    /// What a pass of this workload is measured by (a tune's objective; `per_combo` of its
    /// report gives the values).
    fn pass_measure(&self) -> PassMeasure;

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
