//! JSON: the report exactly as stored in the history, pretty-printed, with the run's
//! decision (`decision`, [`super::decision::Decision`]) beside it.

use crate::experiment::RunReport;

/// The stored report with its decision added as `decision` (null when it decided nothing).
pub(crate) fn value(report: &RunReport) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap_or(serde_json::Value::Null);
    if let serde_json::Value::Object(m) = &mut v {
        m.insert(
            "decision".into(),
            serde_json::to_value(super::decision::decision(report))
                .unwrap_or(serde_json::Value::Null),
        );
    }
    v
}

pub(crate) fn render(report: &RunReport) -> String {
    match serde_json::to_string_pretty(&value(report)) {
        Ok(s) => s + "\n",
        // A report is plain data; this cannot fail, but never panic over it.
        Err(e) => format!("{{\"error\": \"cannot serialise the report: {e}\"}}\n"),
    }
}

/// Several reports as one JSON array (what `history export --format json` writes).
pub(crate) fn render_many(reports: &[&RunReport]) -> String {
    let all: Vec<serde_json::Value> = reports.iter().map(|r| value(r)).collect();
    match serde_json::to_string_pretty(&all) {
        Ok(s) => s + "\n",
        Err(e) => format!("{{\"error\": \"cannot serialise the reports: {e}\"}}\n"),
    }
}
