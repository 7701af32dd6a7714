//! Reading a plan: the JSON of `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` (or of a plain
//! `EXPLAIN` for a hypothetical index) turned into what pglab compares and shows — the plan's
//! **fingerprint** (node types, join order, relation and index names; costs, row counts and
//! times stripped, so two executions of one plan have one fingerprint), the spill (temp blocks
//! written, and which nodes wrote them), shared buffers hit and read, JIT time, and the tree
//! as lines for the plan view and the report.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The bytes of a block (PostgreSQL's default `block_size`; the run reads the server's).
pub const DEFAULT_BLOCK: u64 = 8192;

/// One node of a plan as a line of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanLine {
    pub depth: usize,
    /// As EXPLAIN's text form names it: `HashAggregate`, `Index Scan using i on t`.
    pub label: String,
    /// Measured, when there are measurements: `rows 1000 · 12.3 ms · spill 38 MB`; for a
    /// plain EXPLAIN the planner's cost.
    pub detail: String,
    /// The node's place in the plan: the labels from the root down, joined by `/` — what
    /// the plans of two combinations are compared by.
    pub key: String,
    /// This node wrote temp files (a sort, hash or aggregate that did not fit in memory).
    pub spilled: bool,
}

/// What one EXPLAIN said, in the terms pglab compares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanFacts {
    #[serde(rename = "plan_fingerprint")]
    pub fingerprint: String,
    /// Temp bytes written by the whole plan (the spill).
    pub temp_bytes: u64,
    pub temp_blocks_written: u64,
    pub temp_blocks_read: u64,
    pub shared_hit: u64,
    pub shared_read: u64,
    /// JIT's total time in ms (None: no JIT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jit_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planning_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_ms: Option<f64>,
    /// The planner's total cost of the top node.
    pub total_cost: f64,
    /// The nodes that wrote temp files, by label (e.g. `Sort (external merge)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spilled_nodes: Vec<String>,
    pub lines: Vec<PlanLine>,
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A node's name as EXPLAIN's text form writes it.
pub(crate) fn node_label(n: &Value) -> String {
    let ty = text(n, "Node Type").unwrap_or("?");
    let mut name = match ty {
        "Aggregate" => match text(n, "Strategy") {
            Some("Hashed") => "HashAggregate".to_string(),
            Some("Sorted") => "GroupAggregate".to_string(),
            Some("Mixed") => "MixedAggregate".to_string(),
            _ => "Aggregate".to_string(),
        },
        "SetOp" => match text(n, "Strategy") {
            Some("Hashed") => "HashSetOp".to_string(),
            _ => "SetOp".to_string(),
        },
        "ModifyTable" => text(n, "Operation").unwrap_or("ModifyTable").to_string(),
        other => other.to_string(),
    };
    if let Some(mode) = text(n, "Partial Mode").filter(|m| *m != "Simple") {
        name = format!("{mode} {name}");
    }
    if let Some(j) = text(n, "Join Type").filter(|j| *j != "Inner")
        && let Some(stem) = name.strip_suffix(" Join")
    {
        name = format!("{stem} {j} Join");
    } else if let Some(j) = text(n, "Join Type").filter(|j| *j != "Inner")
        && name == "Nested Loop"
    {
        name = format!("Nested Loop {j} Join");
    }
    if let Some(idx) = text(n, "Index Name") {
        if ty == "Bitmap Index Scan" {
            name.push_str(&format!(" on {idx}"));
        } else {
            name.push_str(&format!(" using {idx}"));
        }
    }
    if let Some(rel) = text(n, "Relation Name") {
        name.push_str(&format!(" on {rel}"));
        if let Some(alias) = text(n, "Alias").filter(|a| *a != rel) {
            name.push_str(&format!(" {alias}"));
        }
    } else if let Some(cte) = text(n, "CTE Name") {
        name.push_str(&format!(" on {cte}"));
    } else if let Some(f) = text(n, "Function Name") {
        name.push_str(&format!(" on {f}"));
    }
    if let Some(w) = n.get("Workers Planned").and_then(Value::as_u64) {
        name.push_str(&format!(" ({w} worker{})", if w == 1 { "" } else { "s" }));
    }
    name
}

