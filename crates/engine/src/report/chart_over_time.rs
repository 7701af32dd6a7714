//! The chart of rows/s (ingest) or transactions/s (query) over the seconds of each trial: a
//! point per second at its middle (s + 0.5), the seconds in which nothing committed (stalls)
//! shaded in the trial's colour, and the window in which a standby fault (`--standby-fault`)
//! had the standby gone or its replay paused marked by a faint band between dashed edges. It
//! draws [`LoadCharts`], whichever report they come from.

use plotters::prelude::*;

use super::chart_load::{LoadCharts, LoadTrial};
use super::chart_plot::{
    Axis, Canvas, DrawResult, Layout, Legend, PALETTE, Plot, Scale, Series, draw_with,
};

pub(crate) const ELAPSED_AXIS: &str = "time into the trial";

/// Most lines drawn (the trials that stalled, then those that decayed, most first).
pub(crate) const MAX_TIME_SERIES: usize = 8;
/// How opaque a stalled second's shade is (also what tests find it by).
pub(crate) const STALL_OPACITY: f64 = 0.22;
/// How opaque a fault window's band is.
pub(crate) const FAULT_OPACITY: f64 = 0.08;

/// The trials drawn, in the order of their colours.
pub(super) fn shown<'a>(c: &'a LoadCharts<'a>) -> (Vec<&'a LoadTrial<'a>>, usize) {
    let mut with: Vec<&LoadTrial> = c.trials.iter().filter(|t| t.series.len() >= 2).collect();
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

pub(super) fn plot(c: &LoadCharts<'_>, trials: &[&LoadTrial<'_>], all: usize) -> Plot {
    let series = trials
        .iter()
        .enumerate()
        .map(|(i, t)| Series {
            name: t.name.clone(),
            color: PALETTE[i % PALETTE.len()],
            dashed: false,
            marker: t.marker,
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
            "{}: {} in each second of a trial ({} of {all} trials with a series)",
            c.experiment,
            c.rate,
            trials.len()
        ),
        x: Axis {
            title: ELAPSED_AXIS.into(),
            scale: Scale::Linear("s"),
        },
        y: Axis {
            title: c.rate_axis.into(),
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

/// One fault's windows over the trials drawn: when it began and when the standby came back.
struct Window {
    text: String,
    from: Vec<f64>,
    to: Vec<f64>,
}

/// "1.0 s", "2.8–3.1 s": the range of some seconds.
fn span(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    if hi - lo < 0.05 {
        format!("{lo:.1} s")
    } else {
        format!("{lo:.1}–{hi:.1} s")
    }
}

/// Each trial's fault window: its edges dashed in the trial's colour, and one faint band per
/// fault from its earliest start to the latest return (one band a trial would stack dark).
fn fault_marks(
    trials: &[&LoadTrial<'_>],
    chart: &mut Canvas<'_, '_>,
    legend: &mut Legend<'_, '_>,
    yl: &Layout,
) -> DrawResult<()> {
    let r = yl.range();
    let mut windows: Vec<Window> = Vec::new();
    for (i, t) in trials.iter().enumerate() {
        let Some(w) = t.fault.as_deref() else {
            continue;
        };
        let (Some(from), Some(to)) = (w.from_s, w.to_s) else {
            continue;
        };
        let c = PALETTE[i % PALETTE.len()];
        for x in [from, to] {
            let edge = vec![(x, r.start), (x, r.end)];
            chart.draw_series(DashedLineSeries::new(edge, 6, 4, c.stroke_width(1)))?;
        }
        let text = format!("{} on {}", w.fault, w.standby);
        match windows.iter_mut().find(|w| w.text == text) {
            Some(w) => {
                w.from.push(from);
                w.to.push(to);
            }
            None => windows.push(Window {
                text,
                from: vec![from],
                to: vec![to],
            }),
        }
    }
    let fill = RGBColor(90, 90, 90).mix(FAULT_OPACITY);
    for w in windows {
        let (lo, hi) = (
            w.from.iter().copied().fold(f64::INFINITY, f64::min),
            w.to.iter().copied().fold(0.0, f64::max),
        );
        band(chart, yl, lo, hi, fill.filled())?;
        let name = format!(
            "band: standby fault {}, from the fault ({}) until the standby was back ({}); dashed: each trial",
            w.text,
            span(&w.from),
            span(&w.to)
        );
        legend.swatch(
            &name,
            RGBColor(90, 90, 90).mix(FAULT_OPACITY * 3.0).filled(),
        )?;
    }
    Ok(())
}

/// Each trial's seconds without a commit shaded in its colour, with a legend entry when any.
fn stall_marks(
    stalled: &str,
    trials: &[&LoadTrial<'_>],
    chart: &mut Canvas<'_, '_>,
    legend: &mut Legend<'_, '_>,
    yl: &Layout,
) -> DrawResult<()> {
    let mut stalls = 0;
    for (i, t) in trials.iter().enumerate() {
        let fill = PALETTE[i % PALETTE.len()].mix(STALL_OPACITY).filled();
        for (s, _) in t.series.iter().enumerate().filter(|(_, r)| **r <= 0.0) {
            band(chart, yl, s as f64, s as f64 + 1.0, fill)?;
            stalls += 1;
        }
    }
    if stalls > 0 {
        legend.swatch(
            &format!(
                "shaded in the colour of its trial: a second in which {stalled} ({stalls} in all)"
            ),
            RGBColor(90, 90, 90).mix(STALL_OPACITY + 0.1).filled(),
        )?;
    }
    Ok(())
}

/// The chart as SVG; None when no trial recorded a series of two seconds or more.
pub(crate) fn svg(c: &LoadCharts<'_>) -> Option<String> {
    let (trials, all) = shown(c);
    if trials.is_empty() {
        return None;
    }
    draw_with(&plot(c, &trials, all), |chart, legend, _, yl| {
        fault_marks(&trials, chart, legend, yl)?;
        stall_marks(c.stalled, &trials, chart, legend, yl)
    })
    .ok()
    .flatten()
}
