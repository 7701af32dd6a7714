//! The chart of commit latency per `synchronous_commit` level, for an ingest or query run that
//! varied the level or the standby's distance (`--standby-rtt`): the levels in the order of
//! what they wait for (off, local, remote_write, on, remote_apply), one group of them per
//! configuration (method and batch when several, clients, swept settings such as the RTT), and
//! at each level the median over the trials of p50 (with its interval), p99, p99.9 and max on
//! a log ms axis. A line joins a percentile's levels within a group, so the cost of each level
//! reads as a step up. It draws [`LoadCharts`], whichever report they come from.

use plotters::prelude::*;

use crate::experiment::ingest::{LatencyMs, SyncCommit};
use crate::measure::interval::estimate;

use super::chart_ingest::ms_tick;
use super::chart_load::{LoadCharts, LoadTrial};
use super::chart_plot::{
    Canvas, DrawResult, Frame, Layout, Legend, Marker, PALETTE, Scale, Series, canvas, draw_line,
    framed,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const LEVEL_AXIS: &str = "synchronous_commit, a group per configuration";
pub use super::chart_load::INGEST_COMMIT_AXIS as COMMIT_AXIS;

/// The levels from the one that waits for least to the one that waits for most.
pub(crate) const LEVEL_ORDER: [SyncCommit; 5] = [
    SyncCommit::Off,
    SyncCommit::Local,
    SyncCommit::RemoteWrite,
    SyncCommit::On,
    SyncCommit::RemoteApply,
];

/// A percentile drawn: its name, its value, its marker, dashed or not.
type Percentile = (&'static str, fn(&LatencyMs) -> f64, Marker, bool);

pub(crate) const PERCENTILES: [Percentile; 4] = [
    ("p50", |l| l.p50, Marker::Circle, false),
    ("p99", |l| l.p99, Marker::Triangle, true),
    ("p99.9", |l| l.p999, Marker::Cross, true),
    ("max", |l| l.max, Marker::Circle, true),
];

/// One configuration's levels, each with its trials.
struct Group<'a> {
    /// Its name, a line each part.
    lines: &'a [String],
    levels: Vec<(SyncCommit, Vec<&'a LoadTrial<'a>>)>,
}

fn groups<'a>(c: &'a LoadCharts<'a>) -> Vec<Group<'a>> {
    let timed: Vec<&LoadTrial> = c
        .trials
        .iter()
        .filter(|t| t.latency.p50 > 0.0 && t.level.is_some())
        .collect();
    let mut keys: Vec<&[String]> = Vec::new();
    for t in &timed {
        if !keys.contains(&t.config.as_slice()) {
            keys.push(&t.config);
        }
    }
    keys.iter()
        .map(|k| {
            let of: Vec<&LoadTrial> = timed.iter().copied().filter(|t| t.config == *k).collect();
            Group {
                lines: k,
                levels: LEVEL_ORDER
                    .iter()
                    .map(|l| {
                        let at: Vec<&LoadTrial> =
                            of.iter().copied().filter(|t| t.level == Some(*l)).collect();
                        (*l, at)
                    })
                    .filter(|(_, ts)| !ts.is_empty())
                    .collect(),
            }
        })
        .collect()
}

/// The run varied the level within a configuration, or the standby's distance.
fn varied(c: &LoadCharts<'_>, groups: &[Group<'_>]) -> bool {
    let mut rtts: Vec<&str> = c.trials.iter().filter_map(|t| t.rtt).collect();
    rtts.sort();
    rtts.dedup();
    groups.iter().any(|g| g.levels.len() >= 2) || rtts.len() >= 2
}

/// The series of one percentile in one group, at the positions of its levels.
fn series(g: &Group<'_>, at: &[f64], p: &Percentile, color: RGBColor, confidence: f64) -> Series {
    let (name, value, marker, dashed) = *p;
    let mut points = Vec::new();
    let mut whiskers = Vec::new();
    for ((_, ts), x) in g.levels.iter().zip(at) {
        let values: Vec<f64> = ts
            .iter()
            .map(|t| value(&t.latency))
            .filter(|v| *v > 0.0)
            .collect();
        let Some(e) = estimate(&values, confidence) else {
            continue;
        };
        points.push((*x, e.median));
        if name == "p50" && e.n >= 2 && e.ci_high > e.ci_low {
            whiskers.push((*x, e.ci_low, e.ci_high));
        }
    }
    Series {
        name: name.into(),
        color,
        dashed,
        marker,
        hollow: name == "max",
        points,
        whiskers,
        dots: Vec::new(),
    }
}

