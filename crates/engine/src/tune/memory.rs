//! What a tuned `work_mem` can cost under real concurrency. `work_mem` is per sort or hash node
//! per connection (hash nodes may take `hash_mem_multiplier` times it), so the worst case is
//! `work_mem × (sorts + hashes × hash_mem_multiplier) × max_connections`, plus
//! `shared_buffers`, with the node counts taken from the workload's own plans. A tune measures
//! one connection; this line is the arithmetic for all of them, said beside the result, and
//! a set past `--max-memory` is not recommended.

use serde::{Deserialize, Serialize};

use super::candidates::bytes_of;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::units::format_bytes;

/// The plan nodes that take `work_mem`: sorts (and other tuple stores), and hashes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryNodes {
    pub sorts: usize,
    pub hashes: usize,
}

impl MemoryNodes {
    /// The larger of two counts, node kind by node kind (the plan that uses most).
    pub(crate) fn max(self, o: MemoryNodes) -> MemoryNodes {
        MemoryNodes {
            sorts: self.sorts.max(o.sorts),
            hashes: self.hashes.max(o.hashes),
        }
    }
}

/// The server's values the arithmetic needs, read when the tune starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerMemory {
    pub work_mem: String,
    pub hash_mem_multiplier: f64,
    pub max_connections: u64,
    pub shared_buffers: String,
}

/// The most memory-taking nodes of any one plan in a query run (None: no plans, e.g. another
/// experiment kind, whose statements are pglab's own).
pub(crate) fn nodes_of(report: &RunReport) -> Option<MemoryNodes> {
    let ReportBody::Query(q) = &report.body else {
        return None;
    };
    q.plans
        .iter()
        .map(|p| {
            let mut n = MemoryNodes::default();
            count(&p.plan, &mut n);
            n
        })
        .reduce(MemoryNodes::max)
}

/// Walk an EXPLAIN (FORMAT JSON) tree.
fn count(v: &serde_json::Value, n: &mut MemoryNodes) {
    match v {
        serde_json::Value::Array(a) => a.iter().for_each(|x| count(x, n)),
        serde_json::Value::Object(o) => {
            let strategy = o.get("Strategy").and_then(|s| s.as_str()).unwrap_or("");
            match o.get("Node Type").and_then(|t| t.as_str()) {
                Some("Hash") => n.hashes += 1,
                Some("Aggregate" | "SetOp") if matches!(strategy, "Hashed" | "Mixed") => {
                    n.hashes += 1
                }
                Some("Memoize") => n.hashes += 1,
                Some(
                    "Sort" | "Incremental Sort" | "Materialize" | "WindowAgg" | "Recursive Union"
                    | "Bitmap Index Scan",
                ) => n.sorts += 1,
                _ => {}
            }
            o.values().for_each(|x| count(x, n));
        }
        _ => {}
    }
}

/// The worst case of a set, in bytes, with the line that says how it was reached.
pub(crate) fn worst_case(
    server: &ServerMemory,
    set: &[(String, String)],
    nodes: MemoryNodes,
) -> Option<(u64, String)> {
    let value = |name: &str, now: &str| {
        set.iter()
            .find(|(n, _)| n == name)
            .map_or(now.to_string(), |(_, v)| v.clone())
    };
    let work_mem = value("work_mem", &server.work_mem);
    let shared = value("shared_buffers", &server.shared_buffers);
    let (wm, sb) = (bytes_of(&work_mem)?, bytes_of(&shared)?);
    // A tuned hash_mem_multiplier counts as the set's, like work_mem.
    let hmm = set
        .iter()
        .find(|(n, _)| n == "hash_mem_multiplier")
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .unwrap_or(server.hash_mem_multiplier);
    let per_conn = wm as f64 * (nodes.sorts as f64 + nodes.hashes as f64 * hmm);
    let total = (per_conn * server.max_connections as f64) as u64 + sb;
    let line = format!(
        "work_mem {work_mem} × ({} sort{} + {} hash{} × hash_mem_multiplier {}) × max_connections {} + shared_buffers {shared} = {}",
        nodes.sorts,
        if nodes.sorts == 1 { "" } else { "s" },
        nodes.hashes,
        if nodes.hashes == 1 { "" } else { "es" },
        hmm,
        server.max_connections,
        format_bytes(total)
    );
    Some((total, line))
}

