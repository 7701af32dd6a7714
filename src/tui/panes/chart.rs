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
use crate::tui::text::{unit_in_value, with_unit};
use crate::tui::theme::Theme;

fn transform(v: f64, log: bool) -> f64 {
    if log { v.max(1e-12).log10() } else { v }
}

fn untransform(v: f64, log: bool) -> f64 {
    if !log {
        return v;
    }
    // 10^log10(x) is x give or take the last bits: round them off for the labels.
    let x = 10f64.powf(v);
    if (x - x.round()).abs() < 1e-6 * x.abs().max(1.0) {
        x.round()
    } else {
        x
    }
}

/// Axis bounds of the transformed values. Linear axes start at zero (an honest bar for
/// times and sizes) and end at a round number; log axes span the data exactly, so the end
/// labels are values that were measured.
fn bounds(values: impl Iterator<Item = f64>, log: bool, from_zero: bool) -> [f64; 2] {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return [0.0, 1.0];
    }
    if log {
        if hi - lo < 1e-9 {
            lo -= 0.5;
            hi += 0.5;
        }
        return [lo, hi];
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + hi.abs().max(1.0);
    }
    [lo, nice_ceil(hi)]
}

/// The smallest of 1, 2, 2.5, 5 × 10^k that is at least `v` (for v > 0).
fn nice_ceil(v: f64) -> f64 {
    if v <= 0.0 {
        return v;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|c| *c >= v * 0.999_999)
        .unwrap_or(10.0 * p)
}

fn axis_title(label: &str, unit: &str, log: bool) -> String {
    let mut t = label.to_string();
    if !unit.is_empty() && !unit_in_value(unit) && unit != label {
        t.push_str(&format!(" ({unit})"));
    }
    if log {
        t.push_str(" · log");
    }
    t
}

fn ticks<'a>(b: [f64; 2], log: bool, unit: &str, theme: Theme) -> Vec<Span<'a>> {
    let mid = (b[0] + b[1]) / 2.0;

    [b[0], mid, b[1]]
        .into_iter()
        .map(|v| Span::styled(with_unit(untransform(v, log), unit), theme.dim()))
        .collect()
}

/// The ends (and middle) of a categorical axis, by name.
fn categories<'a>(names: &[String], theme: Theme) -> Vec<Span<'a>> {
    let pick: Vec<&String> = match names.len() {
        0..=3 => names.iter().collect(),
        n => vec![&names[0], &names[n / 2], &names[n - 1]],
    };
    pick.into_iter()
        .map(|n| Span::styled(n.clone(), theme.dim()))
        .collect()
}

/// The chart of `series` (medians and intervals) and of the projected `samples`.
pub fn render(
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
    let mut names: Vec<&str> = series.iter().map(|s| s.series.as_str()).collect();
    for s in samples.iter().filter(|s| s.projected) {
        if !names.contains(&s.series.as_str()) {
            names.push(&s.series);
        }
    }
    let tx = |x: f64| transform(x, layout.x_log);
    let ty = |y: f64| transform(y, layout.y_log);
    let estimates = |i: usize| {
        series
            .get(i)
            .into_iter()
            .flat_map(|s| s.settings.iter())
            .filter_map(|r| r.estimate.map(|e| (r.x, e)))
    };
    let medians: Vec<Vec<(f64, f64)>> = (0..names.len())
        .map(|i| estimates(i).map(|(x, e)| (tx(x), ty(e.median))).collect())
        .collect();
    let bars: Vec<(usize, [(f64, f64); 2])> = (0..names.len())
        .flat_map(|i| {
            estimates(i)
                .filter(|(_, e)| e.ci_high > e.ci_low)
                .map(move |(x, e)| (i, [(tx(x), ty(e.ci_low)), (tx(x), ty(e.ci_high))]))
        })
        .collect();
    let projected: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| {
            samples
                .iter()
                .filter(|s| s.series == *n && s.projected && s.y.is_finite())
                .map(|s| (tx(s.x), ty(s.y)))
                .collect()
        })
        .collect();
    let all = || {
        medians
            .iter()
            .chain(projected.iter())
            .flatten()
            .chain(bars.iter().flat_map(|b| b.1.iter()))
    };
    let xb = bounds(all().map(|p| p.0), layout.x_log, false);
    let yb = bounds(all().map(|p| p.1), layout.y_log, true);
    // Without colour, series differ by marker.
    let marker = |i: usize| {
        if theme.color {
            Marker::Dot
        } else {
            [Marker::Dot, Marker::Block, Marker::Bar][i % 3]
        }
    };
    let symbol = |i: usize| {
        if theme.color {
            "•"
        } else {
            ["•", "█", "▄"][i % 3]
        }
    };
    // The legend on a line of its own: ratatui's box hides itself in small charts.
    let mut legend: Vec<Span> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            legend.push(Span::raw("  "));
        }
        legend.push(Span::styled(symbol(i), theme.series(i)));
        legend.push(Span::styled(format!(" {n}"), theme.label()));
    }
    if !bars.is_empty() {
        legend.push(Span::styled("  median ⡇ interval", theme.dim()));
    }
    if projected.iter().any(|p| !p.is_empty()) {
        legend.push(Span::styled("  ⠂ projected", theme.dim()));
    }
    f.render_widget(
        Paragraph::new(Line::from(legend)).alignment(ratatui::layout::Alignment::Right),
        Rect::new(area.x, area.y, area.width, 1),
    );
    let area = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    // Bars first: the medians are drawn over them.
    let mut datasets: Vec<Dataset> = bars
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
        if !medians[i].is_empty() {
            datasets.push(
                Dataset::default()
                    .name(n.to_string())
                    .marker(marker(i))
                    .graph_type(GraphType::Scatter)
                    .style(theme.series(i))
                    .data(&medians[i]),
            );
        }
        if !projected[i].is_empty() {
            datasets.push(
                Dataset::default()
                    .name(format!("{n} (projected)"))
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Scatter)
                    .style(theme.series(i).add_modifier(Modifier::DIM))
                    .data(&projected[i]),
            );
        }
    }
    let c = Chart::new(datasets)
        .x_axis(
            Axis::default()
                .title(Span::styled(
                    axis_title(&layout.x_label, &layout.x_unit, layout.x_log),
                    theme.label(),
                ))
                .bounds(xb)
                .labels(if layout.x_names.is_empty() {
                    ticks(xb, layout.x_log, &layout.x_unit, theme)
                } else {
                    categories(&layout.x_names, theme)
                }),
        )
        .y_axis(
            Axis::default()
                .title(Span::styled(
                    axis_title(&layout.y_label, &layout.y_unit, layout.y_log),
                    theme.label(),
                ))
                .bounds(yb)
                .labels(ticks(yb, layout.y_log, &layout.y_unit, theme)),
        )
        .legend_position(None);
    f.render_widget(c, area);
}