fn children(n: &Value) -> &[Value] {
    n.get("Plans")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Temp blocks a node wrote itself (its counter includes its children's).
fn own_temp(n: &Value) -> f64 {
    let kids: f64 = children(n)
        .iter()
        .map(|c| num(c, "Temp Written Blocks"))
        .sum();
    (num(n, "Temp Written Blocks") - kids).max(0.0)
}

/// How a spilling node spilled, for its label: `external merge`, `12 batches`.
fn spill_how(n: &Value) -> Option<String> {
    if text(n, "Sort Space Type") == Some("Disk") {
        return Some(text(n, "Sort Method").unwrap_or("on disk").to_string());
    }
    let batches = num(n, "HashAgg Batches").max(num(n, "Hash Batches"));
    if batches > 1.0 {
        return Some(format!("{batches:.0} batches"));
    }
    (own_temp(n) > 0.0).then(|| "temp files".to_string())
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2} s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.3} ms")
    }
}

fn walk(n: &Value, depth: usize, block: u64, out: &mut Vec<PlanLine>, fp: &mut String) {
    let label = node_label(n);
    let start = fp.len();
    let line = out.len();
    let analyzed = n.get("Actual Total Time").is_some();
    let how = spill_how(n);
    let spilled = analyzed && how.is_some() && own_temp(n) > 0.0
        || text(n, "Sort Space Type") == Some("Disk");
    let mut detail = if analyzed {
        let loops = num(n, "Actual Loops").max(1.0);
        let mut d = format!(
            "rows {} · {}",
            crate::measure::units::format_count(num(n, "Actual Rows") * loops),
            // Per loop, as EXPLAIN gives it; rows are all the loops'.
            ms(num(n, "Actual Total Time"))
        );
        if loops > 1.0 {
            d.push_str(&format!(" · {loops:.0} loops"));
        }
        d
    } else {
        format!(
            "cost {:.0} · rows {}",
            num(n, "Total Cost"),
            crate::measure::units::format_count(num(n, "Plan Rows"))
        )
    };
    if spilled {
        let bytes = (own_temp(n) as u64).saturating_mul(block);
        detail.push_str(&format!(
            " · spill {}{}",
            crate::measure::units::format_bytes(bytes),
            how.map(|h| format!(" ({h})")).unwrap_or_default()
        ));
    }
    out.push(PlanLine {
        depth,
        label: label.clone(),
        detail,
        key: String::new(),
        spilled,
    });
    fp.push_str(&label);
    let kids = children(n);
    if !kids.is_empty() {
        fp.push('(');
        for (i, c) in kids.iter().enumerate() {
            if i > 0 {
                fp.push_str(", ");
            }
            walk(c, depth + 1, block, out, fp);
        }
        fp.push(')');
    }
    out[line].key = fp[start..].to_string();
}

/// Read an EXPLAIN's JSON (the array it returns, or its first element). `block` is the
/// server's block size. Err: a sentence when the JSON is not a plan.
pub fn read(json: &Value, block: u64) -> Result<PlanFacts, String> {
    let top = match json {
        Value::Array(a) => a.first().unwrap_or(&Value::Null),
        other => other,
    };
    let plan = top
        .get("Plan")
        .ok_or("EXPLAIN returned no plan (is the statement one that has a plan?)")?;
    let mut lines = Vec::new();
    let mut fingerprint = String::new();
    walk(plan, 0, block, &mut lines, &mut fingerprint);
    let temp_written = num(plan, "Temp Written Blocks") as u64;
    // Each spilling node once, with how many there are (a sort under a Gather runs in every
    // worker).
    let mut spilled_nodes: Vec<String> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for l in lines.iter().filter(|l| l.spilled) {
        let how = l
            .detail
            .rsplit_once(" (")
            .map(|(_, h)| format!(" ({h}"))
            .unwrap_or_default();
        let name = format!("{}{how}", l.label);
        match spilled_nodes.iter().position(|n| *n == name) {
            Some(i) => counts[i] += 1,
            None => {
                spilled_nodes.push(name);
                counts.push(1);
            }
        }
    }
    for (n, c) in spilled_nodes.iter_mut().zip(&counts) {
        if *c > 1 {
            n.push_str(&format!(" ×{c}"));
        }
    }
    Ok(PlanFacts {
        fingerprint,
        temp_bytes: temp_written.saturating_mul(block),
        temp_blocks_written: temp_written,
        temp_blocks_read: num(plan, "Temp Read Blocks") as u64,
        shared_hit: num(plan, "Shared Hit Blocks") as u64,
        shared_read: num(plan, "Shared Read Blocks") as u64,
        jit_ms: top
            .get("JIT")
            .and_then(|j| j.get("Timing"))
            .and_then(|t| t.get("Total"))
            .and_then(Value::as_f64),
        planning_ms: top.get("Planning Time").and_then(Value::as_f64),
        execution_ms: top.get("Execution Time").and_then(Value::as_f64),
        total_cost: num(plan, "Total Cost"),
        spilled_nodes,
        lines,
    })
}

