//! From the plans to the settings worth measuring. What one analyzed plan per statement says
//! ([`super::plan_facts`]) decides, setting by setting, whether a configuration can gain and
//! which values to try: `work_mem` and `hash_mem_multiplier` sized to the spills and batches
//! seen (a sort's disk use, a hash's peak memory times its batches), `jit` when JIT takes a
//! share of the time, the parallel settings when workers were planned, `shared_buffers` when
//! reads from outside it dominate, `effective_io_concurrency` when a bitmap heap scan read
//! blocks. The planner-only settings (`random_page_cost`, `effective_cache_size`, the
//! `enable_*` and cost settings, and the workers per gather, whose effect is the workers a
//! plan asks for) are checked with a plain `EXPLAIN` of every value first
//! ([`super::plan_check`]); their values go both ways from the one in effect (a smaller
//! `effective_cache_size` or a larger `random_page_cost` can flip a plan too).

use serde::{Deserialize, Serialize};

use super::candidates::{bytes_of, dba_size, same_value};
use super::plan_facts::{PlanFacts, SpillKind};

const MB: u64 = 1 << 20;
/// JIT's share of the execution time from which `jit` is tried.
pub(crate) const JIT_SHARE: f64 = 0.05;
/// The share of shared blocks read from outside shared_buffers from which it is tried.
pub(crate) const READ_SHARE: f64 = 0.5;

/// What the plans say of a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Measure it: the plans show where it acts.
    Try,
    /// A planner-only setting: each value is measured only if a plain EXPLAIN shows it
    /// changing a plan.
    PlanCheck,
    /// Not measured: the plans show nothing it acts on.
    Skip,
}

/// A setting's advice: the verdict, why, and values the plans size (added to its own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    pub setting: String,
    pub verdict: Verdict,
    pub why: String,
    #[serde(default)]
    pub values: Vec<String>,
}

/// Settings the planner reads and the executor does not: a value that leaves every plan as
/// it was cannot change the time.
pub(crate) fn planner_only(name: &str) -> bool {
    matches!(
        name,
        "random_page_cost"
            | "seq_page_cost"
            | "effective_cache_size"
            | "cpu_tuple_cost"
            | "cpu_index_tuple_cost"
            | "cpu_operator_cost"
            | "parallel_setup_cost"
            | "parallel_tuple_cost"
            | "min_parallel_table_scan_size"
            | "min_parallel_index_scan_size"
            | "from_collapse_limit"
            | "join_collapse_limit"
            | "max_parallel_workers_per_gather"
    ) || name.starts_with("enable_")
}

/// The advice for `name` (whose value in effect is `current`) from every statement's plan.
pub fn advise(name: &str, current: &str, facts: &[PlanFacts]) -> Advice {
    let (verdict, why, values) = match name {
        "work_mem" => work_mem(current, facts),
        "hash_mem_multiplier" => hash_mem(current, facts),
        "jit" => jit(current, facts),
        "shared_buffers" => reads(facts, "shared_buffers"),
        "effective_io_concurrency" => bitmap(facts),
        "random_page_cost" => (
            Verdict::PlanCheck,
            "planner-only: each value measured only if EXPLAIN shows it changing a plan".into(),
            both_ways_number(current, &[1.1, 2.0, 8.0]),
        ),
        "effective_cache_size" => (
            Verdict::PlanCheck,
            "planner-only: each value measured only if EXPLAIN shows it changing a plan".into(),
            both_ways_size(current),
        ),
        "max_parallel_workers_per_gather" => workers(facts),
        n if planner_only(n) => (
            Verdict::PlanCheck,
            "planner-only: each value measured only if EXPLAIN shows it changing a plan".into(),
            Vec::new(),
        ),
        _ => (
            Verdict::Try,
            "the plans do not show where it acts: kept as a candidate".into(),
            Vec::new(),
        ),
    };
    Advice {
        setting: name.to_string(),
        verdict,
        why,
        values: values
            .into_iter()
            .filter(|v| !same_value(v, current))
            .collect(),
    }
}

type Said = (Verdict, String, Vec<String>);

