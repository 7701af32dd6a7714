//! A sampled index-build for tests and examples: a table of 1M rows whose sort of 100 bytes a
//! row spills at 64MB, sampled at 2.5, 5 and 10%, each sample timed by a sort cost model
//! (in memory, or on disk and slower per row) with ±2% scatter. Test-only (feature
//! `fixtures`).

use super::own_table::OwnTableInfo;
use super::projection::sample_memory;
use super::report::{DatasetInfo, IndexBuildReport, IndexTrial};
use super::spec::{IndexBuildSpec, Order};
use crate::experiment::ExperimentSpec;
use crate::experiment::lab::field::ParamText;
use crate::sql::names::TableName;

/// Bytes a row takes in the sort (the index tuple and its overhead).
pub(crate) const ROW: f64 = 100.0;
pub(crate) const TABLE_ROWS: u64 = 1_000_000;

/// A sort of n rows in `mem` bytes: in memory when it fits, else on disk (runs written and
/// merged: slower per row).
pub(crate) fn build_time(n: f64, mem: f64) -> (f64, bool) {
    let sort = 2e-8 * n * n.log2();
    if n * ROW <= mem {
        (0.01 + sort, false)
    } else {
        (0.01 + 1.35 * sort + 1e-7 * n, true)
    }
}

fn spec(mwm: &str) -> IndexBuildSpec {
    let p: ParamText = [
        ("table", "s.t"),
        ("column", "k"),
        ("sample", "10%"),
        ("mwm", mwm),
        ("repeat", "4"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    match crate::experiment::ExperimentKind::IndexBuild.parse_spec(&p) {
        Ok(ExperimentSpec::IndexBuild(s)) => s,
        other => panic!("{other:?}"),
    }
}

fn dataset(order: Order, rows: u64) -> DatasetInfo {
    DatasetInfo {
        table: format!("ibt_{rows}"),
        order,
        rows,
        key_type: "integer".into(),
        heap_bytes: rows as i64 * 40,
        correlation: None,
        reused: false,
        generate_seconds: 0.0,
        distribution: Default::default(),
        schema: None,
        columns: vec!["k".into()],
        index: String::new(),
    }
}

/// A sampled run of `mwm` on a 1M-row table, its samples timed by [`build_time`] with ±2%
/// scatter: each at the memory the run gives it (`scaled`: M × fraction, else M).
pub(crate) fn sampled_run(mwm: &str, scaled: bool) -> IndexBuildReport {
    let mut spec = spec(mwm);
    let own_table = spec.table.clone().unwrap();
    spec.orders = own_table.orders(true);
    let mut r = IndexBuildReport::new(&spec);
    r.own = Some(OwnTableInfo {
        table: TableName::new("s", "t"),
        columns: vec!["k".into()],
        types: "integer".into(),
        rows: Some(TABLE_ROWS),
        rows_counted: true,
        heap_bytes: TABLE_ROWS as i64 * 40,
        correlation: None,
        on_sandbox: true,
        built_on: "copies of sampled rows (whole rows) in the lab schema".into(),
        imported: None,
        projections: Vec::new(),
    });
    for &order in &spec.orders {
        let f = order.fraction().unwrap();
        let rows = (TABLE_ROWS as f64 * f) as u64;
        r.datasets.push(dataset(order, rows));
        for m in &spec.mwm {
            let built = scaled.then(|| sample_memory(m, f));
            let mem = built.as_ref().map_or(m.bytes, |b| b.bytes) as f64;
            let (secs, disk) = build_time(rows as f64, mem);
            for (i, s) in [0.98, 1.01, 1.02, 0.99].iter().enumerate() {
                let mut t = IndexTrial::example(order, rows, m, (0, 0), i as u32 + 1, secs * s);
                t.built_at_bytes = built.as_ref().map(|b| b.bytes);
                t.sort = Some(if disk {
                    format!(
                        "external sort, {} kB on disk",
                        (rows as f64 * ROW / 1024.0) as u64
                    )
                } else {
                    format!("in-memory sort, {} kB", (rows as f64 * ROW / 1024.0) as u64)
                });
                r.trials.push(t);
            }
        }
    }
    r.summarize(&[]);
    r
}
