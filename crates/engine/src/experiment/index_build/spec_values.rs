//! The index-build spec's field values read from their text, and the checks across fields:
//! each parser returns the value or the sentence `FieldReader` records for its field.

use super::spec::{IndexMethod, MWM_MAX, MWM_MIN, Order};
use super::table_spec::OwnTable;
use crate::experiment::lab::field::FieldReader;
use crate::measure::units::{Size, parse_size_list};

/// `order`: the input orders, each once and in order.
pub(super) fn orders_of(s: &str) -> Result<Vec<Order>, String> {
    if s.is_empty() {
        return Err("the order list is empty: give sorted, random, reverse or partial:P".into());
    }
    let mut v = Vec::new();
    for item in s.split(',') {
        let o = Order::parse(item)?;
        if !v.contains(&o) {
            v.push(o);
        }
    }
    Ok(v)
}

/// `mwm`: the maintenance_work_mem values, each within PostgreSQL's limits.
pub(super) fn mwm_of(s: &str) -> Result<Vec<Size>, String> {
    let v = parse_size_list(s).map_err(|e| e.0)?;
    for m in &v {
        if m.bytes < MWM_MIN {
            return Err(format!("{} is below PostgreSQL's minimum of 1MB", m.text));
        }
        if m.bytes > MWM_MAX {
            return Err(format!(
                "{} is above PostgreSQL's maximum of 2147483647kB (2TB)",
                m.text
            ));
        }
    }
    Ok(v)
}

/// `distribute`: whether the dataset is distributed by `id`.
pub(super) fn distribute_of(s: &str) -> Result<bool, String> {
    match s {
        // Missing from the text form of a run on one server: none.
        "none" | "" => Ok(false),
        "id" => Ok(true),
        other => Err(format!("'{other}' is not one of none, id")),
    }
}

/// `shards`: a shard count, or None for the server's `citus.shard_count`.
pub(super) fn shards_of(s: &str) -> Result<Option<u32>, String> {
    match s {
        "default" | "" => Ok(None),
        n => match n.parse::<u32>() {
            Ok(n) if (1..=64_000).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "'{n}' is not a shard count: give 1..64000, or default for the server's citus.shard_count"
            )),
        },
    }
}

/// Shards need a distributed dataset, and a distributed one cannot be built concurrently.
pub(super) fn check_citus(
    r: &mut FieldReader<'_>,
    distribute: bool,
    shards: Option<u32>,
    concurrently: bool,
) {
    if shards.is_some() && !distribute {
        r.errors.push((
            "shards".into(),
            "a shard count needs distribute = id (a plain table has no shards)".into(),
        ));
    }
    if distribute && concurrently {
        r.errors.push((
            "concurrently".into(),
            "on a distributed table the knobs reach the shards only through SET LOCAL inside a transaction, which CREATE INDEX CONCURRENTLY cannot run in: use concurrently = off with distribute = id".into(),
        ));
    }
}

/// `table`, `column`, `sample` and `writes`: the existing table to build on (None: a
/// generated dataset), checked against `distribute` and `method`.
pub(super) fn own_table_of(
    r: &mut FieldReader<'_>,
    distribute: bool,
    method: IndexMethod,
) -> Option<OwnTable> {
    let params = r.params;
    let raw = |k: &str| params.get(k).cloned().unwrap_or_default();
    let table = match OwnTable::parse(&raw("table"), &raw("column"), &raw("sample")) {
        Ok(t) => t.map(|t| OwnTable {
            writes: raw("writes") == "lab",
            ..t
        }),
        Err(e) => {
            r.errors.push(e);
            None
        }
    };
    if let Some(t) = &table {
        if distribute {
            r.errors.push((
                "distribute".into(),
                "distribute = id works on generated datasets: use none with table".into(),
            ));
        }
        if method == IndexMethod::Hash && t.columns.len() > 1 {
            r.errors.push((
                "column".into(),
                "a hash index has one column: name one, or use method = btree".into(),
            ));
        }
    }
    table
}
