//! The growth decision, the Pulp seed's question — would it be slow, would it be large? —
//! answered as a table at the target size (each design's table and index bytes, write and
//! read time, whether the indexes still fit in RAM; projected figures with their intervals
//! and how far they are carried) and one sentence naming the design the evidence points to
//! and why. Time claims weigh two things, never re-derived here: the statistics core's
//! verdict at the largest step both designs measured, and whether the projections to the
//! target are told apart by their intervals (both in [`super::growth_timing`]). A claim
//! that rests on a projection says so.

use crate::experiment::RunReport;
use crate::experiment::growth::{Design, GrowthReport, GrowthStep, StepProjection, Timed};
use crate::measure::fit::{Projected, Shape, extrapolated, reach, reach_words};
use crate::measure::units::format_count;

use super::grid::Grid;
use super::growth::{size, time};
pub(crate) use super::growth_timing::AtTarget;
use super::growth_timing::{Timing, timing};
use super::recommend::Recommendation;

/// Where a design's indexes reach the host's memory, by the index-size projection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RamCrossing {
    /// At about this many versions, `reach` times the largest table measured.
    At { versions: f64, reach: f64 },
    /// The indexes do not grow (or the table stops growing): never, by the projection.
    Never,
}

pub(crate) fn ram_crossing(b: &GrowthReport, design: Design, ram: u64) -> Option<RamCrossing> {
    let fit = b.fit.iter().find(|f| f.design == design)?;
    let t = fit.index.as_ref()?;
    if ram == 0 {
        return None;
    }
    if t.fit.slope <= 0.0 {
        return Some(RamCrossing::Never);
    }
    // Already past it at an empty table: at once.
    let rows = t.x_where(ram as f64).unwrap_or(0.0);
    Some(match b.params.versions_at_rows(design, rows) {
        Some(versions) => RamCrossing::At {
            versions,
            reach: reach(rows, fit.from_rows as f64),
        },
        None => RamCrossing::Never,
    })
}

/// "indexes outgrow RAM at ≈ 61k versions (extrapolated ×610)".
pub(crate) fn crossing_text(c: RamCrossing) -> String {
    match c {
        RamCrossing::At { versions, reach } => format!(
            "indexes outgrow RAM at ≈ {} versions{}",
            format_count(versions.round()),
            if extrapolated(reach) {
                format!(" ({})", reach_words(reach))
            } else {
                String::new()
            }
        ),
        RamCrossing::Never => "indexes do not grow toward RAM".into(),
    }
}

/// Each design's step at the largest version count reported (the target), first combination.
fn at_target(b: &GrowthReport) -> Vec<&GrowthStep> {
    let top = b.steps.iter().map(|s| s.versions).max().unwrap_or(0);
    let mut v: Vec<&GrowthStep> = b
        .steps
        .iter()
        .filter(|s| s.versions == top && s.combo == 0)
        .collect();
    v.sort_by_key(|s| s.design);
    v
}

/// A figure of a step: measured as it was, projected with its interval.
fn figure(
    measured: Option<f64>,
    projected: Option<Projected>,
    fmt: &dyn Fn(f64) -> String,
) -> String {
    match (projected, measured) {
        (Some(p), _) => p.show(fmt),
        (None, Some(v)) => fmt(v),
        (None, None) => "–".into(),
    }
}

fn bytes(b: f64) -> String {
    size(b.round() as u64)
}

/// "sizes linear · write flat · read linear": the shapes a projected row was carried along.
fn shapes(p: &StepProjection) -> String {
    let mut parts = Vec::new();
    if let Some(t) = p.table {
        parts.push(format!("sizes {}", t.shape.as_str()));
    }
    for (what, x) in [("write", p.write), ("read", p.read)] {
        if let Some(x) = x {
            parts.push(format!("{what} {}", x.shape.as_str()));
        }
    }
    parts.join(" · ")
}

