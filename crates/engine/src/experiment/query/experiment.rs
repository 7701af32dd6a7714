//! How query plugs into the lab: its spec implements [`Experiment`].

use std::time::Duration;

use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::experiment::Experiment;
use crate::experiment::lab::field::{Cost, FieldDef, FieldErrors, ParamText};
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::{ExperimentKind, ExperimentSpec, ReportBody};
use crate::measure::rules::Rules;

use super::{QueryReport, QuerySpec};

impl Experiment for QuerySpec {
    const KIND: ExperimentKind = ExperimentKind::Query;
    const FIELDS: &'static [FieldDef] = super::FIELDS;
    type Report = QueryReport;

    fn parse(params: &ParamText) -> Result<Self, FieldErrors> {
        QuerySpec::parse(params)
    }

    fn to_text(&self) -> ParamText {
        QuerySpec::to_text(self)
    }

    fn into_spec(self) -> ExperimentSpec {
        ExperimentSpec::Query(Box::new(self))
    }

    fn estimate(&self) -> Cost {
        QuerySpec::estimate(self)
    }

    fn default_statement_timeout(&self) -> Option<Duration> {
        Some(super::DEFAULT_STATEMENT_TIMEOUT)
    }

    /// A query on a server pglab did not start writes nothing there: its setup makes
    /// temporary tables on the measuring session, its results stay in pglab's own data
    /// directory.
    fn writes_on_foreign_servers(&self) -> bool {
        false
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

    fn one_trial(&self) -> Self {
        let mut s = self.clone();
        s.statements.truncate(1);
        s.index.clear();
        s.clients.truncate(1);
        s.repeat = Repeat::Fixed(1);
        s
    }

    fn new_report(&self) -> QueryReport {
        QueryReport::new(self)
    }

    fn into_body(report: QueryReport) -> ReportBody {
        ReportBody::Query(Box::new(report))
    }

    fn report_in(body: &mut ReportBody) -> Option<&mut Self::Report> {
        match body {
            ReportBody::Query(r) => Some(r),
            _ => None,
        }
    }

    async fn run(&self, ctx: &RunCtx, report: &mut QueryReport) -> Result<(), RunError> {
        super::run(ctx, self, report).await
    }
}
