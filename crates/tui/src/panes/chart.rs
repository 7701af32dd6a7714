//! The chart of a run: per setting the median as a point and its interval as a bar through
//! it (one dataset per series, log axes where the layout says so), projected points with
//! their own marker.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

use super::summary::SeriesSummary;
use crate::experiment::{ResultLayout, Sample};
use crate::measure::interval::Estimate;
use crate::report::ticks::{self, Ticks};
use crate::tui::text::{unit_in_value, width as width_of};
use crate::tui::theme::Theme;

/// Ticks of a numeric axis over `values`: round, as many as `room` labels allow, log or
/// linear as the layout says. A linear axis starts at 0 unless the values sit in its upper
/// half: then it starts at a round value below them, so that their intervals get rows of
/// their own (the ticks say where it starts).
fn numeric(values: &[f64], unit: &str, log: bool, room: usize) -> Ticks {
    if log {
        return ticks::log(values, unit, room);
    }
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    let from_zero = !(lo > 0.0 && lo > hi * 0.5);
    ticks::linear(values, unit, room, from_zero)
}

/// A categorical axis: one position per name (0, 1, …), half a step of room at each end.
fn categories(names: &[String]) -> ([f64; 2], Vec<(f64, String)>) {
    let n = names.len().max(1) as f64;
    let ticks = names
        .iter()
        .enumerate()
        .map(|(i, s)| (i as f64, s.clone()))
        .collect();
    ([-0.5, n - 0.5], ticks)
}

/// Where the chart's plot starts and how wide it is in `area`, as ratatui lays it out for
/// y labels of `y_label_w` columns (at most a third of the width), then the axis line.
fn plot_columns(area: Rect, y_label_w: u16) -> (u16, u16) {
    let left = area.left() + y_label_w.min(area.width / 3) + 1;
    (left, area.right().saturating_sub(left))
}

/// The x labels on the chart's bottom row, each centred under its own position (ratatui
/// spreads labels evenly whatever their values, which puts the inner ones beside their
/// data); a label that would touch the one before it is left out, the last one kept.
fn x_labels(
    f: &mut Frame,
    area: Rect,
    (left, width): (u16, u16),
    bounds: [f64; 2],
    ticks: &[(f64, String)],
    theme: Theme,
) {
    if width < 2 || area.height == 0 {
        return;
    }
    let y = area.bottom() - 1;
    let span = (bounds[1] - bounds[0]).max(1e-12);
    let placed: Vec<(u16, &str)> = ticks
        .iter()
        .map(|(c, l)| {
            let col = left as f64 + (c - bounds[0]) / span * (width - 1) as f64;
            let w = width_of(l) as f64;
            let start = (col.round() - (w / 2.0).floor())
                .clamp(area.left() as f64, (area.right() as f64 - w).max(0.0));
            (start as u16, l.as_str())
        })
        .collect();
    let mut shown: Vec<(u16, &str)> = Vec::new();
    for (i, &(x, l)) in placed.iter().enumerate() {
        let clear = |shown: &Vec<(u16, &str)>| {
            shown
                .last()
                .is_none_or(|(px, pl)| px + (width_of(pl) as u16) < x)
        };
        // The axis' end is labelled: it makes room by dropping the ones before it.
        if i + 1 == placed.len() {
            while shown.len() > 1 && !clear(&shown) {
                shown.pop();
            }
        }
        if clear(&shown) {
            shown.push((x, l));
        }
    }
    for (x, l) in shown {
        let w = width_of(l) as u16;
        f.render_widget(
            Paragraph::new(Span::styled(l.to_string(), theme.dim())),
            Rect::new(x, y, w.min(area.right().saturating_sub(x)), 1),
        );
    }
}

fn axis_title(label: &str, unit: &str, log: bool) -> String {
    let mut t = label.to_string();
    if !unit.is_empty() && !unit_in_value(unit) && unit != label && unit != "count" {
        t.push_str(&format!(" ({unit})"));
    }
    if log {
        t.push_str(" · log");
    }
    t
}

/// How many y labels the chart's height holds (one every other row), and x labels its width.
fn room(area: Rect) -> (usize, usize) {
    let y = ((area.height as usize).saturating_sub(3) / 2 + 1).clamp(2, 11);
    let x = (area.width as usize / 10).clamp(2, 9);
    (y, x)
}

