//! CSV: one row per trial (or step), with the run's id, experiment, start time and preset in
//! front, so rows of several runs can share one file. Columns are the trial's fields; nested
//! ones (e.g. per-phase seconds) become `parent.child` columns.

use serde_json::{Map, Value};

use super::generic::{flat_rows, scalar};
use crate::experiment::RunReport;

/// RFC 4180 quoting.
pub(crate) fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn raw(v: &Value) -> String {
    match v {
        // Full precision in CSV: it is for further processing, not for reading.
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => scalar(other).unwrap_or_else(|| other.to_string()),
    }
}

pub fn render(report: &RunReport) -> String {
    render_many(&[report])
}

pub fn render_many(reports: &[&RunReport]) -> String {
    let lead = ["run_id", "experiment", "started_at", "preset", "outcome"];
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<(Vec<String>, Map<String, Value>)> = Vec::new();
    for r in reports {
        let front = vec![
            r.run_id.clone(),
            r.kind().to_string(),
            r.started_at.to_rfc3339(),
            r.preset.clone().unwrap_or_default(),
            r.outcome.as_str().to_string(),
        ];
        for flat in flat_rows(&r.body) {
            for k in flat.keys() {
                if !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
            rows.push((front.clone(), flat));
        }
    }
    let mut out = String::new();
    let header: Vec<String> = lead
        .iter()
        .map(|s| s.to_string())
        .chain(columns.iter().cloned())
        .map(|h| cell(&h))
        .collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for (front, flat) in rows {
        let line: Vec<String> = front
            .iter()
            .map(|s| cell(s))
            .chain(
                columns
                    .iter()
                    .map(|c| cell(&flat.get(c).map(raw).unwrap_or_default())),
            )
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}
