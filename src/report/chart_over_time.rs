//! The ingest chart of rows/s over the seconds of each trial: a point per second at its
//! middle (s + 0.5), the seconds in which nothing committed (stalls) shaded in the trial's
//! colour, and the window in which a standby fault (`--standby-fault`) had the standby gone
//! or its replay paused marked by a faint band between dashed edges.

use plotters::prelude::*;

use crate::experiment::ingest::{IngestReport, IngestTrial};

use super::chart_ingest::{curve_name, marker};
use super::chart_plot::{
    Axis, Canvas, DrawResult, Layout, Legend, PALETTE, Plot, Scale, Series, draw_with,
};

pub const ELAPSED_AXIS: &str = "time into the trial";
pub const SERIES_RATE_AXIS: &str = "rows loaded per second";

/// Most lines drawn (the trials that stalled, then those that decayed, most first).
pub const MAX_TIME_SERIES: usize = 8;
/// How opaque a stalled second's shade is (also what tests find it by).
pub const STALL_OPACITY: f64 = 0.22;
/// How opaque a fault window's band is.
pub const FAULT_OPACITY: f64 = 0.08;

/// The trials drawn, in the order of their colours.
pub(super) fn shown(b: &IngestReport) -> (Vec<&IngestTrial>, usize) {
    let mut with: Vec<&IngestTrial> = b.trials.iter().filter(|t| t.series.len() >= 2).collect();
    let all = with.len();
    with.sort_by(|x, y| {
        y.stall_seconds.cmp(&x.stall_seconds).then(
            y.decay_pct
                .unwrap_or(0.0)
                .total_cmp(&x.decay_pct.unwrap_or(0.0)),
        )
    });
    with.truncate(MAX_TIME_SERIES);
    (with, all)
}

fn trial_name(t: &IngestTrial) -> String {
    let mut name = format!(
        "{} · batch {} · #{}",
        curve_name((t.method, t.clients, t.synchronous_commit)),
        t.batch,
        t.repeat
    );
    let settings = t.settings_label();
    if !settings.is_empty() {
        name.push_str(&format!(" · {settings}"));
    }
    name
}

pub(super) fn plot(trials: &[&IngestTrial], all: usize) -> Plot {
    let series = trials
        .iter()
        .enumerate()
        .map(|(i, t)| Series {
            name: trial_name(t),
            color: PALETTE[i % PALETTE.len()],
            dashed: false,
            marker: marker(t.method),
            hollow: false,
            dots: Vec::new(),
            points: t
                .series
                .iter()
                .enumerate()
                .map(|(s, r)| (s as f64 + 0.5, *r))
                .collect(),
            whiskers: Vec::new(),
        })
        .collect();
    Plot {
        caption: format!(
            "ingest: rows/s in each second of a trial ({} of {all} trials with a series)",
            trials.len()
        ),
        x: Axis {
            title: ELAPSED_AXIS.into(),
            scale: Scale::Linear("s"),
        },
        y: Axis {
            title: SERIES_RATE_AXIS.into(),
            scale: Scale::Linear(""),
        },
        series,
        refs: Vec::new(),
    }
}

/// A band over the whole height of the plot from `x0` to `x1` (seconds).
fn band(
    chart: &mut Canvas<'_, '_>,
    yl: &Layout,
    x0: f64,
    x1: f64,
    fill: ShapeStyle,
) -> DrawResult<()> {
    let r = yl.range();
    chart.draw_series(std::iter::once(Rectangle::new(
        [(x0, r.start), (x1, r.end)],
        fill,
    )))?;
    Ok(())
}

/// Each trial's stalled seconds shaded and its fault window marked, with their legend
/// entries (only for what some trial has).
fn marks(
    trials: &[&IngestTrial],
    chart: &mut Canvas<'_, '_>,
    legend: &mut Legend<'_, '_>,
    yl: &Layout,
) -> DrawResult<()> {
    let grey = RGBColor(90, 90, 90);
    let (mut stalls, mut windows) = (0, Vec::new());
    for (i, t) in trials.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        if let Some(w) = &t.fault
            && let (Some(from), Some(to)) = (w.from_s, w.to_s)
        {
            band(chart, yl, from, to, grey.mix(FAULT_OPACITY).filled())?;
            let r = yl.range();
            for x in [from, to] {
                let edge = vec![(x, r.start), (x, r.end)];
                chart.draw_series(DashedLineSeries::new(edge, 6, 4, c.stroke_width(1)))?;
            }
            let text = format!("{} on {}", w.fault, w.standby);
            if !windows.contains(&text) {
                windows.push(text);
            }
        }
        for (s, _) in t.series.iter().enumerate().filter(|(_, r)| **r <= 0.0) {
            band(
                chart,
                yl,
                s as f64,
                s as f64 + 1.0,
                c.mix(STALL_OPACITY).filled(),
            )?;
            stalls += 1;
        }
    }
    if stalls > 0 {
        legend.swatch(
            &format!("shaded in its trial's colour: a second in which nothing committed ({stalls} in all)"),
            grey.mix(STALL_OPACITY + 0.1).filled(),
        )?;
    }
    for w in windows {
        legend.swatch(
            &format!(
                "between dashed edges: standby fault {w}, from the fault to the standby's return"
            ),
            grey.mix(FAULT_OPACITY * 3.0).filled(),
        )?;
    }
    Ok(())
}

/// The chart as SVG; None when no trial recorded a series of two seconds or more.
pub fn svg(b: &IngestReport) -> Option<String> {
    let (trials, all) = shown(b);
    if trials.is_empty() {
        return None;
    }
    draw_with(&plot(&trials, all), |chart, legend, _, yl| {
        marks(&trials, chart, legend, yl)
    })
    .ok()
    .flatten()
}