/// The chart of `series` (medians and intervals) and of the projected `samples`.
pub(crate) fn render(
    theme: Theme,
    layout: &ResultLayout,
    series: &[SeriesSummary],
    samples: &[Sample],
    f: &mut Frame,
    area: Rect,
) {
    if area.height < 5 || area.width < 20 {
        return;
    }
    let names = names(series, samples);
    let axes = axes(layout, series, samples, &names, area);
    let points = points(&axes, series, samples, &names);
    // The legend whole, on as many lines as it needs (at most 3): a series cut off the
    // legend is a series nobody can name.
    let legend = legend(theme, &names, &points, area.width as usize);
    let n = (legend.len() as u16).min(3).min(area.height - 4);
    f.render_widget(
        Paragraph::new(legend).alignment(ratatui::layout::Alignment::Right),
        Rect::new(area.x, area.y, area.width, n),
    );
    let area = Rect::new(area.x, area.y + n, area.width, area.height - n);
    let c = Chart::new(datasets(theme, &names, &points))
        .x_axis(x_axis(theme, layout, axes.xb))
        .y_axis(y_axis(theme, layout, &axes.yt))
        .legend_position(None);
    f.render_widget(c, area);
    let y_label_w = axes
        .yt
        .labels
        .iter()
        .map(|l| width_of(l))
        .max()
        .unwrap_or(0) as u16;
    x_labels(
        f,
        area,
        plot_columns(area, y_label_w),
        axes.xb,
        &axes.x_ticks,
        theme,
    );
}

/// The series drawn: the summarized ones, then those only projected.
fn names<'s>(series: &'s [SeriesSummary], samples: &'s [Sample]) -> Vec<&'s str> {
    let mut names: Vec<&str> = series.iter().map(|s| s.series.as_str()).collect();
    for s in samples.iter().filter(|s| s.projected) {
        if !names.contains(&s.series.as_str()) {
            names.push(&s.series);
        }
    }
    names
}

/// The x and estimate of each setting of the `i`th series that has one.
fn estimates(series: &[SeriesSummary], i: usize) -> impl Iterator<Item = (f64, Estimate)> + '_ {
    series
        .get(i)
        .into_iter()
        .flat_map(|s| s.settings.iter())
        .filter_map(|r| r.estimate.map(|e| (r.x, e)))
}

/// The projected samples of series `n` that can be drawn.
fn projected_of<'s>(samples: &'s [Sample], n: &'s str) -> impl Iterator<Item = &'s Sample> {
    samples
        .iter()
        .filter(move |s| s.series == n && s.projected && s.y.is_finite())
}

/// The chart's axes: the y ticks; the x bounds and the labelled x positions, with the x
/// ticks when the x axis is numeric (not categories).
struct Axes {
    yt: Ticks,
    xb: [f64; 2],
    x_ticks: Vec<(f64, String)>,
    xt: Option<Ticks>,
}

/// The ticks, from every value drawn, in the room the chart has.
fn axes(
    layout: &ResultLayout,
    series: &[SeriesSummary],
    samples: &[Sample],
    names: &[&str],
    area: Rect,
) -> Axes {
    let (y_room, x_room) = room(area);
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for i in 0..names.len() {
        for (x, e) in estimates(series, i) {
            xs.push(x);
            ys.extend([e.median, e.ci_low, e.ci_high]);
        }
    }
    for n in names {
        for s in projected_of(samples, n) {
            xs.push(s.x);
            ys.push(s.y);
        }
    }
    let yt = numeric(&ys, &layout.y_unit, layout.y_log, y_room);
    let (xb, x_ticks, xt) = if layout.x_names.is_empty() {
        let xt = numeric(&xs, &layout.x_unit, layout.x_log, x_room);
        let ticks: Vec<(f64, String)> = xt.at.iter().copied().zip(xt.labels.clone()).collect();
        // A little room at both ends, so that the points at the first and last tick (and
        // the series beside them) are not on the frame.
        let [a, b] = xt.bounds();
        let pad = (b - a) * 0.03;
        ([a - pad, b + pad], ticks, Some(xt))
    } else {
        let (b, ticks) = categories(&layout.x_names);
        (b, ticks, None)
    };
    Axes {
        yt,
        xb,
        x_ticks,
        xt,
    }
}

/// Where everything is drawn, in the chart's coordinates, per series: the medians, the
/// intervals (as vertical bars, with their series' index) and the projected points.
struct Points {
    medians: Vec<Vec<(f64, f64)>>,
    bars: Vec<(usize, [(f64, f64); 2])>,
    projected: Vec<Vec<(f64, f64)>>,
}

