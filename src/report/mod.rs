//! Reports (temporary contract; the reports branch replaces this file).
use crate::cli::OutputFormat;
use crate::experiment::RunReport;
pub fn render(report: &RunReport, _format: OutputFormat) -> String {
    serde_json::to_string_pretty(report).unwrap_or_default() + "\n"
}