/// Memory a spill would have needed to fit: a sort about three times its disk use (an
/// in-memory sort keeps tuples with their overhead), a hash its peak memory times its
/// batches, a hash aggregate its peak memory and twice what it wrote.
fn needed(facts: &[PlanFacts], kinds: &[SpillKind]) -> u64 {
    facts
        .iter()
        .flat_map(|f| &f.spills)
        .filter(|s| kinds.contains(&s.kind))
        .map(|s| match s.kind {
            SpillKind::Sort => s.disk_bytes.saturating_mul(3),
            SpillKind::Hash => s.memory_bytes.max(MB).saturating_mul(s.batches.max(1)),
            SpillKind::HashAgg => s.memory_bytes + s.disk_bytes.saturating_mul(2),
        })
        .max()
        .unwrap_or(0)
}

fn spills_text(facts: &[PlanFacts], kinds: &[SpillKind]) -> Vec<String> {
    facts
        .iter()
        .flat_map(|f| f.spills.iter().map(move |s| (f, s)))
        .filter(|(_, s)| kinds.contains(&s.kind))
        .map(|(f, s)| {
            let batches = if s.batches > 1 {
                format!(" in {} batches", s.batches)
            } else {
                String::new()
            };
            format!(
                "{} of {} spilled {}{batches}",
                s.node,
                f.statement,
                crate::measure::units::format_bytes(s.disk_bytes)
            )
        })
        .collect()
}

fn work_mem(current: &str, facts: &[PlanFacts]) -> Said {
    let all = [SpillKind::Sort, SpillKind::Hash, SpillKind::HashAgg];
    let need = needed(facts, &all);
    if need == 0 {
        return (
            Verdict::Skip,
            "no sort or hash spilled: more work_mem changes nothing these plans do".into(),
            Vec::new(),
        );
    }
    let now = bytes_of(current).unwrap_or(4 * MB);
    let sized = need.next_power_of_two().max(now * 2).min(4 << 30);
    (
        Verdict::Try,
        format!(
            "{}: sized to fit ({} needed)",
            spills_text(facts, &all).join("; "),
            crate::measure::units::format_bytes(need)
        ),
        vec![dba_size(sized)],
    )
}

fn hash_mem(current: &str, facts: &[PlanFacts]) -> Said {
    let kinds = [SpillKind::Hash, SpillKind::HashAgg];
    let batches = facts
        .iter()
        .flat_map(|f| &f.spills)
        .filter(|s| kinds.contains(&s.kind))
        .map(|s| s.batches.max(2))
        .max();
    let Some(batches) = batches else {
        return (
            Verdict::Skip,
            "no hash spilled: hash_mem_multiplier changes nothing these plans do".into(),
            Vec::new(),
        );
    };
    let now: f64 = current.parse().unwrap_or(2.0);
    let sized = (now * batches as f64).min(1000.0).ceil();
    (
        Verdict::Try,
        format!(
            "{}: a hash's memory is work_mem × hash_mem_multiplier, sized to hold its batches in one",
            spills_text(facts, &kinds).join("; ")
        ),
        vec![format!("{sized}")],
    )
}

fn jit(current: &str, facts: &[PlanFacts]) -> Said {
    let (jit, exec): (f64, f64) = facts
        .iter()
        .fold((0.0, 0.0), |(j, e), f| (j + f.jit_ms, e + f.execution_ms));
    let share = if exec > 0.0 { jit / exec } else { 0.0 };
    if current == "off" {
        return (
            Verdict::Try,
            "off now: on may gain on long aggregates".into(),
            Vec::new(),
        );
    }
    if share >= JIT_SHARE {
        (
            Verdict::Try,
            format!(
                "JIT took {:.0} ms, {:.0}% of the execution time",
                jit,
                share * 100.0
            ),
            vec!["off".into()],
        )
    } else {
        (
            Verdict::Skip,
            format!(
                "JIT took {:.0} ms, {:.1}% of the execution time (under {:.0}%): off gains at most that",
                jit,
                share * 100.0,
                JIT_SHARE * 100.0
            ),
            Vec::new(),
        )
    }
}

fn reads(facts: &[PlanFacts], name: &str) -> Said {
    let (read, all) = facts.iter().fold((0u64, 0u64), |(r, a), f| {
        (r + f.shared_read, a + f.shared_read + f.shared_hit)
    });
    let share = if all > 0 {
        read as f64 / all as f64
    } else {
        0.0
    };
    let said = format!(
        "{:.0}% of {all} shared blocks were read from outside shared_buffers",
        share * 100.0
    );
    if share >= READ_SHARE {
        (Verdict::Try, format!("{said}: reads dominate"), Vec::new())
    } else {
        (
            Verdict::Skip,
            format!("{said}: the data is in shared_buffers already, so {name} cannot gain here"),
            Vec::new(),
        )
    }
}

