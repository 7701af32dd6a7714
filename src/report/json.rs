//! JSON: the report exactly as stored in the history, pretty-printed.

use crate::experiment::RunReport;

pub fn render(report: &RunReport) -> String {
    match serde_json::to_string_pretty(report) {
        Ok(s) => s + "\n",
        // A report is plain data; this cannot fail, but never panic over it.
        Err(e) => format!("{{\"error\": \"cannot serialise the report: {e}\"}}\n"),
    }
}

/// Several reports as one JSON array (what `history export --format json` writes).
pub fn render_many(reports: &[&RunReport]) -> String {
    match serde_json::to_string_pretty(reports) {
        Ok(s) => s + "\n",
        Err(e) => format!("{{\"error\": \"cannot serialise the reports: {e}\"}}\n"),
    }
}
