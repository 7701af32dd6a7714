//! How query plugs into the lab: its spec implements [`Experiment`].

use std::time::Duration;

use crate::experiment::RunReport;
use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::eta::Eta;
use crate::experiment::lab::experiment::Experiment;
use crate::experiment::lab::field::{Cost, FieldErrors, ParamText};
use crate::experiment::lab::gate::Refusal;
use crate::experiment::lab::kind_info::{KindInfo, parse_as};
use crate::experiment::lab::kind_report::PassMeasure;
use crate::experiment::lab::lab_writes::OwnTables;
use crate::experiment::lab::preflight::ForeignWrites;
use crate::experiment::lab::whatif::SettingsSweep;
use crate::experiment::lab::{RunCtx, RunError};
use crate::experiment::{ExperimentKind, ExperimentSpec, ReportBody};
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

use super::{QueryReport, QuerySpec};

impl Experiment for QuerySpec {
    const KIND: ExperimentKind = ExperimentKind::Query;
    const INFO: KindInfo = KindInfo {
        name: "query",
        about: "Your own SQL under setting sweeps and candidate indexes: time, plans, spills, throughput",
        heading: "query parameters",
        fields: super::FIELDS,
        parse: parse_as::<QuerySpec>,
        swept: &["index", "clients"],
        // How the text was given (a file name, @FILE): the text itself is compared by its
        // digest (history::compare::conditions).
        procedural: &["sql", "file", "setup", "script", "keep-setup"],
        own_settings: &[],
        // What the planner and the executor read; hash_mem_multiplier beside work_mem: a
        // hash's memory is their product, so the two are screened (and, when both move,
        // raced) as a pair.
        tune_settings: &[
            "work_mem",
            "hash_mem_multiplier",
            "random_page_cost",
            "effective_cache_size",
            "jit",
            "max_parallel_workers_per_gather",
            "effective_io_concurrency",
            "shared_buffers",
        ],
        // Reads (or writes rolled back) commit nothing: the durability settings are no
        // candidates.
        commits: false,
    };
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

    /// A query warms each combination up untimed before its trials already.
    fn one_pass(&mut self, _warmup: bool) {
        self.repeat = Repeat::Fixed(1);
    }

    fn eta_by_pace(&self, recent: &[&RunReport]) -> Option<Eta> {
        super::eta::by_pace(self, recent)
    }

    /// A query writes nothing of its own: its setup and candidate indexes are the DBA's and
    /// pass their own checks.
    fn own_tables(&self, _run: &str) -> Option<OwnTables> {
        None
    }

    fn foreign_writes(&self) -> ForeignWrites {
        match super::writes_on_foreign(self) {
            Some(what) => ForeignWrites::Asked(what),
            None => ForeignWrites::Never,
        }
    }

    async fn check_on_server(
        &self,
        client: &tokio_postgres::Client,
        schema: &str,
        on_sandbox: bool,
    ) -> Result<(), Refusal> {
        super::gate::check(client, self, schema, on_sandbox).await
    }

    fn pass_measure(&self) -> PassMeasure {
        if self.throughput() {
            return PassMeasure {
                better: Better::Higher,
                unit: "tx/s",
                what: "transactions/s over a pass of the workload",
            };
        }
        // A statement that counts more than once (a captured workload's calls).
        let weighted = self
            .statements
            .iter()
            .any(|s| s.weight.is_some_and(|w| w > 1));
        PassMeasure {
            better: Better::Lower,
            unit: "s",
            what: if weighted {
                WEIGHTED
            } else {
                "seconds of the timed statements of a pass (one execution of each, summed; not the wall clock the Pace counts, where a fast statement runs many times a trial)"
            },
        }
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

/// A tune's objective for a captured workload (statements weighted by their calls).
const WEIGHTED: &str = "seconds of the timed statements of a pass, each statement's seconds per execution × its weight (the calls it stands for), summed: the time production spends on them, not the wall clock the Pace counts";
