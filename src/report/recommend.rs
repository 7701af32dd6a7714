//! The recommendation: evidence, not a formula. It says which setting was fastest on this host
//! and data, by how much, what was within noise of it, and gives the `SET` line to apply it.

use crate::experiment::index_build::{IndexBuildReport, MwmStat};
use crate::experiment::{Outcome, RunReport};
use crate::history::compare::SINGLE_RUN_NOISE;
use crate::measure::units::{format_bytes, format_count, format_seconds};

/// One recommendation: a sentence of evidence and the SQL that applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub text: String,
    pub sql: Vec<String>,
}

fn noise(m: &MwmStat) -> f64 {
    if m.n > 1 {
        m.max - m.min
    } else {
        m.median * SINGLE_RUN_NOISE
    }
}

fn median_of(m: &MwmStat) -> String {
    if m.n > 1 {
        format!("{}, median of {}", format_seconds(m.median), m.n)
    } else {
        format!("{}, one build", format_seconds(m.median))
    }
}

pub fn index_build_recommendations(
    report: &RunReport,
    b: &IndexBuildReport,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    let many_workers = b.params.workers.len() > 1;
    for order in &b.params.orders {
        // The fastest (memory, workers) for this order over all worker counts.
        let mut best: Option<(u32, &MwmStat)> = None;
        let mut measured = 0;
        for g in b.summary.groups.iter().filter(|g| g.order == *order) {
            for m in &g.by_mwm {
                measured += 1;
                if best.is_none_or(|(_, bm)| m.median < bm.median) {
                    best = Some((g.workers, m));
                }
            }
        }
        let Some((workers, best)) = best else {
            continue;
        };
        if measured < 2 {
            continue;
        }
        let group = b
            .summary
            .groups
            .iter()
            .find(|g| g.order == *order && g.workers == workers);
        let with_workers = if many_workers || workers > 0 {
            format!(" with {workers} parallel workers")
        } else {
            String::new()
        };
        let mut text = format!(
            "On this host and data, `maintenance_work_mem = {}`{with_workers} built the {} index fastest ({})",
            best.maintenance_work_mem,
            order.name(),
            median_of(best)
        );
        if let Some(g) = group {
            let generous = g.by_mwm.iter().max_by_key(|m| m.maintenance_work_mem_bytes);
            let slowest = g.by_mwm.iter().max_by(|a, b| a.median.total_cmp(&b.median));
            let other = match generous {
                Some(m) if m.maintenance_work_mem_bytes != best.maintenance_work_mem_bytes => {
                    Some(m)
                }
                _ => slowest
                    .filter(|m| m.maintenance_work_mem_bytes != best.maintenance_work_mem_bytes),
            };
            if let Some(m) = other
                && best.median > 0.0
            {
                text.push_str(&format!(
                    "; {} was {:.0}% slower ({})",
                    m.maintenance_work_mem,
                    (m.median / best.median - 1.0) * 100.0,
                    format_seconds(m.median)
                ));
            }
            // Settings indistinguishable from the best, smallest memory first: a tie is a
            // reason to take less memory.
            let mut ties: Vec<&MwmStat> = g
                .by_mwm
                .iter()
                .filter(|m| {
                    m.maintenance_work_mem_bytes != best.maintenance_work_mem_bytes
                        && (m.median - best.median) <= noise(m).max(noise(best))
                })
                .collect();
            ties.sort_by_key(|m| m.maintenance_work_mem_bytes);
            if !ties.is_empty() {
                let names: Vec<String> = ties
                    .iter()
                    .map(|m| format!("{} ({})", m.maintenance_work_mem, format_seconds(m.median)))
                    .collect();
                text.push_str(&format!(". Within noise of it: {}", names.join(", ")));
                if ties[0].maintenance_work_mem_bytes < best.maintenance_work_mem_bytes {
                    text.push_str(&format!(
                        " — {} does as well with less memory",
                        ties[0].maintenance_work_mem
                    ));
                }
            }
        }
        text.push('.');
        let mut sql = vec![format!(
            "SET maintenance_work_mem = '{}';",
            best.maintenance_work_mem
        )];
        if many_workers || workers > 0 {
            sql.push(format!("SET max_parallel_maintenance_workers = {workers};"));
        }
        out.push(Recommendation { text, sql });
    }
    if !out.is_empty() {
        let heap = b
            .datasets
            .first()
            .map(|d| d.heap_bytes.max(0) as u64)
            .unwrap_or_else(|| b.params.heap_bytes());
        let mut caveat = format!(
            "Measured on {} {} rows ({} heap); the best setting moves with table size, memory and disk, so measure at your table's size before changing a server default. `SET` lasts for the session: use it just before the `CREATE INDEX`.",
            format_count(b.params.rows as f64),
            b.params.key.as_str(),
            format_bytes(heap)
        );
        if report.outcome != Outcome::Finished {
            caveat.insert_str(
                0,
                &format!(
                    "This run was {} before all trials finished; the figures cover what finished. ",
                    report.outcome.as_str()
                ),
            );
        }
        out.push(Recommendation {
            text: caveat,
            sql: Vec::new(),
        });
    }
    out
}
