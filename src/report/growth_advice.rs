//! The growth decision, the Pulp seed's question — would it be slow, would it be large? —
//! answered as a table at the target size (each design's table and index bytes, write and
//! read time, whether the indexes still fit in RAM) and a sentence naming the design the
//! evidence points to and why. Sizes are exact (catalog readings, or projections marked as
//! such); time claims come only from the engine's verdicts. Beside it, bytes per row against
//! the seed's, with where and why they differ.

use crate::experiment::RunReport;
use crate::experiment::growth::{Design, GrowthReport, GrowthStep, KeyShape};
use crate::measure::units::{format_bytes_short, format_count};
use crate::measure::verdict::Verdict;

use super::grid::Grid;
use super::growth::{per_row, size, time};
use super::recommend::Recommendation;

/// The seed: 10,000 units × 1000 versions = 10M rows in 735 MB of table and 1720 MB of
/// indexes, as `pg_size_pretty` printed them (MiB).
const SEED_ROWS: f64 = 10_000_000.0;
const SEED_TABLE_MIB: f64 = 735.0;
const SEED_INDEX_MIB: f64 = 1720.0;

pub fn seed_table_per_row() -> f64 {
    SEED_TABLE_MIB * 1_048_576.0 / SEED_ROWS
}
pub fn seed_index_per_row() -> f64 {
    SEED_INDEX_MIB * 1_048_576.0 / SEED_ROWS
}

/// Where a design's indexes reach the host's memory, by the index-size fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RamCrossing {
    /// At about this many versions.
    At(f64),
    /// The indexes shrink or stay flat: never, by the fit.
    Never,
}

pub fn ram_crossing(b: &GrowthReport, design: Design, ram: u64) -> Option<RamCrossing> {
    let fit = b.fit.iter().find(|f| f.design == design)?;
    let f = fit.index_bytes.as_ref()?;
    if ram == 0 {
        return None;
    }
    if f.slope <= 0.0 {
        return Some(RamCrossing::Never);
    }
    let pairs = (ram as f64 - f.intercept) / f.slope;
    Some(RamCrossing::At(
        (pairs / b.params.units.max(1) as f64).max(0.0),
    ))
}

/// "indexes outgrow RAM at ≈ 61k versions".
pub fn crossing_text(c: RamCrossing) -> String {
    match c {
        RamCrossing::At(v) => format!(
            "indexes outgrow RAM at ≈ {} versions",
            format_count(v.round())
        ),
        RamCrossing::Never => "indexes do not grow toward RAM".into(),
    }
}

/// Each design's step at the largest version count reported (the target).
fn at_target(b: &GrowthReport) -> Vec<&GrowthStep> {
    let top = b.steps.iter().map(|s| s.versions).max().unwrap_or(0);
    let mut v: Vec<&GrowthStep> = b.steps.iter().filter(|s| s.versions == top).collect();
    v.sort_by_key(|s| s.design);
    v
}

pub fn decision_grid(report: &RunReport, b: &GrowthReport) -> Option<Grid> {
    let steps = at_target(b);
    let first = steps.first()?;
    let ram = report.host.total_memory;
    let mut g = Grid::new(
        &format!(
            "The decision at {} versions ({} version × content pairs)",
            format_count(first.versions as f64),
            format_count(first.pairs as f64)
        ),
        &[
            ("design", false),
            ("", false),
            ("rows", true),
            ("table", true),
            ("indexes", true),
            ("write one version", true),
            ("read one version", true),
            ("indexes fit in RAM", false),
        ],
    );
    for s in steps {
        let fits = if ram == 0 {
            "unknown".to_string()
        } else if s.index_total() <= ram {
            format!("yes ({} of {})", size(s.index_total()), size(ram))
        } else {
            format!(
                "no: {:.1}× the {} of RAM",
                s.index_total() as f64 / ram as f64,
                size(ram)
            )
        };
        g.rows.push(vec![
            s.design.as_str().into(),
            if s.projected { "projected" } else { "measured" }.into(),
            format_count(s.rows as f64),
            size(s.table_bytes),
            size(s.index_total()),
            s.write_seconds.map(time).unwrap_or("–".into()),
            s.read_seconds.map(time).unwrap_or("–".into()),
            fits,
        ]);
    }
    Some(g)
}

