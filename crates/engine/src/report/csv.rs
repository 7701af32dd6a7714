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

/// A query run's trials name their statement by a name cut for tables (its first line at
/// most 48 characters): CSV is for scripts, so each row also gets the statement whole.
fn full_statements(r: &RunReport, rows: &mut [Map<String, Value>]) {
    let crate::experiment::ReportBody::Query(q) = &r.body else {
        return;
    };
    // Throughput trials run every statement (or a script): no one statement to name.
    for row in rows.iter_mut().filter(|r| !r.contains_key("clients")) {
        let sql = row
            .get("statement")
            .and_then(Value::as_u64)
            .and_then(|i| q.params.statements.get(i as usize))
            .map(|s| s.sql.clone());
        if let Some(sql) = sql {
            row.insert("statement_sql".into(), Value::String(sql));
        }
    }
}

pub(crate) fn render(report: &RunReport) -> String {
    render_many(&[report])
}

pub(crate) fn render_many(reports: &[&RunReport]) -> String {
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
        let mut flat = flat_rows(&r.body);
        full_statements(r, &mut flat);
        if flat.is_empty() {
            // A run cancelled before its first trial still is a row: its id and outcome.
            rows.push((front.clone(), Map::new()));
        }
        for flat in flat {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Outcome;
    use crate::experiment::index_build::Order;

    #[test]
    fn a_run_without_trials_is_still_a_row() {
        let mut r = crate::report::example::index_build("c1", 1000, &[]);
        r.outcome = Outcome::Cancelled;
        let text = render(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[1].starts_with("c1,index-build,"), "{text}");
        assert!(lines[1].ends_with(",cancelled"), "{text}");
        // With trials, one row each and no extra row.
        let r = crate::report::example::index_build(
            "c2",
            1000,
            &[(Order::Random, 0, "1MB", &[1.0, 1.1])],
        );
        assert_eq!(render(&r).lines().count(), 3);
    }

    #[test]
    fn a_query_rows_statement_is_whole_and_quoted() {
        let long = "SELECT o.id, c.name, \"Total\" FROM sales.orders o JOIN sales.customers c ON c.id = o.customer_id WHERE o.placed_at > now() - interval '1 day'";
        let spec = crate::experiment::query::test_spec(&[("sql", long)]);
        let mut q = crate::experiment::query::QueryReport::new(&spec);
        q.trials.push(
            serde_json::from_value(serde_json::json!({
                "statement": 0, "name": spec.statements[0].name, "combo": 0,
                "repeat": 1, "seconds": 0.25, "rows": 3
            }))
            .unwrap(),
        );
        let r =
            crate::report::example::with_body(crate::experiment::ReportBody::Query(Box::new(q)));
        let text = render(&r);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert!(header.contains(&"statement_sql"), "{text}");
        // The table name is cut; the CSV row holds the statement whole, RFC 4180 quoted.
        assert!(spec.statements[0].name.ends_with('…'));
        let quoted = format!("\"{}\"", long.replace('"', "\"\""));
        assert!(text.contains(&quoted), "{text}");
    }
}
