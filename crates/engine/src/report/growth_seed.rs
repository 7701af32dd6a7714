//! The Pulp seed beside this run: bytes per row of the largest measured snapshot step against
//! the seed's (10,000 units × 1000 versions: 735 MB of table and 1720 MB of indexes), with
//! where and why they differ (key shape, B-tree deduplication, how the primary key was built).

use crate::experiment::RunReport;
use crate::experiment::growth::{Design, GrowthReport, KeyShape};
use crate::measure::units::format_count;

use super::growth::per_row;

/// The seed: 10,000 units × 1000 versions = 10M rows in 735 MB of table and 1720 MB of
/// indexes, as `pg_size_pretty` printed them (1024-based MB, as PostgreSQL writes sizes).
const SEED_ROWS: f64 = 10_000_000.0;
const SEED_TABLE_MIB: f64 = 735.0;
const SEED_INDEX_MIB: f64 = 1720.0;

pub(crate) fn seed_table_per_row() -> f64 {
    SEED_TABLE_MIB * 1_048_576.0 / SEED_ROWS
}
pub(crate) fn seed_index_per_row() -> f64 {
    SEED_INDEX_MIB * 1_048_576.0 / SEED_ROWS
}

fn server_major(report: &RunReport) -> Option<u32> {
    let v = &report.server.as_ref()?.version;
    v.split(|c: char| !c.is_ascii_digit())
        .find(|p| !p.is_empty())?
        .parse()
        .ok()
}

/// Bytes per row of the largest measured snapshot step beside the seed's, with where and why
/// they differ.
pub(crate) fn seed_comparison(report: &RunReport, b: &GrowthReport) -> Vec<String> {
    let Some(s) = b
        .steps
        .iter()
        .filter(|s| s.design == Design::Snapshot && !s.projected && s.rows > 0)
        .max_by_key(|s| s.rows)
    else {
        return Vec::new();
    };
    let each: Vec<String> = s
        .index_bytes
        .iter()
        .map(|(k, v)| format!("{k} {}", per_row(*v, s)))
        .collect();
    let shape = b.params.key_shape;
    let mut out = vec![format!(
        "Bytes per row, snapshot at {} versions × {} units (key-shape {}): table {} (seed ≈ {:.0} B), indexes {} (seed ≈ {:.0} B at 1000 versions × 10k units): {}",
        format_count(s.versions as f64),
        format_count(b.params.units as f64),
        shape.as_str(),
        per_row(s.table_bytes, s),
        seed_table_per_row(),
        per_row(s.index_total(), s),
        seed_index_per_row(),
        each.join(", ")
    )];
    if shape == KeyShape::Int {
        out.push("key-shape int stores 8-byte keys where Pulp's models have 16-byte UUIDs, so these bytes per row are not the seed's; --key-shape uuid (the pulp presets' default) compares like with like".into());
        return out;
    }
    let rows = s.rows as f64;
    let table = s.table_bytes as f64 / rows;
    let gap = table / seed_table_per_row() - 1.0;
    out.push(if gap.abs() <= 0.1 {
        format!("the table matches the seed's ({table:.1} B against {:.1} B a row): a tuple header, three 16-byte UUIDs and a line pointer", seed_table_per_row())
    } else {
        format!("the table differs from the seed's by {} (small steps carry the fixed cost of partly filled pages)", crate::measure::units::format_change(1.0 + gap))
    });
    let per = |k: &str| s.index_bytes.get(k).map(|v| *v as f64 / rows);
    let dedup: Vec<String> = ["version", "content"]
        .into_iter()
        .filter_map(|k| {
            per(k)
                .filter(|b| *b < 12.0)
                .map(|b| format!("{k} {b:.0} B"))
        })
        .collect();
    if !dedup.is_empty() && server_major(report).is_some_and(|m| m >= 13) {
        out.push(format!(
            "the single-column indexes are far smaller than a full entry per row ({} a row): B-tree deduplication, new in PostgreSQL 13 (this server: {}), stores a repeated UUID once with a list of row pointers; the seed's server predates it and kept one ≈ 28-byte entry per row",
            dedup.join(", "),
            report.server.as_ref().map(|v| v.version.as_str()).unwrap_or("?")
        ));
    }
    if let Some(pk) = per("pk") {
        out.push(match b.params.grow_mode {
            crate::experiment::growth::GrowMode::Rebuild => format!(
                "the random UUID primary key takes {pk:.0} B a row here because grow-mode rebuild builds it by sorting, packing leaf pages 90% full; the seed inserted rows one by one into the indexed table, where random UUIDs split pages and leave them about 70% full, so its primary key was larger"
            ),
            crate::experiment::growth::GrowMode::Keep => format!(
                "the random UUID primary key takes {pk:.0} B a row: inserted into the indexed table, random keys split pages and leave them about 70% full, as in the seed"
            ),
        });
    }
    out
}
