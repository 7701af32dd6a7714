//! A report body read from its JSON, for the CSV export: numbers and scalars as people read
//! them, and every array of objects flattened into rows.

use serde_json::{Map, Value};

use crate::experiment::ReportBody;

/// A number as people read it: integers whole, other values to 4 significant digits.
pub(crate) fn number(v: &serde_json::Number) -> String {
    if let Some(i) = v.as_i64() {
        return i.to_string();
    }
    if let Some(u) = v.as_u64() {
        return u.to_string();
    }
    let f = v.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() {
        return "–".into();
    }
    if f == f.trunc() && f.abs() < 1e15 {
        return format!("{f:.0}");
    }
    let digits = if f.abs() >= 1000.0 {
        0
    } else {
        (3 - f.abs().log10().floor() as i32).clamp(0, 6) as usize
    };
    format!("{f:.digits$}")
}

/// A scalar as a cell; None for arrays and objects.
pub(crate) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        Value::Number(n) => Some(number(n)),
        Value::String(s) => Some(s.clone()),
        Value::Array(a) if a.iter().all(|x| !x.is_array() && !x.is_object()) => {
            Some(a.iter().filter_map(scalar).collect::<Vec<_>>().join(","))
        }
        _ => None,
    }
}

/// The rows of a body's main array (`trials`, else `steps`, else the first array of objects)
/// as flat JSON objects: nested objects become `parent.child` keys. For CSV.
pub(crate) fn flat_rows(body: &ReportBody) -> Vec<Map<String, Value>> {
    let Ok(Value::Object(obj)) = serde_json::to_value(body) else {
        return Vec::new();
    };
    let pick = ["trials", "steps"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_array))
        .or_else(|| {
            obj.values()
                .filter_map(Value::as_array)
                .find(|a| a.iter().any(Value::is_object))
        });
    let Some(items) = pick else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_object)
        .map(|o| {
            let mut flat = Map::new();
            flatten_into("", o, &mut flat);
            flat
        })
        .collect()
}

fn flatten_into(prefix: &str, o: &Map<String, Value>, out: &mut Map<String, Value>) {
    for (k, v) in o {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) => flatten_into(&key, inner, out),
            other => {
                out.insert(key, other.clone());
            }
        }
    }
}
