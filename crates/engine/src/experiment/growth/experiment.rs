//! How growth plugs into the lab: its spec implements [`Experiment`].

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

use super::{GrowthReport, GrowthSpec};

impl Experiment for GrowthSpec {
    const KIND: ExperimentKind = ExperimentKind::Growth;
    const INFO: KindInfo = KindInfo {
        name: "growth",
        about: "A table growing toward a target size: write/read times and sizes, snapshot vs ranges",
        heading: "growth parameters",
        fields: super::FIELDS,
        parse: parse_as::<GrowthSpec>,
        swept: &["design", "steps", "distribute"],
        procedural: &["fill-limit", "target-rows", "baseline"],
        own_settings: &[],
        tune_settings: &[
            "shared_buffers",
            "max_wal_size",
            "work_mem",
            "random_page_cost",
            "effective_io_concurrency",
            "effective_cache_size",
            "jit",
            "max_parallel_workers_per_gather",
            "wal_compression",
        ],
        commits: true,
    };
    type Report = GrowthReport;

    fn parse(params: &ParamText) -> Result<Self, FieldErrors> {
        GrowthSpec::parse(params)
    }

    fn to_text(&self) -> ParamText {
        GrowthSpec::to_text(self)
    }

    fn into_spec(self) -> ExperimentSpec {
        ExperimentSpec::Growth(self)
    }

    fn estimate(&self) -> Cost {
        GrowthSpec::estimate(self)
    }

    fn estimate_with_free(&self, free: Option<u64>) -> Cost {
        GrowthSpec::estimate_with_free(self, free)
    }

    /// Growth trials fill ever larger steps: each weighs the versions it adds, so that the
    /// first small steps do not set the pace of the large ones; a point only projected (the
    /// target rows, steps past the fill limit) costs next to nothing.
    fn trial_weights(&self) -> Vec<f64> {
        let filled = self.planned_steps(None);
        let mut out = Vec::new();
        let mut prev = 0;
        for p in self.points() {
            let w = if filled.contains(&p) {
                let w = p.saturating_sub(prev).max(1);
                prev = p;
                w
            } else {
                1
            };
            out.extend(self.designs.iter().map(|_| w as f64));
        }
        out
    }

    /// A standby fault holds up every filled step for its `for` at each level that waits for
    /// the standby (see [`crate::experiment::lab::eta::growth`]): time no count of versions
    /// carries, shared by the step's designs.
    fn trial_fixed_seconds(&self) -> Vec<f64> {
        let per_step = super::eta::fault_seconds_per_step(self);
        if per_step <= 0.0 {
            return Vec::new();
        }
        let filled = self.planned_steps(None);
        let share = per_step / self.designs.len().max(1) as f64;
        self.points()
            .iter()
            .flat_map(|p| {
                let s = if filled.contains(p) { share } else { 0.0 };
                self.designs.iter().map(move |_| s)
            })
            .collect()
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
        GrowthSpec::distributed_columns(self)
    }

    fn one_trial(&self) -> Self {
        let mut s = self.clone();
        s.designs.truncate(1);
        s.steps.truncate(1);
        s.target_rows = None;
        s.repeat = Repeat::Fixed(1);
        s
    }

    /// Growth has no untimed warm-up trial to add.
    fn one_pass(&mut self, _warmup: bool) {
        self.repeat = Repeat::Fixed(1);
    }

    fn eta_by_pace(&self, recent: &[&RunReport]) -> Option<Eta> {
        super::eta::by_pace(self, recent)
    }

    fn own_tables(&self, run: &str) -> Option<OwnTables> {
        use super::schema::run_table_name;
        let mut tables = vec![run_table_name(run, "content")];
        tables.extend(
            self.designs
                .iter()
                .map(|d| run_table_name(run, d.table_key())),
        );
        if self.baseline {
            tables.push(run_table_name(run, "plain"));
        }
        Some(OwnTables {
            tables,
            holds: format!(
                "the content table and one association table per design, growing to about {} with their indexes",
                plural(self.estimate().rows, "row", "rows")
            ),
            series: false,
            wal_times: 1,
            allowed: self.writes_lab,
        })
    }

    fn pass_measure(&self) -> PassMeasure {
        PassMeasure {
            better: Better::Lower,
            unit: "s",
            what: "seconds of the measured writes and reads of a pass",
        }
    }

    fn new_report(&self) -> GrowthReport {
        GrowthReport::new(self)
    }

    fn into_body(report: GrowthReport) -> ReportBody {
        ReportBody::Growth(Box::new(report))
    }

    fn report_in(body: &mut ReportBody) -> Option<&mut Self::Report> {
        match body {
            ReportBody::Growth(r) => Some(r),
            _ => None,
        }
    }

    async fn run(&self, ctx: &RunCtx, report: &mut GrowthReport) -> Result<(), RunError> {
        super::run(ctx, self, report).await
    }
}
