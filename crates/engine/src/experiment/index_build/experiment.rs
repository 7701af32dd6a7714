//! How index-build plugs into the lab: its spec implements [`Experiment`].

use crate::experiment::RunReport;
use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::eta::Eta;
use crate::experiment::lab::experiment::Experiment;
use crate::experiment::lab::field::{Cost, FieldErrors, ParamText};
use crate::experiment::lab::gate::Refusal;
use crate::experiment::lab::kind_info::{KindInfo, parse_as};
use crate::experiment::lab::kind_report::PassMeasure;
use crate::experiment::lab::lab_writes::{OwnTables, plural};
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::{ExperimentKind, ExperimentSpec, ReportBody};
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

use super::{IndexBuildReport, IndexBuildSpec};

impl Experiment for IndexBuildSpec {
    const KIND: ExperimentKind = ExperimentKind::IndexBuild;
    const INFO: KindInfo = KindInfo {
        name: "index-build",
        about: "CREATE INDEX time vs maintenance_work_mem, workers and input order",
        heading: "index-build parameters",
        fields: super::FIELDS,
        parse: parse_as::<IndexBuildSpec>,
        swept: &["order", "mwm", "workers"],
        procedural: &["shuffle"],
        own_settings: &[
            ("maintenance_work_mem", "mwm"),
            ("max_parallel_maintenance_workers", "workers"),
        ],
        tune_settings: &[
            "max_wal_size",
            "wal_compression",
            "shared_buffers",
            "wal_buffers",
        ],
        commits: true,
    };
    type Report = IndexBuildReport;

    fn parse(params: &ParamText) -> Result<Self, FieldErrors> {
        IndexBuildSpec::parse(params)
    }

    fn to_text(&self) -> ParamText {
        IndexBuildSpec::to_text(self)
    }

    fn into_spec(self) -> ExperimentSpec {
        ExperimentSpec::IndexBuild(self)
    }

    fn estimate(&self) -> Cost {
        IndexBuildSpec::estimate(self)
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
        s.orders.truncate(1);
        s.mwm.truncate(1);
        s.workers.truncate(1);
        s.repeat = Repeat::Fixed(1);
        s.warmup = false;
        s
    }

    fn one_pass(&mut self, warmup: bool) {
        self.repeat = Repeat::Fixed(1);
        self.warmup = self.warmup || warmup;
    }

    fn eta_by_pace(&self, recent: &[&RunReport]) -> Option<Eta> {
        super::eta::by_pace(self, recent)
    }

    fn own_tables(&self, run: &str) -> Option<OwnTables> {
        if self.table.is_some() {
            return None;
        }
        Some(OwnTables {
            tables: self
                .orders
                .iter()
                .map(|o| format!("{}_{run}", super::dataset::table_name(self, *o)))
                .collect(),
            holds: format!(
                "{} each; each trial builds one index on it and drops it",
                plural(self.rows, "row", "rows")
            ),
            series: false,
            wal_times: 1,
            allowed: self.writes_lab,
        })
    }

    fn memory_values(&self) -> Vec<(String, u64, String)> {
        self.mwm
            .iter()
            .map(|m| ("maintenance_work_mem".into(), m.bytes, m.text.clone()))
            .collect()
    }

    fn waits_for_standby(&self) -> bool {
        false
    }

    async fn check_on_server(
        &self,
        client: &tokio_postgres::Client,
        _schema: &str,
        on_sandbox: bool,
    ) -> Result<(), Refusal> {
        super::gate::check(client, self, on_sandbox).await
    }

    fn pass_measure(&self) -> PassMeasure {
        PassMeasure {
            better: Better::Lower,
            unit: "s",
            what: "seconds of the index builds of a pass",
        }
    }

    fn new_report(&self) -> IndexBuildReport {
        IndexBuildReport::new(self)
    }

    fn into_body(report: IndexBuildReport) -> ReportBody {
        ReportBody::IndexBuild(Box::new(report))
    }

    fn report_in(body: &mut ReportBody) -> Option<&mut Self::Report> {
        match body {
            ReportBody::IndexBuild(r) => Some(r),
            _ => None,
        }
    }

    async fn run(&self, ctx: &RunCtx, report: &mut IndexBuildReport) -> Result<(), RunError> {
        super::run(ctx, self, report).await
    }
}
