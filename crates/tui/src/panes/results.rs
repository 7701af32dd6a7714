//! The results part of the run pane, in the view the user chose (see `run_view`): the
//! per-setting summary or the per-trial table (each with the chart beside or above it when
//! the pane has room for both), the chart alone, or the findings. The lists scroll.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::run_view::RunView;
use super::summary::{self, SeriesSummary};
use super::{chart, tables};
use crate::tui::app::App;
use crate::tui::text::{width, wrap};

/// The chart beside a list needs at least this many columns, above it this many rows.
const CHART_MIN_W: usize = 40;
const CHART_MIN_H: u16 = 8;

/// A scrolling list: its fixed header line, its lines, the width its columns need, and its
/// columns (shown, in all, how many can scroll off).
struct List<'a> {
    header: Line<'a>,
    lines: Vec<Line<'a>>,
    natural: usize,
    columns: (usize, usize, usize),
}

/// The per-setting summary of the run so far.
fn summaries(app: &App) -> Vec<SeriesSummary> {
    let st = &app.run;
    match st.on_axis() {
        Some((l, samples)) => summary::summarize(&l, &samples, &st.rules),
        None => Vec::new(),
    }
}

/// The view's list at `cols`; None for the chart, or when there is nothing to list yet.
fn list<'a>(app: &App, series: &[SeriesSummary], cols: usize) -> Option<List<'a>> {
    let st = &app.run;
    let theme = app.theme;
    match st.view {
        RunView::Chart => None,
        RunView::Findings => {
            let mut lines = Vec::new();
            if !st.decision.is_empty() {
                let text = format!("recommendation: {}", st.decision.join(" "));
                for l in wrap(&text, cols.saturating_sub(2), 50) {
                    lines.push(Line::styled(l, theme.accent()));
                }
            }
            for n in &st.notes {
                for (i, l) in wrap(n, cols.saturating_sub(2), 50).into_iter().enumerate() {
                    let lead = if i == 0 { "• " } else { "  " };
                    lines.push(Line::styled(format!("{lead}{l}"), theme.plain()));
                }
            }
            let header = match st.notes.len() {
                0 if st.running() => "findings appear here as the run reaches them".to_string(),
                0 => "no findings: the run noted nothing".to_string(),
                1 => "findings and notes: 1".to_string(),
                n => format!("findings and notes: {n}"),
            };
            Some(List {
                header: Line::styled(header, theme.title()),
                lines,
                natural: cols,
                columns: (0, 0, 0),
            })
        }
        RunView::Summary | RunView::Trials => {
            let (layout, samples) = st.on_axis()?;
            if st.samples.is_empty() {
                return None;
            }
            let t = if st.view == RunView::Summary {
                // Once the run is over, the findings its report decided (on the experiment's
                // own axis; layouts that compare the series at each x show the experiment's
                // findings per x instead).
                let decided;
                let series = if st.decided.is_empty()
                    || st.running()
                    || st.axis() != super::axis::Axis::Own
                    || layout.compare == crate::experiment::Compare::Series
                {
                    series
                } else {
                    decided = summary::from_decided(&layout, &st.decided);
                    decided.as_slice()
                };
                let names = super::axis::swept_names(&st.samples);
                let own_axis = st.axis() == super::axis::Axis::Own;
                let input = tables::SettingsInput {
                    layout: &layout,
                    series,
                    findings: &summary::findings_by_x(&samples),
                    series_title: if own_axis && !names.is_empty() {
                        format!("series · {names}")
                    } else {
                        "series".into()
                    },
                    rules: &st.rules,
                };
                tables::settings(theme, &input, cols, st.hscroll)
            } else {
                tables::trials(theme, &layout, &st.samples, cols, st.hscroll)
            };
            Some(List {
                header: t.header,
                lines: t.rows,
                natural: t.natural,
                columns: (t.shown, t.total, t.max_skip),
            })
        }
    }
}

/// Where the chart and the list go in `body`.
struct Split {
    chart: Option<Rect>,
    list: Option<Rect>,
}

fn split(app: &App, body: Rect, natural: Option<(usize, usize)>) -> Split {
    let has_chart = app.run.layout.is_some() && !app.run.samples.is_empty();
    let (w, h) = (body.width as usize, body.height);
    let Some((natural, len)) = natural else {
        return Split {
            chart: (app.run.view == RunView::Chart).then_some(body),
            list: None,
        };
    };
    if app.run.view == RunView::Findings || !has_chart {
        return Split {
            chart: None,
            list: Some(body),
        };
    }
    let list_w = natural.max(48).min(w);
    if list_w + 3 + CHART_MIN_W <= w && h >= CHART_MIN_H {
        let chart_w = (w - list_w - 3) as u16;
        return Split {
            chart: Some(Rect::new(body.x, body.y, chart_w, h)),
            list: Some(Rect::new(
                body.x + chart_w + 3,
                body.y,
                body.width - chart_w - 3,
                h,
            )),
        };
    }
    // Above the list: the list takes what its lines need, up to 45% of the height; zoomed
    // (`z`), all it needs: the whole result first, the chart only with room to spare.
    let list_h = if app.zoom {
        (len + 1).min(h as usize) as u16
    } else {
        ((h as usize * 45 / 100).min(len + 1).max(4)) as u16
    };
    if h >= list_h + CHART_MIN_H {
        let chart_h = h - list_h;
        return Split {
            chart: Some(Rect::new(body.x, body.y, body.width, chart_h)),
            list: Some(Rect::new(body.x, body.y + chart_h, body.width, list_h)),
        };
    }
    Split {
        chart: None,
        list: Some(body),
    }
}

