//! Every chart of a report, for `write` to put beside the Markdown: the main one
//! (`<name>.svg`), then the experiment's others (`<name>-latency.svg`, …).

use crate::experiment::{ReportBody, RunReport};

/// One chart as SVG, and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Appended to the report's file stem: "" for the main chart, e.g. "-latency".
    pub suffix: String,
    /// What it shows, for the Markdown.
    pub title: String,
    pub svg: String,
}

pub fn charts(report: &RunReport) -> Vec<Chart> {
    match &report.body {
        ReportBody::IndexBuild(_) => super::chart::svg(report)
            .map(|svg| Chart {
                suffix: String::new(),
                title: "CREATE INDEX time by maintenance_work_mem".into(),
                svg,
            })
            .into_iter()
            .collect(),
        ReportBody::Ingest(b) => super::chart_ingest::charts(b),
        ReportBody::Growth(b) => super::chart_growth::charts(report, b),
        ReportBody::Query(b) => super::query::charts(b),
    }
}
