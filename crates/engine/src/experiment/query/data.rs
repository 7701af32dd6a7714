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

/// The imported tables statement `s`'s plans read, and the other relations they read (by
/// name: not imported, so whole as they stand in the sandbox).
fn read_by<'a>(
    r: &QueryReport,
    s: usize,
    records: &'a [ImportRecord],
) -> (Vec<&'a ImportRecord>, Vec<String>) {
    let mut rels = BTreeSet::new();
    for p in r.plans.iter().filter(|p| p.statement == s) {
        relations(&p.plan, &mut rels);
    }
    let is = |rec: &ImportRecord, (schema, name): &(String, String)| {
        name == &rec.table.name && (schema.is_empty() || schema == &rec.table.schema)
    };
    let imported = records
        .iter()
        .filter(|rec| rels.iter().any(|rel| is(rec, rel)))
        .collect();
    let others = rels
        .iter()
        .filter(|rel| !records.iter().any(|rec| is(rec, rel)))
        .map(|(schema, name)| match schema.as_str() {
            "" => name.clone(),
            s => format!("{s}.{name}"),
        })
        .collect();
    (imported, others)
}

/// The data notes (one per imported table read) and the warnings (one per statement that
/// mixes a sample with other data).
pub(crate) fn of(r: &QueryReport, records: &[ImportRecord]) -> (Vec<String>, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    for (s, name) in r.plan_names().into_iter().enumerate() {
        let (read, others) = read_by(r, s, records);
        for rec in &read {
            let line = format!("data: {}", rec.describe());
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
        let sampled: Vec<&&ImportRecord> = read.iter().filter(|x| x.sample.is_some()).collect();
        if !sampled.is_empty() && read.len() + others.len() >= 2 {
            let each: Vec<String> = read
                .iter()
                .map(|x| format!("{} ({})", x.table, x.sample_text()))
                .chain(others.iter().map(|o| format!("{o} (not imported: whole)")))
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

    /// A 20% sample of orders joined with customers, which was created in the sandbox and not
    /// imported: a warning naming both; the sample read alone: only its data note.
    #[test]
    fn a_sample_joined_with_a_table_not_imported_is_warned_of() {
        let spec = match crate::experiment::lab::spec::spec_of(
            crate::experiment::ExperimentKind::Query,
            &[("sql", "SELECT 1; SELECT 2")],
        ) {
            crate::experiment::ExperimentSpec::Query(q) => *q,
            other => panic!("{other:?}"),
        };
        let mut r = QueryReport::new(&spec);
        let scan = |name: &str| serde_json::json!({"Node Type": "Seq Scan", "Relation Name": name, "Schema": "public"});
        for (i, plan) in [
            serde_json::json!([{"Plan": {"Node Type": "Hash Join", "Plans": [scan("orders"), scan("customers")]}}]),
            serde_json::json!([{"Plan": scan("orders")}]),
        ]
        .into_iter()
        .enumerate()
        {
            r.plans.push(super::super::report::ComboPlan {
                statement: i,
                name: format!("s{i}"),
                combo: 0,
                estimate_only: false,
                facts: Default::default(),
                plan,
            });
        }
        let at = "2026-12-06T03:00:00Z";
        let rec: ImportRecord = serde_json::from_value(serde_json::json!({
            "table": {"schema": "public", "name": "orders"},
            "source": {"target": "me@db1:5432/sales", "version": "15.4", "database": "sales"},
            "snapshot_at": at, "imported_at": at,
            "sample": {"method": "BERNOULLI", "percent": 20.0, "seed": 42},
            "rows": 2000, "source_rows_estimate": 10000.0, "stream_bytes": 1, "table_bytes": 1,
            "index_bytes": 0, "format": "binary", "seconds": 0.1
        }))
        .unwrap();
        let (notes, warnings) = of(&r, &[rec]);
        assert_eq!(
            notes,
            [
                "data: public.orders imported from me@db1:5432/sales (PostgreSQL 15.4) at 2026-12-06 03:00:00 UTC, snapshot 2026-12-06 03:00:00 UTC: 2000 rows, 20% sample (BERNOULLI, seed 42)"
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("joins public.orders (20% sample (BERNOULLI, seed 42)) with public.customers (not imported: whole)"),
            "{}",
            warnings[0]
        );
    }
}