/// The memory line of the report: the worst case against the server's RAM and `--max-memory`,
/// and whether the set is refused for it.
pub(crate) fn verdict(
    server: &ServerMemory,
    set: &[(String, String)],
    nodes: Option<MemoryNodes>,
    ram: u64,
    max_memory: Option<u64>,
) -> (String, bool) {
    let Some(nodes) = nodes else {
        return (
            "memory: the workload's plans were not seen (not a query workload): no worst case computed".into(),
            false,
        );
    };
    let Some((total, line)) = worst_case(server, set, nodes) else {
        return ("memory: the sizes could not be read".into(), false);
    };
    if let Some(cap) = max_memory.filter(|cap| total > *cap) {
        return (
            format!(
                "memory: worst case {line}, past --max-memory {}: the set is not recommended (lower work_mem, or fewer connections through a pooler)",
                format_bytes(cap)
            ),
            true,
        );
    }
    if total > ram {
        return (
            format!(
                "memory: WARNING worst case {line}, past the server's {} RAM: with every connection running this workload's plans at once the server could run out of memory (lower work_mem for most roles and raise it per role or per session, or cap connections with a pooler)",
                format_bytes(ram)
            ),
            false,
        );
    }
    (
        format!(
            "memory: worst case {line}, within the server's {} RAM",
            format_bytes(ram)
        ),
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerMemory {
        ServerMemory {
            work_mem: "4MB".into(),
            hash_mem_multiplier: 2.0,
            max_connections: 100,
            shared_buffers: "128MB".into(),
        }
    }

    #[test]
    fn nodes_are_counted_from_the_plan() {
        let plan = serde_json::json!([{"Plan": {"Node Type": "Sort", "Plans": [
            {"Node Type": "Aggregate", "Strategy": "Hashed", "Plans": [
                {"Node Type": "Hash Join", "Plans": [{"Node Type": "Seq Scan"}, {"Node Type": "Hash", "Plans": [{"Node Type": "Seq Scan"}]}]}
            ]}
        ]}}]);
        let mut n = MemoryNodes::default();
        count(&plan, &mut n);
        assert_eq!(
            n,
            MemoryNodes {
                sorts: 1,
                hashes: 2
            }
        );
    }

    /// 64MB × (1 + 2 × 2.0) × 100 + 128MB = 31.4 GiB: past 16 GB of RAM, a warning; past a
    /// --max-memory of 24GB, a refusal; the current 4MB fits.
    #[test]
    fn the_worst_case_warns_past_ram_and_refuses_past_the_cap() {
        let nodes = Some(MemoryNodes {
            sorts: 1,
            hashes: 2,
        });
        let set = vec![("work_mem".to_string(), "64MB".to_string())];
        let gb = 1u64 << 30;
        let (line, refused) = verdict(&server(), &set, nodes, 16 * gb, None);
        assert!(line.contains("WARNING") && !refused, "{line}");
        assert!(
            line.contains("work_mem 64MB × (1 sort + 2 hashes × hash_mem_multiplier 2)"),
            "{line}"
        );
        let (line, refused) = verdict(&server(), &set, nodes, 64 * gb, Some(24 * gb));
        assert!(refused && line.contains("--max-memory"), "{line}");
        let (line, refused) = verdict(&server(), &[], nodes, 16 * gb, Some(24 * gb));
        assert!(!refused && line.contains("within"), "{line}");
        let (line, _) = verdict(&server(), &set, None, 16 * gb, None);
        assert!(line.contains("not seen"), "{line}");
        // A tuned hash_mem_multiplier is the set's: 64MB × (1 + 2 × 4) × 100 + 128MB.
        let mut with_hmm = set.clone();
        with_hmm.push(("hash_mem_multiplier".into(), "4".into()));
        let (total, line) = worst_case(
            &server(),
            &with_hmm,
            MemoryNodes {
                sorts: 1,
                hashes: 2,
            },
        )
        .unwrap();
        assert!(line.contains("hash_mem_multiplier 4)"), "{line}");
        assert_eq!(total, 64 * (1 << 20) * 9 * 100 + 128 * (1 << 20));
    }
}
