//! growth: an association table on its way to a billion rows (the third founding
//! experiment), and the question behind it — store every (version, content) pair
//! (`snapshot`) or only the differences (`ranges`)?
//!
//! Each step grows every design's table fast (COPY, indexes dropped and rebuilt or kept),
//! then measures the write of one new version, the read of one version and the sizes. Steps
//! that would not fit the disk (or lie beyond the fill limit) are not run: they are
//! projected along the growth each design's measurements showed, with intervals, and marked
//! as such (see [`crate::measure::fit`]).

mod churn;
mod commits;
mod copy;
mod cost;
mod eta;
mod experiment;
mod facts;
mod fault;
mod fill;
mod key;
mod kinds;
mod measure;
pub(crate) mod project;
mod projection_notes;
#[cfg(test)]
mod record_schema_tests;
mod report;
mod rounds;
mod run;
mod samples;
pub(crate) mod schema;
mod sharding;
mod spec;
mod spec_values;
mod step;
mod summary;
mod sync_levels;
mod verdicts;

pub(crate) use commits::{GrowthFault, StepCommits, WriteTiming, commit_ms, rows_per_second};
pub(crate) use cost::DEFAULT_MAX_WAL;
pub use key::KeyShape;
pub use kinds::{Design, GrowMode, IndexKind, WriteMethod};
pub use report::{
    DesignFit, FillBaseline, GrowStats, GrowthReport, GrowthStep, GrowthSummary, StepProjection,
};
pub(crate) use run::run;
pub(crate) use sharding::ShardComparison;
pub use spec::{DESIGNS, FIELDS, GrowthSpec, INDEXES};
pub(crate) use verdicts::Timed;

use super::lab::event::{ResultLayout, Sample};
use crate::measure::units::{format_bytes_short, format_count};

/// The results table and chart: as the original's table, the write of one version against
/// the versions the table holds, one series per design; the reads and sizes beside it. The
/// summary compares the designs at each step (the engine's verdicts, in each sample's
/// findings), not the steps of a design.
pub fn layout() -> ResultLayout {
    let seconds = |name: &str| super::lab::event::MeasureDef {
        name: name.into(),
        unit: "s".into(),
    };
    ResultLayout {
        x_label: "versions".into(),
        x_unit: "count".into(),
        x_log: true,
        y_label: "write of one version".into(),
        y_unit: "s".into(),
        y_log: true,
        y_better: crate::measure::verdict::Better::Lower,
        columns: [
            "design",
            "versions",
            "rows",
            "write",
            "read",
            "read cold",
            "table",
            "indexes",
            "projected",
        ]
        .map(String::from)
        .to_vec(),
        y_name: "write".into(),
        measures: vec![seconds("read"), seconds("read cold")],
        compare: super::lab::event::Compare::Series,
        summary_columns: ["rows", "table", "indexes"].map(String::from).to_vec(),
        ..Default::default()
    }
}

/// The chart point and table row of a step; `findings` are the verdicts the step decided.
pub fn sample_of(spec: &GrowthSpec, s: &GrowthStep, findings: Vec<String>) -> Sample {
    let opt = |v: Option<f64>| v.map(verdicts::ms).unwrap_or_else(|| "–".into());
    let combo = spec.set.combos().get(s.combo).cloned().unwrap_or_default();
    let mut cells: Vec<String> = vec![
        s.design.as_str().into(),
        format_count(s.versions as f64),
        format_count(s.rows as f64),
        opt(s.write_seconds),
        opt(s.read_seconds),
        opt(s.read_cold_seconds),
        format_bytes_short(s.table_bytes as f64),
        format_bytes_short(s.index_total() as f64),
        if s.projected {
            crate::measure::fit::reach_words(s.reach.unwrap_or(f64::INFINITY))
        } else {
            "no".into()
        },
    ];
    if !spec.set.is_empty() {
        cells.push(crate::experiment::lab::whatif::combo_label(&combo));
    }
    Sample {
        series: crate::experiment::lab::whatif::with_combo(s.design.as_str(), &combo),
        x: s.versions as f64,
        y: s.write_seconds.unwrap_or(f64::NAN),
        projected: s.projected,
        cells,
        settings: crate::experiment::lab::whatif::combo_label(&combo),
        values: s.write_repeats.clone(),
        measures: vec![s.read_repeats.clone(), s.read_cold_repeats.clone()],
        findings,
    }
}

/// The verdicts of ranges against snapshot that the steps just measured (one step, one
/// combination of swept settings, every design) decide: the findings the report will give.
fn step_findings(spec: &GrowthSpec, steps: &[GrowthStep]) -> Vec<String> {
    verdicts::comparisons(steps, &combo_labels(spec), &spec.decision.rules())
        .into_iter()
        .map(|c| c.finding)
        .collect()
}

/// Each combination of swept settings by its label, in the sweep's order.
fn combo_labels(spec: &GrowthSpec) -> Vec<String> {
    spec.set
        .combos()
        .iter()
        .map(crate::experiment::lab::whatif::combo_label)
        .collect()
}