fn bitmap(facts: &[PlanFacts]) -> Said {
    if facts.iter().any(|f| f.bitmap_heap_reads) {
        (
            Verdict::Try,
            "a bitmap heap scan read blocks (the reads it prefetches)".into(),
            Vec::new(),
        )
    } else {
        (
            Verdict::Skip,
            "no bitmap heap scan read blocks: it prefetches for nothing these plans do".into(),
            Vec::new(),
        )
    }
}

fn workers(facts: &[PlanFacts]) -> Said {
    let (planned, launched) = facts.iter().fold((0, 0), |(p, l), f| {
        (p + f.workers_planned, l + f.workers_launched)
    });
    let why = if planned > 0 {
        format!(
            "{planned} parallel workers planned, {launched} launched; each value measured only if EXPLAIN shows it changing a plan"
        )
    } else {
        "no parallel workers planned: each value measured only if EXPLAIN shows it changing a plan"
            .into()
    };
    (Verdict::PlanCheck, why, Vec::new())
}

/// A number setting's values on both sides of `current` (from `around`).
fn both_ways_number(current: &str, around: &[f64]) -> Vec<String> {
    let now: f64 = current.parse().unwrap_or(4.0);
    around
        .iter()
        .filter(|x| (**x - now).abs() > 1e-9)
        .map(|x| format!("{x}"))
        .collect()
}

/// A size setting's values on both sides: a quarter and a sixteenth of `current` (a smaller
/// cache estimate makes index scans look dearer, which can flip a plan).
fn both_ways_size(current: &str) -> Vec<String> {
    let Some(now) = bytes_of(current) else {
        return Vec::new();
    };
    [now / 4, now / 16]
        .into_iter()
        .filter(|b| *b >= 8 * MB)
        .map(dba_size)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::plan_facts::Spill;

    fn facts(spills: Vec<Spill>, jit_ms: f64) -> PlanFacts {
        PlanFacts {
            statement: "q".into(),
            execution_ms: 1000.0,
            jit_ms,
            spills,
            shared_hit: 900,
            shared_read: 100,
            ..PlanFacts::default()
        }
    }

    #[test]
    fn spills_size_work_mem_and_batches_size_hash_mem_multiplier() {
        let hash = Spill {
            kind: SpillKind::Hash,
            node: "Hash".into(),
            disk_bytes: 40 * MB,
            memory_bytes: 7 * MB,
            batches: 8,
            original_batches: 4,
        };
        let f = [facts(vec![hash], 0.0)];
        let w = advise("work_mem", "4MB", &f);
        assert_eq!(w.verdict, Verdict::Try);
        assert_eq!(w.values, vec!["64MB".to_string()], "{w:?}");
        let h = advise("hash_mem_multiplier", "2", &f);
        assert_eq!(h.values, vec!["16".to_string()], "{h:?}");
        let none = [facts(Vec::new(), 0.0)];
        assert_eq!(advise("work_mem", "4MB", &none).verdict, Verdict::Skip);
        assert_eq!(
            advise("hash_mem_multiplier", "2", &none).verdict,
            Verdict::Skip
        );
    }

    #[test]
    fn jit_is_tried_only_when_it_takes_a_share_and_reads_decide_shared_buffers() {
        let heavy = [facts(Vec::new(), 300.0)];
        let j = advise("jit", "on", &heavy);
        assert_eq!(
            (j.verdict, j.values.clone()),
            (Verdict::Try, vec!["off".into()])
        );
        let light = [facts(Vec::new(), 10.0)];
        assert_eq!(advise("jit", "on", &light).verdict, Verdict::Skip);
        assert_eq!(
            advise("shared_buffers", "128MB", &light).verdict,
            Verdict::Skip
        );
    }

    #[test]
    fn planner_settings_go_both_ways() {
        let f = [facts(Vec::new(), 0.0)];
        let e = advise("effective_cache_size", "4GB", &f);
        assert_eq!(e.verdict, Verdict::PlanCheck);
        assert_eq!(e.values, vec!["1GB".to_string(), "256MB".to_string()]);
        let r = advise("random_page_cost", "4", &f);
        assert!(r.values.contains(&"8".to_string()) && r.values.contains(&"1.1".to_string()));
        assert!(planner_only("enable_hashjoin") && !planner_only("work_mem"));
    }
}
