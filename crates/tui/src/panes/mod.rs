//! One file per pane: its state, how messages change it, and how it is drawn.

pub(crate) mod axis;
pub(crate) mod chart;
pub(crate) mod history_strip;
pub(crate) mod host;
pub(crate) mod params;
mod params_form;
pub(crate) mod results;
pub(crate) mod run;
pub(crate) mod run_head;
pub(crate) mod run_life;
pub(crate) mod run_view;
pub(crate) mod stall_spark;
pub(crate) mod summary;
pub(crate) mod tables;
pub(crate) mod target;
mod target_narrow;

use std::collections::VecDeque;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

use super::app::{App, Focus};
use super::text::{fit, pad, pad_left, spark, width};
use super::theme::Theme;

/// Readings kept for a sparkline: four minutes at one a second.
pub(crate) const SERIES_LEN: usize = 240;

/// A bounded series of readings, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series(VecDeque<f64>);

impl Series {
    pub(crate) fn push(&mut self, v: f64) {
        if self.0.len() == SERIES_LEN {
            self.0.pop_front();
        }
        self.0.push_back(v);
    }
    pub(crate) fn last(&self) -> Option<f64> {
        self.0.back().copied()
    }
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    pub(crate) fn iter(&self) -> std::collections::vec_deque::Iter<'_, f64> {
        self.0.iter()
    }
    pub(crate) fn clear(&mut self) {
        self.0.clear()
    }
}

/// Draw the bordered frame of a pane over `area` and return the space inside it. The title is
/// built from parts that are dropped from the end when the pane is too narrow for all of them.
pub(crate) fn framed_pane(
    app: &App,
    f: &mut Frame,
    pane: Focus,
    parts: &[String],
    area: Rect,
) -> Rect {
    let title = title_line(
        app.theme,
        pane.title(),
        parts,
        area.width.saturating_sub(4) as usize,
    );
    let block = pane_frame(app.theme, app.focus == pane, title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    inner
}

/// The one frame every pane (and the tabbed Parameters/Run pair) is drawn in: thick and
/// highlighted when focused, plain otherwise.
pub(crate) fn pane_frame<'a>(theme: Theme, focused: bool, title: Line<'a>) -> Block<'a> {
    Block::new()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            theme.focused_border()
        } else {
            theme.border()
        })
        .title(title)
}

/// ` Title ─ part · part ` fitted into `cols`.
pub(crate) fn title_line<'a>(theme: Theme, title: &str, parts: &[String], cols: usize) -> Line<'a> {
    let mut spans = vec![Span::styled(format!(" {title} "), theme.title())];
    let mut used = width(title) + 2;
    let mut first = true;
    for p in parts.iter().filter(|p| !p.is_empty()) {
        let sep = if first { "─ " } else { "· " };
        let add = width(sep) + width(p) + 1;
        if used + add > cols {
            break;
        }
        spans.push(Span::raw(sep));
        spans.push(Span::styled(format!("{p} "), theme.plain()));
        used += add;
        first = false;
    }
    Line::from(spans)
}

/// One live reading for a metrics grid: label, recent values, readout.
pub(crate) struct Metric<'a> {
    pub label: &'a str,
    pub series: &'a Series,
    /// Fixed top of the scale (e.g. 100 for a percentage); None scales to the shown values.
    pub max: Option<f64>,
    pub value: String,
}

/// Metrics in a grid of one or two columns: `label ▁▂▃▅ value`.
pub(crate) fn metrics_grid<'a>(
    theme: Theme,
    metrics: &[Metric],
    cols: usize,
    two_columns: bool,
) -> Vec<Line<'a>> {
    let ncol = if two_columns { 2 } else { 1 };
    let gap = 2;
    let cell = (cols.saturating_sub(gap * (ncol - 1))) / ncol;
    let label_w = metrics.iter().map(|m| width(m.label)).max().unwrap_or(0);
    let value_w = metrics
        .iter()
        .map(|m| width(&m.value))
        .max()
        .unwrap_or(0)
        .clamp(4, 11);
    let spark_w = cell.saturating_sub(label_w + value_w + 2);
    let mut lines = Vec::new();
    for row in metrics.chunks(ncol) {
        let mut spans: Vec<Span> = Vec::new();
        for (i, m) in row.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" ".repeat(gap)));
            }
            if spark_w >= 3 {
                spans.push(Span::styled(pad(m.label, label_w), theme.label()));
                spans.push(Span::raw(" "));
                spans.push(Span::styled(
                    spark(m.series.iter(), spark_w, m.max),
                    theme.spark(),
                ));
                spans.push(Span::raw(" "));
                spans.push(Span::styled(pad_left(&m.value, value_w), theme.value()));
            } else {
                let text = fit(&format!("{} {}", m.label, m.value), cell);
                spans.push(Span::styled(pad(&text, cell), theme.plain()));
            }
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// A left-aligned line of label/value pairs separated by ` · ` (already fitted).
pub(crate) fn plain_line<'a>(s: String, style: Style) -> Line<'a> {
    Line::from(Span::styled(s, style))
}
