//! Which data a query run measured, said in its notes: every imported table the statements'
//! plans read, with where it came from and whether it is whole or a sample; and a warning
//! where one statement joins a sample with a whole table (or two samples), whose rows and
//! time are not those of the whole tables (a 20% sample joined with a whole table keeps only
//! the sampled rows' matches).

use std::collections::BTreeSet;

use super::QueryReport;
use crate::sql::imported::ImportRecord;

/// (schema, relation) of every scanned relation in an EXPLAIN (FORMAT JSON) plan; the schema
/// is empty when the plan does not say it.
fn relations(plan: &serde_json::Value, out: &mut BTreeSet<(String, String)>) {
    match plan {
        serde_json::Value::Object(m) => {
            if let Some(name) = m.get("Relation Name").and_then(|v| v.as_str()) {
                let schema = m.get("Schema").and_then(|v| v.as_str()).unwrap_or("");
                out.insert((schema.to_string(), name.to_string()));
            }
            m.values().for_each(|v| relations(v, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| relations(v, out)),
        _ => {}
    }
}

/// The imported tables statement `s`'s plans read.
fn read_by<'a>(r: &QueryReport, s: usize, records: &'a [ImportRecord]) -> Vec<&'a ImportRecord> {
    let mut rels = BTreeSet::new();
    for p in r.plans.iter().filter(|p| p.statement == s) {
        relations(&p.plan, &mut rels);
    }
    records
        .iter()
        .filter(|rec| {
            rels.iter().any(|(schema, name)| {
                name == &rec.table.name && (schema.is_empty() || schema == &rec.table.schema)
            })
        })
        .collect()
}

/// The data notes (one per imported table read) and the warnings (one per statement that
/// mixes a sample with other data).
pub fn of(r: &QueryReport, records: &[ImportRecord]) -> (Vec<String>, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for (s, name) in r.plan_names().into_iter().enumerate() {
        let read = read_by(r, s, records);
        for rec in &read {
            let line = format!("data: {}", rec.describe());
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
        let sampled: Vec<&&ImportRecord> = read.iter().filter(|x| x.sample.is_some()).collect();
        if !sampled.is_empty() && read.len() >= 2 {
            let each: Vec<String> = read
                .iter()
                .map(|x| format!("{} ({})", x.table, x.sample_text()))
                .collect();
            warnings.push(format!(
                "{name} joins {}: a sample joined with other data keeps only the sampled rows' matches, so its rows and time are not those of the whole tables",
                each.join(" with ")
            ));
        }
    }
    (notes, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_are_read_from_every_node() {
        let plan = serde_json::json!([{"Plan": {"Node Type": "Hash Join", "Plans": [
            {"Node Type": "Seq Scan", "Relation Name": "orders", "Schema": "sales"},
            {"Node Type": "Hash", "Plans": [{"Node Type": "Seq Scan", "Relation Name": "customers"}]}
        ]}}]);
        let mut out = BTreeSet::new();
        relations(&plan, &mut out);
        let got: Vec<(String, String)> = out.into_iter().collect();
        assert_eq!(
            got,
            [
                (String::new(), "customers".to_string()),
                ("sales".to_string(), "orders".to_string())
            ]
        );
    }
}
