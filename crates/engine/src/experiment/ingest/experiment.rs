//! How ingest plugs into the lab: its spec implements [`Experiment`].

use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::experiment::Experiment;
use crate::experiment::lab::field::{Cost, FieldDef, FieldErrors, ParamText};
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::{ExperimentKind, ExperimentSpec, ReportBody};
use crate::measure::rules::Rules;

use super::{IngestReport, IngestSpec};

impl Experiment for IngestSpec {
    const KIND: ExperimentKind = ExperimentKind::Ingest;
    const FIELDS: &'static [FieldDef] = super::FIELDS;
    type Report = IngestReport;

    fn parse(params: &ParamText) -> Result<Self, FieldErrors> {
        IngestSpec::parse(params)
    }

    fn to_text(&self) -> ParamText {
        IngestSpec::to_text(self)
    }

    fn into_spec(self) -> ExperimentSpec {
        ExperimentSpec::Ingest(self)
    }

    fn estimate(&self) -> Cost {
        IngestSpec::estimate(self)
    }

    fn rules(&self) -> Rules {
        self.decision.rules_for(self.repeat)
    }

    fn settings(&self) -> &SettingsSweep {
        &self.set
    }

    fn settings_mut(&mut self) -> &mut SettingsSweep {
        &mut self.set
    }

    fn checkpoint_mode(&self) -> CheckpointMode {
        self.checkpoint
    }

    fn distributed_columns(&self) -> Vec<String> {
        self.distribute
            .then(|| "id".to_string())
            .into_iter()
            .collect()
    }

    fn one_trial(&self) -> Self {
        let mut s = self.clone();
        s.methods.truncate(1);
        s.batches.truncate(1);
        s.clients.truncate(1);
        s.sync.truncate(1);
        s.repeat = Repeat::Fixed(1);
        s.warmup = false;
        s
    }

    fn new_report(&self) -> IngestReport {
        IngestReport::new(self)
    }

    fn into_body(report: IngestReport) -> ReportBody {
        ReportBody::Ingest(Box::new(report))
    }

    fn report_in(body: &mut ReportBody) -> Option<&mut Self::Report> {
        match body {
            ReportBody::Ingest(r) => Some(r),
            _ => None,
        }
    }

    async fn run(&self, ctx: &RunCtx, report: &mut IngestReport) -> Result<(), RunError> {
        super::run(ctx, self, report).await
    }
}
