//! What one `EXPLAIN (ANALYZE, BUFFERS, SETTINGS, FORMAT JSON)` of a statement says to a
//! tuner, as typed facts: the share of the time JIT took, the sorts and hashes that spilled
//! (how much, in how many batches, with how much memory), the parallel workers planned and
//! launched, the blocks read against those found in shared_buffers, the worst row estimate,
//! the settings the plan ran with, and the plan's shape (its fingerprint: two plans with one
//! shape run the same way). [`super::plan_advice`] turns them into the settings worth trying.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of node spilled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpillKind {
    /// A sort on disk (`external merge`, `external sort`).
    Sort,
    /// A hash join's hash table in more than one batch.
    Hash,
    /// A hash aggregate that wrote batches to disk.
    HashAgg,
}

/// A sort or hash that did not fit in memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spill {
    pub kind: SpillKind,
    /// The node, as EXPLAIN names it.
    pub node: String,
    /// What it wrote to disk, bytes (a sort's space used; a hash aggregate's disk usage; a
    /// hash's temp blocks when reported).
    pub disk_bytes: u64,
    /// Its peak memory, bytes (0 when EXPLAIN does not say).
    pub memory_bytes: u64,
    /// Batches (hashes): the final count, and the count planned at first.
    pub batches: u64,
    pub original_batches: u64,
}

/// A node whose row estimate was furthest from the rows it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Misestimate {
    pub node: String,
    pub planned: f64,
    pub actual: f64,
}

impl Misestimate {
    /// How far off, as a factor ≥ 1 (either direction).
    pub(crate) fn factor(&self) -> f64 {
        let (p, a) = (self.planned.max(1.0), self.actual.max(1.0));
        (p / a).max(a / p)
    }
}

