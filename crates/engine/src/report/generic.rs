//! Rendering a report body that has no format of its own yet, from its JSON: every array of
//! objects (`trials`, `steps`, …) becomes a table whose columns are the objects' scalar
//! fields, and a `summary`'s `findings` and `confounders` become lists. New experiments show
//! up readably without any code here.

use serde_json::{Map, Value};

use super::grid::Grid;
use crate::experiment::ReportBody;

#[derive(Debug, Default)]
pub struct GenericBody {
    pub grids: Vec<Grid>,
    pub findings: Vec<String>,
    pub confounders: Vec<String>,
}

/// A number as people read it: integers whole, other values to 4 significant digits.
pub fn number(v: &serde_json::Number) -> String {
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
pub fn scalar(v: &Value) -> Option<String> {
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

/// A table from an array of objects: one column per scalar field, in first-seen order.
pub fn grid_of(title: &str, items: &[Value]) -> Option<Grid> {
    let objects: Vec<&Map<String, Value>> = items.iter().filter_map(Value::as_object).collect();
    if objects.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = Vec::new();
    let mut numeric: Vec<bool> = Vec::new();
    for o in &objects {
        for (k, v) in *o {
            if scalar(v).is_none() {
                continue;
            }
            match columns.iter().position(|c| c == k) {
                Some(i) => numeric[i] &= v.is_number() || v.is_null(),
                None => {
                    columns.push(k.clone());
                    numeric.push(v.is_number());
                }
            }
        }
    }
    let rows = objects
        .iter()
        .map(|o| {
            columns
                .iter()
                .map(|c| o.get(c).and_then(scalar).unwrap_or_default())
                .collect()
        })
        .collect();
    Some(Grid {
        title: title.to_string(),
        headers: columns,
        numeric,
        rows,
    })
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn body(body: &ReportBody) -> GenericBody {
    let mut out = GenericBody::default();
    let Ok(Value::Object(obj)) = serde_json::to_value(body) else {
        return out;
    };
    for (key, value) in &obj {
        if key == "experiment" || key == "params" {
            continue;
        }
        match value {
            Value::Array(items) => {
                if let Some(g) = grid_of(key, items) {
                    out.grids.push(g);
                }
            }
            Value::Object(summary) => {
                out.findings.extend(strings(summary.get("findings")));
                out.confounders.extend(strings(summary.get("confounders")));
                let mut scalars = Grid::new(key, &[("field", false), ("value", true)]);
                for (k, v) in summary {
                    if k == "findings" || k == "confounders" {
                        continue;
                    }
                    match v {
                        Value::Array(items) if items.iter().any(Value::is_object) => {
                            if let Some(g) = grid_of(&format!("{key}: {k}"), items) {
                                out.grids.push(g);
                            }
                        }
                        other => {
                            if let Some(s) = scalar(other) {
                                scalars.rows.push(vec![k.clone(), s]);
                            }
                        }
                    }
                }
                if !scalars.rows.is_empty() {
                    out.grids.push(scalars);
                }
            }
            _ => {}
        }
    }
    out
}

/// The rows of a body's main array (`trials`, else `steps`, else the first array of objects)
/// as flat JSON objects: nested objects become `parent.child` keys. For CSV.
pub fn flat_rows(body: &ReportBody) -> Vec<Map<String, Value>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_of_objects_become_tables() {
        let items: Vec<Value> = serde_json::from_str(
            r#"[{"batch": 1, "rows_per_s": 812.345, "method": "insert", "lat": {"p50": 1}},
                {"batch": 16, "rows_per_s": 9120.5, "method": "insert", "extra": true}]"#,
        )
        .unwrap();
        let g = grid_of("trials", &items).unwrap();
        // serde_json maps are sorted: columns come alphabetically, then fields seen later.
        assert_eq!(g.headers, ["batch", "method", "rows_per_s", "extra"]);
        assert_eq!(g.rows[0], ["1", "insert", "812.3", ""]);
        assert_eq!(g.rows[1], ["16", "insert", "9120", "yes"]);
        assert_eq!(g.numeric, [true, false, true, false]);
    }
}
