//! Reports from a finished run: an aligned text table, JSON (the stored report as is), CSV (a
//! row per trial) and Markdown with an SVG chart beside it. One file per format; `content`
//! decides what a report says, the formats only lay it out.

pub mod chart;
pub mod chart_commit;
pub mod chart_growth;
pub mod chart_ingest;
pub(crate) mod chart_load;
pub(crate) mod chart_load_growth;
#[cfg(test)]
mod chart_load_growth_tests;
pub(crate) mod chart_over_time;
pub(crate) mod chart_plot;
#[cfg(test)]
mod chart_query_tests;
#[cfg(test)]
mod chart_standby_tests;
pub(crate) mod charts;
#[cfg(test)]
mod claims_parse;
#[cfg(test)]
mod claims_tests;
pub mod comparison;
pub mod content;
pub(crate) mod csv;
pub(crate) mod decision;
#[cfg(test)]
mod decision_tests;
/// A worked report for tests; not in the product.
#[cfg(any(test, feature = "fixtures"))]
pub mod example;
pub mod files;
pub(crate) mod generic;
pub mod grid;
pub(crate) mod growth;
pub(crate) mod growth_advice;
pub(crate) mod growth_citus;
pub(crate) mod growth_commits;
pub(crate) mod growth_seed;
pub(crate) mod growth_timing;
pub mod history_table;
mod index_build;
pub(crate) mod ingest;
pub(crate) mod ingest_advice;
pub(crate) mod json;
pub(crate) mod kind_view;
pub mod markdown;
pub(crate) mod query;
pub(crate) mod query_advice;
pub(crate) mod query_plans;
pub(crate) mod query_standby;
pub mod recommend;
pub(crate) mod recommend_facts;
pub(crate) mod recommend_sample;
pub(crate) mod set_lines;
pub mod table;
pub mod ticks;
pub(crate) mod tune;
pub mod tune_files;

use std::path::{Path, PathBuf};

use crate::experiment::{ReportBody, RunReport};

/// The formats a report is laid out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An aligned text table.
    Table,
    /// The stored report as is.
    Json,
    /// A row per trial.
    Csv,
    /// Markdown (the chart is written beside it by [`write`]).
    Md,
}

/// A run in the chosen format.
pub fn render(report: &RunReport, format: Format) -> String {
    match format {
        Format::Table => table::render(report),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report),
        Format::Md => markdown::render(report),
    }
}

/// Several runs in one document (`history export`).
pub fn render_many(reports: &[&RunReport], format: Format) -> String {
    match format {
        Format::Json => json::render_many(reports),
        Format::Csv => csv::render_many(reports),
        Format::Md => reports
            .iter()
            .map(|r| markdown::render(r))
            .collect::<Vec<_>>()
            .join("\n---\n\n"),
        Format::Table => reports
            .iter()
            .map(|r| table::render(r))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// One line about a run's result, for lists: its decision's headline (what it recommends),
/// else its findings, or why it has none.
pub fn headline(report: &RunReport) -> String {
    if let Some(e) = &report.error {
        return e.lines().next().unwrap_or_default().to_string();
    }
    if let Some(d) = decision::decision(report) {
        return d.headline();
    }
    let findings = match &report.body {
        ReportBody::IndexBuild(b) => b.summary.findings.clone(),
        ReportBody::Ingest(b) => b.summary.findings.clone(),
        ReportBody::Growth(b) => b.summary.findings.clone(),
        ReportBody::Query(b) => b.summary.findings.clone(),
    };
    if findings.is_empty() {
        "no results".into()
    } else {
        findings.join("; ")
    }
}

/// The files `write` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub markdown: PathBuf,
    /// The main chart (`<name>.svg`), when there is one.
    pub chart: Option<PathBuf>,
    /// Every chart written, the main one first.
    pub charts: Vec<PathBuf>,
}

/// Write the Markdown report to `md` and its charts beside it (same name, `.svg`; further
/// charts `<name>-<what>.svg`), each atomically. Experiments without a chart get none.
pub fn write(report: &RunReport, md: &Path) -> std::io::Result<Written> {
    let stem = md
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let mut paths = Vec::new();
    let mut links = Vec::new();
    for c in charts::charts(report) {
        let name = format!("{stem}{}.svg", c.suffix);
        let path = md.with_file_name(&name);
        crate::paths::write_atomic(&path, c.svg.as_bytes())?;
        paths.push(path);
        links.push(markdown::ChartLink {
            title: c.title,
            file: name,
        });
    }
    let doc = markdown::document_with_charts(report, &links);
    crate::paths::write_atomic(md, doc.as_bytes())?;
    Ok(Written {
        markdown: md.to_path_buf(),
        chart: paths.first().cloned(),
        charts: paths,
    })
}