/// Each group's levels at consecutive positions, a gap between groups.
fn positions(groups: &[Group<'_>]) -> Vec<Vec<f64>> {
    let mut next = 0.0;
    groups
        .iter()
        .map(|g| {
            let at: Vec<f64> = (0..g.levels.len()).map(|i| next + i as f64).collect();
            next += g.levels.len() as f64 + 1.0;
            at
        })
        .collect()
}

/// Every group's series, a percentile each.
fn all_series(c: &LoadCharts<'_>, groups: &[Group<'_>], at: &[Vec<f64>]) -> Vec<Vec<Series>> {
    let confidence = c.confidence;
    groups
        .iter()
        .zip(at)
        .map(|(g, at)| {
            PERCENTILES
                .iter()
                .enumerate()
                .map(|(i, p)| series(g, at, p, PALETTE[i], confidence))
                .collect()
        })
        .collect()
}

/// The x axis: each level's name at its position.
fn level_frame(groups: &[Group<'_>], at: &[Vec<f64>]) -> Frame<'static> {
    let last = at.iter().flatten().copied().fold(0.0, f64::max);
    let labels: Vec<(f64, &'static str)> = groups
        .iter()
        .zip(at)
        .flat_map(|(g, at)| g.levels.iter().zip(at).map(|((l, _), x)| (*x, l.as_str())))
        .collect();
    Frame {
        title: LEVEL_AXIS,
        range: -0.6..last + 0.6,
        ticks: last as usize + 2,
        label: Box::new(move |v| {
            labels
                .iter()
                .find(|(x, _)| (x - v).abs() < 1e-6)
                .map_or(String::new(), |(_, l)| l.to_string())
        }),
    }
}

/// Each group's name over its levels, a faint dashed line between groups.
fn group_marks(
    chart: &mut Canvas<'_, '_>,
    groups: &[Group<'_>],
    at: &[Vec<f64>],
    yl: &Layout,
) -> DrawResult<()> {
    let (bottom, top) = (yl.range().start, yl.range().end);
    let step = (top - bottom) * 0.045;
    let font =
        TextStyle::from(("sans-serif", 12).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (g, at) in groups.iter().zip(at) {
        let mid = (at[0] + at[at.len() - 1]) / 2.0;
        for (i, line) in g.lines.iter().enumerate() {
            let y = top - step * (0.3 + i as f64);
            chart.draw_series(std::iter::once(Text::new(
                line.clone(),
                (mid, y),
                font.clone(),
            )))?;
        }
        if at[0] > 0.0 {
            let edge = vec![(at[0] - 1.0, bottom), (at[0] - 1.0, top)];
            let grey = RGBColor(200, 200, 200).stroke_width(1);
            chart.draw_series(DashedLineSeries::new(edge, 4, 4, grey))?;
        }
    }
    Ok(())
}

/// The chart as SVG; None unless the run varied the level or the distance and timed commits.
pub(crate) fn svg(c: &LoadCharts<'_>) -> Option<String> {
    let groups = groups(c);
    if groups.is_empty() || !varied(c, &groups) {
        return None;
    }
    let at = positions(&groups);
    let per = all_series(c, &groups, &at);
    let ys: Vec<f64> = per.iter().flatten().flat_map(Series::ys).collect();
    let yl = Layout::new(Scale::Log10(ms_tick), &ys);
    let xl = Layout::new(Scale::Linear(""), &[]);
    let (x, y) = (level_frame(&groups, &at), Frame::of(c.commit_axis, &yl));
    canvas(|area, legend_area| {
        let mut chart = framed(area, &c.commit_caption, &x, &y)?;
        group_marks(&mut chart, &groups, &at, &yl)?;
        let mut legend = Legend::new(legend_area);
        for (i, (name, _, marker, dashed)) in PERCENTILES.iter().enumerate() {
            let mut style = None;
            for s in per.iter().map(|g| &g[i]) {
                style = Some(draw_line(&mut chart, s, &xl, &yl)?);
            }
            if let Some((line, mark)) = style {
                let name = match *name {
                    "p50" => "p50, the median of the trials' (bar: its interval)",
                    n => n,
                };
                legend.entry(name, *dashed, Some(*marker), line, mark)?;
            }
        }
        Ok(())
    })
    .ok()
}