pub(crate) fn decision_grid(report: &RunReport, b: &GrowthReport) -> Option<Grid> {
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
    let mut how = Vec::new();
    for s in steps {
        let p = b.projection(s);
        let index = p
            .and_then(|p| p.index)
            .map_or(s.index_total() as f64, |i| i.value);
        let fits = if ram == 0 {
            "unknown".to_string()
        } else if index <= ram as f64 {
            format!("yes ({} of {})", bytes(index), size(ram))
        } else {
            format!("no: {:.1}× the {} of RAM", index / ram as f64, size(ram))
        };
        g.rows.push(vec![
            s.design.as_str().into(),
            match &p {
                Some(p) => p.words(),
                None => "measured".into(),
            },
            format_count(s.rows as f64),
            figure(Some(s.table_bytes as f64), p.and_then(|p| p.table), &bytes),
            figure(
                Some(s.index_total() as f64),
                p.and_then(|p| p.index),
                &bytes,
            ),
            figure(s.write_seconds, p.and_then(|p| p.write), &time),
            figure(s.read_seconds, p.and_then(|p| p.read), &time),
            fits,
        ]);
        how.push(p.map(|p| shapes(&p)).unwrap_or_default());
    }
    if how.iter().any(|h| !h.is_empty()) {
        g.with_column("projected along", how);
    }
    Some(g)
}

/// Sizes at the target: ranges' and snapshot's totals, each an interval when projected.
fn totals(b: &GrowthReport, st: &GrowthStep) -> Projected {
    let exact = st.total_bytes() as f64;
    match b.projection(st).and_then(|p| p.table.zip(p.index)) {
        Some((t, i)) => Projected {
            shape: t.shape,
            value: t.value + i.value,
            low: t.low + i.low,
            high: t.high + i.high,
        },
        None => Projected {
            shape: Shape::Flat,
            value: exact,
            low: exact,
            high: exact,
        },
    }
}

/// The one sentence naming the design the evidence points to (or the trade-off, or that none
/// is named), with what the sizes and both timings say and what it rests on.
pub(crate) fn recommendations(report: &RunReport, b: &GrowthReport) -> Vec<Recommendation> {
    let steps = at_target(b);
    let (Some(s), Some(r)) = (
        steps.iter().find(|s| s.design == Design::Snapshot),
        steps.iter().find(|s| s.design == Design::Ranges),
    ) else {
        return Vec::new();
    };
    let ram = report.host.total_memory;
    let sizes = Sizes::at(b, s, r);
    let read = timing(b, Timed::Read, (s, r));
    let write = timing(b, Timed::Write, (s, r));
    let times = format!("{}; {}", read.sentence, write.sentence);
    let both = [&read, &write];
    let ram_note = ram_note(b, (s, r), ram, sizes.projected);
    let e = b.params.decision.min_effect;
    let text = choice_text(choice(e, &sizes, &both), e, &sizes.sentence, &times, &both);
    let mut text = text + &ram_note;
    if sizes.projected && (extrapolated(sizes.reach_max) || both.iter().any(|t| t.on_projection)) {
        text.push_str(&format!(
            " This rests on projections {} past the largest table measured: measure steps nearer {} versions before building on it.",
            reach_words(sizes.reach_max),
            format_count(s.versions as f64)
        ));
    }
    vec![Recommendation {
        text,
        sql: Vec::new(),
    }]
}

/// Snapshot's (`ts`) and ranges' (`tr`) totals at the target, ranges' share of snapshot's,
/// whether either was projected and how far, and the sentence that says so.
struct Sizes {
    ts: Projected,
    tr: Projected,
    share: f64,
    projected: bool,
    reach_max: f64,
    sentence: String,
}

impl Sizes {
    fn at(b: &GrowthReport, s: &GrowthStep, r: &GrowthStep) -> Sizes {
        let (ts, tr) = (totals(b, s), totals(b, r));
        let share = tr.value / ts.value.max(1.0);
        let projected = s.projected || r.projected;
        let reach_max = s.reach.unwrap_or(f64::INFINITY).max(r.reach.unwrap_or(0.0));
        let sentence = format!(
            "at {} versions ranges needs {} against snapshot's {} ({:.1}%{})",
            format_count(s.versions as f64),
            tr.show(&bytes),
            ts.show(&bytes),
            share * 100.0,
            if projected {
                format!(", {}", reach_words(reach_max))
            } else {
                String::new()
            }
        );
        Sizes {
            ts,
            tr,
            share,
            projected,
            reach_max,
            sentence,
        }
    }
}