/// The verdict for ranges at the largest measured step both designs have, for a timing.
fn verdict(b: &GrowthReport, timed: &str) -> Option<(Verdict, f64, u64)> {
    b.summary
        .comparisons
        .iter()
        .filter(|c| {
            serde_json::to_value(c.timed)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .as_deref()
                == Some(timed)
        })
        .max_by_key(|c| c.versions)
        .map(|c| (c.verdict, c.ratio, c.versions))
}

fn describe(v: Option<(Verdict, f64, u64)>, what: &str) -> String {
    match v {
        Some((Verdict::Faster, r, at)) => format!(
            "ranges is faster to {what} ({:.2}× snapshot's time at {} versions)",
            r,
            format_count(at as f64)
        ),
        Some((Verdict::Slower, r, at)) => format!(
            "ranges is slower to {what} ({:.2}× snapshot's time at {} versions)",
            r,
            format_count(at as f64)
        ),
        Some((Verdict::NoSignificantDifference, _, at)) => format!(
            "no significant difference in the time to {what} at {} versions",
            format_count(at as f64)
        ),
        Some((v, _, at)) => format!(
            "{v} to compare the time to {what} at {} versions",
            format_count(at as f64)
        ),
        None => format!("the time to {what} was not compared"),
    }
}

pub fn recommendations(report: &RunReport, b: &GrowthReport) -> Vec<Recommendation> {
    let steps = at_target(b);
    let (Some(s), Some(r)) = (
        steps.iter().find(|s| s.design == Design::Snapshot),
        steps.iter().find(|s| s.design == Design::Ranges),
    ) else {
        return Vec::new();
    };
    let ram = report.host.total_memory;
    let share = r.total_bytes() as f64 / s.total_bytes().max(1) as f64;
    let read = verdict(b, "read");
    let write = verdict(b, "write");
    let read_slower = matches!(read, Some((Verdict::Slower, ..)));
    let write_slower = matches!(write, Some((Verdict::Slower, ..)));
    let sizes = format!(
        "at {} versions ranges needs {} against snapshot's {} ({:.1}%{})",
        format_count(s.versions as f64),
        format_bytes_short(r.total_bytes() as f64),
        format_bytes_short(s.total_bytes() as f64),
        share * 100.0,
        if s.projected || r.projected {
            ", projected"
        } else {
            ""
        }
    );
    let times = format!(
        "{}; {}",
        describe(read, "read a version"),
        describe(write, "write one")
    );
    let mut ram_note = String::new();
    if ram > 0 && s.index_total() > ram && r.index_total() <= ram {
        ram_note = format!(
            " Snapshot's indexes ({}) would no longer fit in this host's {} of RAM, ranges' ({}) would.",
            size(s.index_total()),
            size(ram),
            size(r.index_total())
        );
    }
    let decided = |v: &Option<(Verdict, f64, u64)>| {
        matches!(
            v,
            Some((
                Verdict::Faster | Verdict::Slower | Verdict::NoSignificantDifference,
                ..
            ))
        )
    };
    let undecided = !(decided(&read) && decided(&write));
    let ranges_faster =
        matches!(read, Some((Verdict::Faster, ..))) || matches!(write, Some((Verdict::Faster, ..)));
    // Sizes are exact, but a difference below the smallest effect is not worth a design.
    let e = b.params.decision.min_effect;
    let (ranges_smaller, snapshot_smaller) = (share < 1.0 - e, share > 1.0 + e);
    let within = e * 100.0;
    let text = match choose(
        ranges_smaller,
        snapshot_smaller,
        ranges_faster,
        read_slower || write_slower,
        undecided,
    ) {
        Choice::RangesOnTime => format!(
            "The sizes are within {within:.0}% of each other ({sizes}); on time the evidence points to **ranges** — {times}.{ram_note}"
        ),
        Choice::SnapshotOnTime => format!(
            "The sizes are within {within:.0}% of each other ({sizes}); on time the evidence points to **snapshot** — {times}.{ram_note}"
        ),
        Choice::Neither => format!(
            "No design is named: the sizes are within {within:.0}% of each other ({sizes}) and {times}.{ram_note}"
        ),
        Choice::TradeOffSnapshotSmaller => format!(
            "A trade-off, not a winner: {sizes}, but {times}. Choose ranges if writing or reading versions is the hot path, snapshot if disk and memory are.{ram_note}"
        ),
        Choice::RangesOnSizeTimeOpen => format!(
            "On size, the evidence points to **ranges**: {sizes}. Whether it is slower cannot be said yet — {times}; more repeats (--repeat auto) would decide it.{ram_note}"
        ),
        Choice::Ranges => format!(
            "The evidence points to **ranges**: {sizes}, and it is not slower — {times}.{ram_note}"
        ),
        Choice::TradeOffRangesSmaller => format!(
            "A trade-off, not a winner: {sizes}, but {times}. Choose snapshot if reading versions is the hot path, ranges if disk and memory are.{ram_note}"
        ),
        Choice::Snapshot => {
            format!("The evidence points to **snapshot**: {sizes}; {times}.{ram_note}")
        }
    };
    vec![Recommendation {
        text,
        sql: Vec::new(),
    }]
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
pub fn seed_comparison(report: &RunReport, b: &GrowthReport) -> Vec<String> {
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
        format!("the table differs from the seed's by {:+.0}% (small steps carry the fixed cost of partly filled pages)", gap * 100.0)
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

/// What the evidence points to, from exact sizes (each side smaller by more than the smallest
/// effect, or neither) and the time verdicts for ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Ranges,
    RangesOnSizeTimeOpen,
    Snapshot,
    TradeOffRangesSmaller,
    TradeOffSnapshotSmaller,
    RangesOnTime,
    SnapshotOnTime,
    Neither,
}

fn choose(
    ranges_smaller: bool,
    snapshot_smaller: bool,
    ranges_faster: bool,
    ranges_slower: bool,
    undecided: bool,
) -> Choice {
    match (ranges_smaller, snapshot_smaller) {
        (false, false) => match (ranges_faster, ranges_slower) {
            (true, false) => Choice::RangesOnTime,
            (false, true) => Choice::SnapshotOnTime,
            _ => Choice::Neither,
        },
        (true, _) if ranges_slower => Choice::TradeOffRangesSmaller,
        (true, _) if undecided => Choice::RangesOnSizeTimeOpen,
        (true, _) => Choice::Ranges,
        (false, true) if ranges_faster => Choice::TradeOffSnapshotSmaller,
        (false, true) => Choice::Snapshot,
    }
}

#[cfg(test)]
mod choice_tests {
    use super::{Choice, choose};

    #[test]
    fn a_design_is_named_only_where_size_or_time_decides() {
        // Ranges smaller and not slower; still open; slower on some timing.
        assert_eq!(choose(true, false, false, false, false), Choice::Ranges);
        assert_eq!(
            choose(true, false, false, false, true),
            Choice::RangesOnSizeTimeOpen
        );
        assert_eq!(
            choose(true, false, false, true, false),
            Choice::TradeOffRangesSmaller
        );
        // Snapshot smaller: named only when ranges is not faster on a timing.
        assert_eq!(choose(false, true, false, false, false), Choice::Snapshot);
        assert_eq!(
            choose(false, true, true, false, false),
            Choice::TradeOffSnapshotSmaller
        );
        // Sizes within the smallest effect: time decides, or nothing is named.
        assert_eq!(
            choose(false, false, true, false, false),
            Choice::RangesOnTime
        );
        assert_eq!(
            choose(false, false, false, true, false),
            Choice::SnapshotOnTime
        );
        assert_eq!(choose(false, false, false, false, false), Choice::Neither);
        assert_eq!(choose(false, false, true, true, false), Choice::Neither);
    }
}