/// The list and where it goes; the chart's place.
fn arrange<'a>(app: &App, series: &[SeriesSummary], body: Rect) -> (Split, Option<List<'a>>) {
    // The list's natural width decides the split; it is then laid out for its real width.
    let probe = list(app, series, body.width as usize);
    let s = split(
        app,
        body,
        probe.as_ref().map(|l| (l.natural, l.lines.len())),
    );
    let l = match s.list {
        Some(r) if r.width != body.width => list(app, series, r.width as usize),
        _ => probe,
    };
    (s, l)
}

/// How many lines the view's list has and how many fit below its header.
pub(crate) fn viewport(app: &App, body: Rect) -> (usize, usize) {
    let series = summaries(app);
    match arrange(app, &series, body) {
        (
            Split {
                list: Some(r),
                chart: _,
            },
            Some(l),
        ) => (l.lines.len(), r.height.saturating_sub(1) as usize),
        _ => (0, 0),
    }
}

/// How many columns of the view's table can scroll off to the left (0: all fit).
pub(crate) fn column_room(app: &App, body: Rect) -> usize {
    let series = summaries(app);
    match arrange(app, &series, body) {
        (Split { list: Some(_), .. }, Some(l)) => l.columns.2,
        _ => 0,
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, body: Rect) {
    let st = &app.run;
    let series = summaries(app);
    let (split, list) = arrange(app, &series, body);
    let nothing = st.samples.is_empty() && !matches!(st.view, RunView::Findings);
    if nothing {
        if st.running() {
            f.render_widget(
                Paragraph::new(Line::styled(
                    "results appear here as trials finish",
                    app.theme.dim(),
                )),
                Rect::new(body.x, body.y, body.width, 1),
            );
        }
        return;
    }
    if let (Some(r), Some((layout, samples))) = (split.chart, st.on_axis()) {
        chart::render(app.theme, &layout, &series, &samples, f, r);
    }
    if let (Some(r), Some(l)) = (split.list, list) {
        draw_list(app, f, r, l);
    }
}

/// The header, then the lines from the scroll position; where the list is when it does not
/// all fit ("12–17/30") at the header's right end.
fn draw_list(app: &App, f: &mut Frame, area: Rect, l: List) {
    if area.height == 0 {
        return;
    }
    let visible = area.height as usize - 1;
    let len = l.lines.len();
    let first = app.run.scroll.first(len, visible);
    let header_w = l.header.width();
    f.render_widget(
        Paragraph::new(l.header),
        Rect::new(area.x, area.y, area.width, 1),
    );
    // Some columns are scrolled off or do not fit: arrows say which way ←→ reach them (over
    // the header's end when it is full: they are what the user needs to know).
    let (shown, total, room) = l.columns;
    let hidden = room > 0 && shown < total;
    let skip = app.run.hscroll.min(room);
    let arrows = match (hidden && skip > 0, hidden && skip < room) {
        (true, true) => " ←→",
        (true, false) => " ←",
        (false, true) => " →",
        (false, false) => "",
    };
    let mut pos = String::new();
    if len > visible && visible > 0 {
        pos = format!(" {}–{}/{len}", first + 1, (first + visible).min(len));
    }
    let (aw, pw) = (width(arrows) as u16, width(&pos) as u16);
    // Like the arrows, the position goes over the header's end when the header runs on past
    // the pane (columns hidden to the right: its end is cut anyway); at 80 columns the
    // trials' header always does, and where the list is matters more. Scrolled to the last
    // column, the header's end is a real column's name and keeps its place.
    let cut_on_the_right = hidden && skip < room;
    let fits = header_w as u16 + aw + pw < area.width;
    if !pos.is_empty() && (fits || (cut_on_the_right && aw + pw < area.width)) {
        f.render_widget(
            Paragraph::new(Span::styled(pos, app.theme.dim())),
            Rect::new(area.x + area.width - aw - pw, area.y, pw, 1),
        );
    }
    if aw > 0 && aw < area.width {
        f.render_widget(
            Paragraph::new(Span::styled(arrows, app.theme.accent())),
            Rect::new(area.x + area.width - aw, area.y, aw, 1),
        );
    }
    let lines: Vec<Line> = l.lines.into_iter().skip(first).take(visible).collect();
    f.render_widget(
        Paragraph::new(lines),
        Rect::new(area.x, area.y + 1, area.width, visible as u16),
    );
}