/// " Snapshot's indexes … would no longer fit …" when only ranges' indexes fit in RAM at the
/// target; empty otherwise.
fn ram_note(
    b: &GrowthReport,
    (s, r): (&GrowthStep, &GrowthStep),
    ram: u64,
    projected: bool,
) -> String {
    let (is, ir) = (
        b.projection(s)
            .and_then(|p| p.index)
            .map_or(s.index_total() as f64, |i| i.value),
        b.projection(r)
            .and_then(|p| p.index)
            .map_or(r.index_total() as f64, |i| i.value),
    );
    if ram > 0 && is > ram as f64 && ir <= ram as f64 {
        format!(
            " Snapshot's indexes ({}{}) would no longer fit in this host's {} of RAM, ranges' ({}) would.",
            bytes(is),
            if projected { ", projected" } else { "" },
            size(ram),
            bytes(ir)
        )
    } else {
        String::new()
    }
}

/// What the sizes (by more than the smallest effect `e`) and the two timings point to.
fn choice(e: f64, sizes: &Sizes, both: &[&Timing; 2]) -> Choice {
    // Sizes are exact readings, but a difference below the smallest effect is not worth a
    // design, and projected sizes count only when their intervals are apart.
    let Sizes { ts, tr, share, .. } = sizes;
    let ranges_smaller = *share < 1.0 - e && tr.high < ts.low;
    let snapshot_smaller = *share > 1.0 + e && tr.low > ts.high;
    let ranges_faster = both.iter().any(|t| t.at == AtTarget::Faster);
    let ranges_slower = both.iter().any(|t| t.at == AtTarget::Slower);
    let undecided = both.iter().any(|t| t.at == AtTarget::Open);
    choose(
        ranges_smaller,
        snapshot_smaller,
        ranges_faster,
        ranges_slower,
        undecided,
    )
}

/// The recommendation's sentence for `choice`, built from the sizes' and the times' sentences.
fn choice_text(choice: Choice, e: f64, sizes: &str, times: &str, both: &[&Timing; 2]) -> String {
    let within = e * 100.0;
    let settle = if both
        .iter()
        .filter(|t| t.at == AtTarget::Open)
        .any(|t| t.repeats_decide)
    {
        "more repeats (--repeat auto) would decide it"
    } else {
        "measuring larger steps (--steps) would decide it"
    };
    match choice {
        Choice::RangesOnTime => format!(
            "The sizes are within {within:.0}% of each other ({sizes}); on time the evidence points to **ranges** — {times}."
        ),
        Choice::SnapshotOnTime => format!(
            "The sizes are within {within:.0}% of each other ({sizes}); on time the evidence points to **snapshot** — {times}."
        ),
        Choice::Neither => format!(
            "No design is named: the sizes are within {within:.0}% of each other ({sizes}) and {times}."
        ),
        Choice::TradeOffSnapshotSmaller => format!(
            "A trade-off, not a winner: {sizes}, but ranges is faster — {times}. Choose ranges if writing or reading versions is the hot path, snapshot if disk and memory are."
        ),
        Choice::RangesOnSizeTimeOpen => format!(
            "On size, the evidence points to **ranges**: {sizes}. Whether it is as fast as snapshot cannot be said yet — {times}; {settle}."
        ),
        Choice::Ranges => format!(
            "The evidence points to **ranges**: {sizes}, and on time it is as fast or faster — {times}."
        ),
        Choice::TradeOffRangesSmaller => {
            let slower: Vec<&str> = both
                .iter()
                .filter(|t| t.at == AtTarget::Slower)
                .map(|t| match t.timed {
                    Timed::Write => "writing versions",
                    _ => "reading versions",
                })
                .collect();
            format!(
                "A trade-off, not a winner: {sizes}, but ranges is slower — {times}. Choose snapshot if {} the hot path, ranges if disk and memory are.",
                match slower.as_slice() {
                    [one] => format!("{one} is"),
                    _ => "writing and reading versions are".into(),
                }
            )
        }
        Choice::Snapshot => format!("The evidence points to **snapshot**: {sizes}; {times}."),
    }
}

/// What the evidence points to, from sizes (each side smaller by more than the smallest
/// effect, or neither) and the time answers for ranges.
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
#[path = "growth_advice_tests.rs"]
mod tests;