/// Place the medians, intervals and projected points on the axes.
fn points(axes: &Axes, series: &[SeriesSummary], samples: &[Sample], names: &[&str]) -> Points {
    let tx = |x: f64| axes.xt.as_ref().map_or(x, |t| t.pos(x));
    let ty = |y: f64| axes.yt.pos(y);
    let xb = axes.xb;
    // Series at the same x stand side by side, so that their intervals do not hide each other.
    let k = names.len() as f64;
    let dodge = |i: usize| (i as f64 - (k - 1.0) / 2.0) * (xb[1] - xb[0]) * 0.012;
    let medians: Vec<Vec<(f64, f64)>> = (0..names.len())
        .map(|i| {
            estimates(series, i)
                .map(|(x, e)| (tx(x) + dodge(i), ty(e.median)))
                .collect()
        })
        .collect();
    let bars: Vec<(usize, [(f64, f64); 2])> = (0..names.len())
        .flat_map(|i| {
            estimates(series, i)
                .filter(|(_, e)| e.ci_high > e.ci_low)
                .map(move |(x, e)| {
                    let x = tx(x) + dodge(i);
                    (i, [(x, ty(e.ci_low)), (x, ty(e.ci_high))])
                })
        })
        .collect();
    let projected: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| {
            projected_of(samples, n)
                .map(|s| (tx(s.x), ty(s.y)))
                .collect()
        })
        .collect();
    Points {
        medians,
        bars,
        projected,
    }
}

/// Without colour, series differ by marker.
fn marker(theme: Theme, i: usize) -> Marker {
    if theme.color {
        Marker::Dot
    } else {
        [Marker::Dot, Marker::Block, Marker::Bar][i % 3]
    }
}

/// The legend's symbol for the `i`th series' marker.
fn symbol(theme: Theme, i: usize) -> &'static str {
    if theme.color {
        "•"
    } else {
        ["•", "█", "▄"][i % 3]
    }
}

/// The legend on lines of its own (ratatui's box hides itself in small charts), each entry
/// whole, wrapped at `cols`.
fn legend(theme: Theme, names: &[&str], points: &Points, cols: usize) -> Vec<Line<'static>> {
    let mut items: Vec<Vec<Span>> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        items.push(vec![
            Span::styled(symbol(theme, i), theme.series(i)),
            Span::styled(format!(" {n}"), theme.label()),
        ]);
    }
    if !points.bars.is_empty() {
        items.push(vec![Span::styled("median ⡇ interval", theme.dim())]);
    }
    if points.projected.iter().any(|p| !p.is_empty()) {
        items.push(vec![Span::styled("⠂ projected", theme.dim())]);
    }
    let w = |item: &[Span]| item.iter().map(|s| s.width()).sum::<usize>();
    let mut lines: Vec<Vec<Span>> = Vec::new();
    let mut used = 0;
    for item in items {
        let iw = w(&item);
        match lines.last_mut() {
            Some(line) if used + 2 + iw <= cols => {
                line.push(Span::raw("  "));
                line.extend(item);
                used += 2 + iw;
            }
            _ => {
                lines.push(item);
                used = iw;
            }
        }
    }
    lines.into_iter().map(Line::from).collect()
}

/// The datasets: bars first, so that the medians are drawn over them; then each series'
/// medians and projected points.
fn datasets<'p>(theme: Theme, names: &[&str], points: &'p Points) -> Vec<Dataset<'p>> {
    let mut datasets: Vec<Dataset> = points
        .bars
        .iter()
        .map(|(i, b)| {
            Dataset::default()
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(theme.series(*i))
                .data(b)
        })
        .collect();
    for (i, n) in names.iter().enumerate() {
        if !points.medians[i].is_empty() {
            datasets.push(
                Dataset::default()
                    .name(n.to_string())
                    .marker(marker(theme, i))
                    .graph_type(GraphType::Scatter)
                    .style(theme.series(i))
                    .data(&points.medians[i]),
            );
        }
        if !points.projected[i].is_empty() {
            datasets.push(
                Dataset::default()
                    .name(format!("{n} (projected)"))
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Scatter)
                    .style(theme.series(i).add_modifier(Modifier::DIM))
                    .data(&points.projected[i]),
            );
        }
    }
    datasets
}

/// The x axis: its title and bounds; its labels are drawn apart (see `x_labels`).
fn x_axis(theme: Theme, layout: &ResultLayout, xb: [f64; 2]) -> Axis<'static> {
    Axis::default()
        .title(Span::styled(
            axis_title(&layout.x_label, &layout.x_unit, layout.x_log),
            theme.label(),
        ))
        .bounds(xb)
        // Empty labels keep the axis line and the row below it; the labels are
        // drawn there at their own positions (see `x_labels`).
        .labels(vec![Span::raw(""), Span::raw("")])
}

/// The y axis: its title, bounds and tick labels.
fn y_axis(theme: Theme, layout: &ResultLayout, yt: &Ticks) -> Axis<'static> {
    Axis::default()
        .title(Span::styled(
            axis_title(&layout.y_label, &layout.y_unit, layout.y_log),
            theme.label(),
        ))
        .bounds(yt.bounds())
        .labels(
            yt.labels
                .iter()
                .map(|l| Span::styled(l.clone(), theme.dim()))
                .collect::<Vec<_>>(),
        )
}
