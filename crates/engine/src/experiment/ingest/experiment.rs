//! How ingest plugs into the lab: its spec implements [`Experiment`].

use crate::experiment::RunReport;
use crate::experiment::lab::checkpoint::CheckpointMode;
use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::eta::Eta;
use crate::experiment::lab::experiment::Experiment;
use crate::experiment::lab::field::{Cost, FieldErrors, ParamText};
use crate::experiment::lab::kind_info::{KindInfo, parse_as};
use crate::experiment::lab::kind_report::PassMeasure;
use crate::experiment::lab::lab_writes::{OwnTables, plural};
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::{ExperimentKind, ExperimentSpec, ReportBody};
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

use super::{IngestReport, IngestSpec};

impl Experiment for IngestSpec {
    const KIND: ExperimentKind = ExperimentKind::Ingest;
    const INFO: KindInfo = KindInfo {
        name: "ingest",
        about: "Rows/s vs insert method, batch size, clients and synchronous_commit",
        heading: "ingest parameters",
        fields: super::FIELDS,
        parse: parse_as::<IngestSpec>,
        swept: &["method", "batch", "clients", "sync-commit"],
        procedural: &[],
        own_settings: &[("synchronous_commit", "sync-commit")],
        tune_settings: &[
            "max_wal_size",
            "shared_buffers",
            "wal_compression",
            "wal_buffers",
            "checkpoint_timeout",
        ],
        commits: true,
    };
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

    fn one_pass(&mut self, warmup: bool) {
        self.repeat = Repeat::Fixed(1);
        self.warmup = self.warmup || warmup;
    }

    fn eta_by_pace(&self, recent: &[&RunReport]) -> Option<Eta> {
        super::eta::by_pace(self, recent)
    }

    fn own_tables(&self, run: &str) -> Option<OwnTables> {
        Some(OwnTables {
            tables: tables(self, run),
            holds: holds(self),
            series: !self.append && self.trials() > 2,
            // The estimate is one trial's WAL; the run writes it once per trial.
            wal_times: self.trials() as u64,
            allowed: self.writes_lab,
        })
    }

    fn waits_for_standby(&self) -> bool {
        self.sync.iter().any(|l| l.waits_for_standby())
    }

    /// COPY into a distributed table: what each batch costs in shards.
    fn citus_notes(&self, shard_count: u32, workers: u32) -> Vec<String> {
        if !self.distribute {
            return Vec::new();
        }
        let copies: Vec<(u64, u64)> = self
            .plan()
            .iter()
            .filter(|t| t.method == super::Method::Copy)
            .map(|t| (t.batch, self.rows.div_ceil(t.batch) * self.rounds() as u64))
            .collect();
        super::citus_copy::preflight_note(&copies, shard_count, workers)
            .into_iter()
            .collect()
    }

    fn pass_measure(&self) -> PassMeasure {
        PassMeasure {
            better: Better::Higher,
            unit: "rows/s",
            what: "rows/s over a pass of the workload",
        }
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

/// Ingest's tables as the run names them: the appended one, or the first and the last
/// trial's.
fn tables(s: &IngestSpec, run: &str) -> Vec<String> {
    use super::table::table_name;
    if s.append {
        return vec![table_name(run, None)];
    }
    match s.trials() {
        0 | 1 => vec![table_name(run, Some(1))],
        n => vec![table_name(run, Some(1)), table_name(run, Some(n))],
    }
}

/// What ingest's tables hold and how long each lives.
fn holds(s: &IngestSpec) -> String {
    let trials = s.trials() as u64;
    let indexes = match s.indexes {
        0 => String::new(),
        n => format!(
            ", with {}",
            plural(n as u64, "secondary index", "secondary indexes")
        ),
    };
    if s.append {
        format!(
            "{} per trial appended over at most {}{indexes}",
            plural(s.rows, "row", "rows"),
            plural(trials, "trial", "trials")
        )
    } else {
        format!(
            "one table per trial, at most {}, {} each{indexes}, each dropped after its trial",
            plural(trials, "trial", "trials"),
            plural(s.rows, "row", "rows")
        )
    }
}
