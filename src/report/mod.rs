//! Reports from a finished run: an aligned text table, JSON (the stored report as is), CSV (a
//! row per trial) and Markdown with an SVG chart beside it. One file per format; `content`
//! decides what a report says, the formats only lay it out.

pub mod chart;
pub mod comparison;
pub mod content;
pub mod csv;
pub mod example;
pub mod generic;
mod index_build;
pub mod json;
pub mod markdown;
pub mod recommend;
pub mod table;

use std::path::{Path, PathBuf};

use crate::cli::OutputFormat;
use crate::experiment::{ReportBody, RunReport};

/// A run in the chosen format (`Text` and `Table` both mean the aligned table).
pub fn render(report: &RunReport, format: OutputFormat) -> String {
    match format {
        OutputFormat::Text | OutputFormat::Table => table::render(report),
        OutputFormat::Json => json::render(report),
        OutputFormat::Csv => csv::render(report),
        OutputFormat::Md => markdown::render(report),
    }
}

/// Several runs in one document (`history export`).
pub fn render_many(reports: &[&RunReport], format: OutputFormat) -> String {
    match format {
        OutputFormat::Json => json::render_many(reports),
        OutputFormat::Csv => csv::render_many(reports),
        OutputFormat::Md => reports
            .iter()
            .map(|r| markdown::render(r))
            .collect::<Vec<_>>()
            .join("\n---\n\n"),
        OutputFormat::Text | OutputFormat::Table => reports
            .iter()
            .map(|r| table::render(r))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// One line about a run's result, for lists: its findings, or why it has none.
pub fn headline(report: &RunReport) -> String {
    if let Some(e) = &report.error {
        return e.lines().next().unwrap_or_default().to_string();
    }
    let findings = match &report.body {
        ReportBody::IndexBuild(b) => b.summary.findings.clone(),
        other => generic::body(other).findings,
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
    pub chart: Option<PathBuf>,
}

/// Write the Markdown report to `md` and its chart beside it (same name, `.svg`), each
/// atomically. Experiments without a chart get none.
pub fn write(report: &RunReport, md: &Path) -> std::io::Result<Written> {
    let chart_path = md.with_extension("svg");
    let chart = match chart::svg(report) {
        Some(svg) => {
            crate::preset::write_atomic(&chart_path, svg.as_bytes())?;
            Some(chart_path)
        }
        None => None,
    };
    let link = chart
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let doc = markdown::document(report, link.as_deref());
    crate::preset::write_atomic(md, doc.as_bytes())?;
    Ok(Written {
        markdown: md.to_path_buf(),
        chart,
    })
}
