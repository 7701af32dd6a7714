//! The results part of the run pane: a chart of the finished trials (one dataset per series,
//! log axes where the layout says so, projected points with their own marker) and the table.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table};

use crate::experiment::{ResultLayout, Sample};
use crate::tui::app::App;
use crate::tui::text::{fit, unit_in_value, width, with_unit};
use crate::tui::theme::Theme;

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.run;
    let (Some(layout), false) = (&st.layout, st.samples.is_empty()) else {
        if st.running {
            f.render_widget(
                Paragraph::new(Line::styled(
                    "results appear here as trials finish",
                    app.theme.dim(),
                )),
                Rect::new(area.x, area.y, area.width, 1),
            );
        }
        return;
    };
    let samples = &st.samples;
    if area.width >= 100 {
        let chart_w = area.width * 58 / 100;
        chart(
            app.theme,
            layout,
            samples,
            f,
            Rect::new(area.x, area.y, chart_w, area.height),
        );
        table(
            app.theme,
            layout,
            samples,
            f,
            Rect::new(
                area.x + chart_w + 3,
                area.y,
                area.width - chart_w - 3,
                area.height,
            ),
        );
    } else if area.height >= 10 {
        // The table takes what its rows need, up to 45% of the height.
        let table_h = (area.height * 45 / 100)
            .min(samples.len() as u16 + 1)
            .max(3);
        let chart_h = area.height - table_h;
        chart(
            app.theme,
            layout,
            samples,
            f,
            Rect::new(area.x, area.y, area.width, chart_h),
        );
        table(
            app.theme,
            layout,
            samples,
            f,
            Rect::new(area.x, area.y + chart_h, area.width, table_h),
        );
    } else {
        table(app.theme, layout, samples, f, area);
    }
}

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

fn chart(theme: Theme, layout: &ResultLayout, samples: &[Sample], f: &mut Frame, area: Rect) {
    if area.height < 5 || area.width < 20 {
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for s in samples {
        if !names.contains(&s.series.as_str()) {
            names.push(&s.series);
        }
    }
    let point = |s: &Sample| (transform(s.x, layout.x_log), transform(s.y, layout.y_log));
    let measured: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| {
            samples
                .iter()
                .filter(|s| s.series == *n && !s.projected)
                .map(point)
                .collect()
        })
        .collect();
    let projected: Vec<Vec<(f64, f64)>> = names
        .iter()
        .map(|n| {
            samples
                .iter()
                .filter(|s| s.series == *n && s.projected)
                .map(point)
                .collect()
        })
        .collect();
    let all = || measured.iter().chain(projected.iter()).flatten();
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
    if projected.iter().any(|p| !p.is_empty()) {
        legend.push(Span::styled("  ⠂ projected", theme.dim()));
    }
    f.render_widget(
        Paragraph::new(Line::from(legend)).alignment(ratatui::layout::Alignment::Right),
        Rect::new(area.x, area.y, area.width, 1),
    );
    let area = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    let mut datasets = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if !measured[i].is_empty() {
            datasets.push(
                Dataset::default()
                    .name(n.to_string())
                    .marker(marker(i))
                    .graph_type(GraphType::Scatter)
                    .style(theme.series(i))
                    .data(&measured[i]),
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
                .labels(ticks(xb, layout.x_log, &layout.x_unit, theme)),
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

fn table(theme: Theme, layout: &ResultLayout, samples: &[Sample], f: &mut Frame, area: Rect) {
    if area.height < 2 || area.width < 10 {
        return;
    }
    let ncols = layout.columns.len();
    let mut widths: Vec<usize> = layout.columns.iter().map(|c| width(c)).collect();
    for s in samples {
        for (i, c) in s.cells.iter().enumerate().take(ncols) {
            widths[i] = widths[i].max(width(c));
        }
    }
    for w in &mut widths {
        *w = (*w).min(24);
    }
    // Whole columns only: those that do not fit are left out, never cut.
    let spacing = 2;
    let mut shown = 0;
    let mut used = 0;
    for w in &widths {
        let add = if shown == 0 { *w } else { *w + spacing };
        if used + add > area.width as usize {
            break;
        }
        used += add;
        shown += 1;
    }
    if shown == 0 {
        return;
    }
    let rows_room = area.height as usize - 1;
    let first = samples.len().saturating_sub(rows_room);
    let rows: Vec<Row> = samples[first..]
        .iter()
        .map(|s| {
            let style = if s.projected {
                theme.dim()
            } else {
                Style::new()
            };
            Row::new(
                (0..shown)
                    .map(|i| {
                        Cell::from(fit(
                            s.cells.get(i).map(String::as_str).unwrap_or(""),
                            widths[i],
                        ))
                    })
                    .collect::<Vec<_>>(),
            )
            .style(style)
        })
        .collect();
    let header = Row::new(
        layout.columns[..shown]
            .iter()
            .enumerate()
            .map(|(i, c)| Cell::from(fit(c, widths[i])))
            .collect::<Vec<_>>(),
    )
    .style(theme.title());
    let t = Table::new(
        rows,
        widths[..shown]
            .iter()
            .map(|w| Constraint::Length(*w as u16)),
    )
    .header(header)
    .column_spacing(spacing as u16);
    f.render_widget(t, area);
}