/// The node labels of a plan, counted, for saying what changed: in `a` and not `b`.
pub(crate) fn only_in<'a>(a: &'a [PlanLine], b: &[PlanLine]) -> Vec<&'a str> {
    let mut rest: Vec<&str> = b.iter().map(|l| l.label.as_str()).collect();
    let mut out = Vec::new();
    for l in a {
        match rest.iter().position(|x| *x == l.label) {
            Some(i) => {
                rest.remove(i);
            }
            None => out.push(l.label.as_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sort_group(spill: bool, rows: f64) -> Value {
        json!([{
            "Plan": {
                "Node Type": "Aggregate", "Strategy": "Sorted", "Total Cost": 100.0,
                "Actual Total Time": 50.0, "Actual Rows": rows, "Actual Loops": 1,
                "Shared Hit Blocks": 10, "Shared Read Blocks": 5,
                "Temp Written Blocks": if spill { 100 } else { 0 },
                "Plans": [{
                    "Node Type": "Sort", "Parent Relationship": "Outer",
                    "Sort Method": if spill { "external merge" } else { "quicksort" },
                    "Sort Space Type": if spill { "Disk" } else { "Memory" },
                    "Actual Total Time": 40.0, "Actual Rows": 1000, "Actual Loops": 1,
                    "Temp Written Blocks": if spill { 100 } else { 0 },
                    "Plans": [{
                        "Node Type": "Seq Scan", "Relation Name": "t", "Alias": "t",
                        "Actual Total Time": 5.0, "Actual Rows": 1000, "Actual Loops": 1
                    }]
                }]
            },
            "Planning Time": 0.1, "Execution Time": 51.0,
            "JIT": {"Functions": 3, "Timing": {"Total": 12.5}}
        }])
    }

    #[test]
    fn fingerprints_strip_numbers_and_keep_shape() {
        let a = read(&sort_group(true, 10.0), DEFAULT_BLOCK).unwrap();
        let b = read(&sort_group(false, 20.0), DEFAULT_BLOCK).unwrap();
        assert_eq!(a.fingerprint, "GroupAggregate(Sort(Seq Scan on t))");
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!(a.temp_bytes, 100 * 8192);
        assert_eq!(b.temp_bytes, 0);
        assert_eq!(a.spilled_nodes, ["Sort (external merge)"]);
        assert!(b.spilled_nodes.is_empty());
        assert_eq!((a.shared_hit, a.shared_read), (10, 5));
        assert_eq!(a.jit_ms, Some(12.5));
        assert_eq!(a.lines.len(), 3);
        assert_eq!(a.lines[2].key, "Seq Scan on t");
        assert_eq!(a.lines[1].key, "Sort(Seq Scan on t)");
        assert_eq!(a.lines[0].key, a.fingerprint);
        assert!(
            a.lines[1].detail.contains("spill 800 kB (external merge)"),
            "{}",
            a.lines[1].detail
        );
    }

    #[test]
    fn labels_read_like_explain_text() {
        let n = json!({"Node Type": "Index Scan", "Index Name": "t_a_idx", "Relation Name": "t", "Alias": "x"});
        assert_eq!(node_label(&n), "Index Scan using t_a_idx on t x");
        let n = json!({"Node Type": "Hash Join", "Join Type": "Left"});
        assert_eq!(node_label(&n), "Hash Left Join");
        let n = json!({"Node Type": "Aggregate", "Strategy": "Hashed", "Partial Mode": "Partial"});
        assert_eq!(node_label(&n), "Partial HashAggregate");
        let n = json!({"Node Type": "Gather", "Workers Planned": 2});
        assert_eq!(node_label(&n), "Gather (2 workers)");
        let n = json!({"Node Type": "Gather", "Workers Planned": 1});
        assert_eq!(node_label(&n), "Gather (1 worker)");
        let n = json!({"Node Type": "Bitmap Index Scan", "Index Name": "i"});
        assert_eq!(node_label(&n), "Bitmap Index Scan on i");
        assert!(read(&json!([{}]), 8192).is_err());
    }

    #[test]
    fn what_changed_between_two_plans() {
        let a = read(&sort_group(false, 1.0), DEFAULT_BLOCK).unwrap();
        let hashed = json!([{"Plan": {"Node Type": "Aggregate", "Strategy": "Hashed",
            "Plans": [{"Node Type": "Seq Scan", "Relation Name": "t"}]}}]);
        let b = read(&hashed, DEFAULT_BLOCK).unwrap();
        assert_eq!(only_in(&b.lines, &a.lines), ["HashAggregate"]);
        assert_eq!(only_in(&a.lines, &b.lines), ["GroupAggregate", "Sort"]);
        assert!(b.lines[0].detail.starts_with("cost 0"));
    }
}
