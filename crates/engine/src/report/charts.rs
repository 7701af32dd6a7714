//! Every chart of a report, for `write` to put beside the Markdown: the main one
//! (`<name>.svg`), then the experiment's others (`<name>-latency.svg`, …).

use crate::experiment::RunReport;

/// One chart as SVG, and where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Appended to the report's file stem: "" for the main chart, e.g. "-latency".
    pub suffix: String,
    /// What it shows, for the Markdown.
    pub title: String,
    pub svg: String,
}

pub(crate) fn charts(report: &RunReport) -> Vec<Chart> {
    super::kind_view::view(&report.body).charts(report)
}