/// One statement's analyzed plan, read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanFacts {
    pub statement: String,
    /// The plan's shape (node types, join order, relations, indexes, workers planned).
    pub fingerprint: String,
    pub execution_ms: f64,
    /// JIT's total time (generation, inlining, optimization, emission), ms; 0 without JIT.
    pub jit_ms: f64,
    pub spills: Vec<Spill>,
    pub workers_planned: u64,
    pub workers_launched: u64,
    /// Shared blocks found in shared_buffers, and read from outside it.
    pub shared_hit: u64,
    pub shared_read: u64,
    /// A bitmap heap scan read blocks (the one node `effective_io_concurrency` prefetches
    /// for in PostgreSQL 15).
    pub bitmap_heap_reads: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_estimate: Option<Misestimate>,
    /// The settings EXPLAIN's SETTINGS option listed (those that differ from the defaults).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// Why an EXPLAIN's JSON could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    #[error("EXPLAIN returned no plan")]
    NoPlan,
    #[error("the plan was not analyzed (no execution time): run EXPLAIN ANALYZE")]
    NotAnalyzed,
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn children(n: &Value) -> &[Value] {
    n.get("Plans")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

const KB: u64 = 1024;

impl PlanFacts {
    /// Read the JSON EXPLAIN returned (its array, or the array's first element); `block` is
    /// the server's block size.
    pub fn read(statement: &str, json: &Value, block: u64) -> Result<PlanFacts, ReadError> {
        let top = match json {
            Value::Array(a) => a.first().unwrap_or(&Value::Null),
            other => other,
        };
        let plan = top.get("Plan").ok_or(ReadError::NoPlan)?;
        let execution_ms = top
            .get("Execution Time")
            .and_then(Value::as_f64)
            .ok_or(ReadError::NotAnalyzed)?;
        let shape =
            crate::experiment::query::plan::read(json, block).map_err(|_| ReadError::NoPlan)?;
        let mut facts = PlanFacts {
            statement: statement.to_string(),
            fingerprint: shape.fingerprint,
            execution_ms,
            jit_ms: top
                .pointer("/JIT/Timing/Total")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            shared_hit: num(plan, "Shared Hit Blocks") as u64,
            shared_read: num(plan, "Shared Read Blocks") as u64,
            settings: top
                .get("Settings")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default(),
            ..PlanFacts::default()
        };
        facts.walk(plan, block);
        Ok(facts)
    }

    fn walk(&mut self, n: &Value, block: u64) {
        let label = crate::experiment::query::plan::node_label(n);
        if let Some(s) = spill_of(n, &label, block) {
            self.spills.push(s);
        }
        self.workers_planned += num(n, "Workers Planned") as u64;
        self.workers_launched += num(n, "Workers Launched") as u64;
        if text(n, "Node Type") == Some("Bitmap Heap Scan") && num(n, "Shared Read Blocks") > 0.0 {
            self.bitmap_heap_reads = true;
        }
        let loops = num(n, "Actual Loops").max(1.0);
        let m = Misestimate {
            node: label,
            planned: num(n, "Plan Rows") * loops,
            actual: num(n, "Actual Rows") * loops,
        };
        if n.get("Actual Rows").is_some()
            && self
                .worst_estimate
                .as_ref()
                .is_none_or(|w| m.factor() > w.factor())
        {
            self.worst_estimate = Some(m);
        }
        for c in children(n) {
            self.walk(c, block);
        }
    }

    /// JIT's share of the execution time (0..=1).
    pub fn jit_share(&self) -> f64 {
        if self.execution_ms > 0.0 {
            (self.jit_ms / self.execution_ms).min(1.0)
        } else {
            0.0
        }
    }

    /// The share of shared blocks read from outside shared_buffers (0..=1; 0 with none).
    pub(crate) fn read_share(&self) -> f64 {
        let all = self.shared_hit + self.shared_read;
        if all == 0 {
            0.0
        } else {
            self.shared_read as f64 / all as f64
        }
    }

    /// What the plan showed, in a sentence of facts.
    pub fn sentence(&self) -> String {
        let fmt = crate::measure::units::format_bytes;
        let mut parts = vec![format!("{:.0} ms", self.execution_ms)];
        if self.jit_ms > 0.0 {
            parts.push(format!(
                "JIT {:.0} ms ({:.0}% of it)",
                self.jit_ms,
                self.jit_share() * 100.0
            ));
        }
        for s in &self.spills {
            let mut t = format!("{} spilled {}", s.node, fmt(s.disk_bytes));
            if s.batches > 1 {
                t.push_str(&format!(" in {} batches", s.batches));
                if s.original_batches > 0 && s.original_batches != s.batches {
                    t.push_str(&format!(" (planned {})", s.original_batches));
                }
            }
            if s.memory_bytes > 0 {
                t.push_str(&format!(", {} in memory", fmt(s.memory_bytes)));
            }
            parts.push(t);
        }
        if self.spills.is_empty() {
            parts.push("no sort or hash spilled".into());
        }
        if self.workers_planned > 0 {
            parts.push(format!(
                "{} parallel worker{} planned, {} launched",
                self.workers_planned,
                if self.workers_planned == 1 { "" } else { "s" },
                self.workers_launched
            ));
        }
        parts.push(format!(
            "{:.0}% of {} blocks read from outside shared_buffers",
            self.read_share() * 100.0,
            self.shared_hit + self.shared_read
        ));
        if let Some(w) = self.worst_estimate.as_ref().filter(|w| w.factor() >= 10.0) {
            parts.push(format!(
                "row estimate ×{:.0} off at {} ({:.0} planned, {:.0} returned)",
                w.factor(),
                w.node,
                w.planned,
                w.actual
            ));
        }
        format!("{}: {}", self.statement, parts.join("; "))
    }
}

/// A node that spilled, read from its own counters.
fn spill_of(n: &Value, label: &str, block: u64) -> Option<Spill> {
    let node = label.to_string();
    match text(n, "Node Type") {
        Some("Sort" | "Incremental Sort") if text(n, "Sort Space Type") == Some("Disk") => {
            Some(Spill {
                kind: SpillKind::Sort,
                node,
                disk_bytes: num(n, "Sort Space Used") as u64 * KB,
                memory_bytes: 0,
                batches: 0,
                original_batches: 0,
            })
        }
        Some("Hash") if num(n, "Hash Batches") > 1.0 => Some(Spill {
            kind: SpillKind::Hash,
            node,
            disk_bytes: num(n, "Temp Written Blocks") as u64 * block,
            memory_bytes: num(n, "Peak Memory Usage") as u64 * KB,
            batches: num(n, "Hash Batches") as u64,
            original_batches: num(n, "Original Hash Batches") as u64,
        }),
        Some("Aggregate" | "SetOp")
            if num(n, "HashAgg Batches") > 1.0 || num(n, "Disk Usage") > 0.0 =>
        {
            Some(Spill {
                kind: SpillKind::HashAgg,
                node,
                disk_bytes: num(n, "Disk Usage") as u64 * KB,
                memory_bytes: num(n, "Peak Memory Usage") as u64 * KB,
                batches: num(n, "HashAgg Batches") as u64,
                original_batches: 0,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plain_explain_is_not_read_as_facts() {
        let plain =
            json!([{"Plan": {"Node Type": "Seq Scan", "Relation Name": "t", "Plan Rows": 10}}]);
        assert_eq!(
            PlanFacts::read("q", &plain, 8192),
            Err(ReadError::NotAnalyzed)
        );
        assert_eq!(
            PlanFacts::read("q", &json!([{}]), 8192),
            Err(ReadError::NoPlan)
        );
    }
}
