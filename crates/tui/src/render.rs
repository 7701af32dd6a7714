//! `render`: draws the whole screen from the state. No I/O, changes nothing.
//!
//! ```text
//! ┌ Target ──────────────────┐┌ Host ──────────────┐
//! └──────────────────────────┘└────────────────────┘
//! ┌ Parameters ─┐┌ Run ──────────────────────────────┐   (below 100×28 the lower
//! └─────────────┘└───────────────────────────────────┘    panes become tabs)
//!  History ▃▃▄▃▃▂▃ …
//!  notice (when there is one)
//!  key bar
//! ```

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::app::{App, Focus, Level, Overlay, is_compact};
use super::panes::{self, history_strip, host, params, run, target};
use super::text::{fit, width, wrap};
use super::theme::Theme;
use super::{keybar, overlays};

/// Below this the screen says it is too small instead of drawing overlapping panes.
pub(crate) const MIN_SIZE: (u16, u16) = (60, 16);

pub fn render(app: &App, f: &mut Frame) {
    let area = f.area();
    if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
        let text = format!(
            "pglab needs at least {}×{}; this terminal is {}×{}",
            MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
        );
        let lines: Vec<Line> = wrap(&text, area.width as usize, area.height as usize)
            .into_iter()
            .map(Line::from)
            .collect();
        f.render_widget(Paragraph::new(lines), area);
        return;
    }
    let ([top, lower, strip, note, bar], notice) = rows(app, area);

    if app.zoom {
        // The Run pane over the top and lower panes: a result table whole (`z` gives them back).
        run::render(app, f, zoomed(top, lower), true);
    } else {
        panes_unzoomed(app, f, area, top, lower);
    }
    history_strip::render(app, f, strip);
    if let Some(n) = &app.notice {
        let style = match n.level {
            Level::Info => app.theme.accent(),
            Level::Warn => app.theme.warn(),
            Level::Error => app.theme.error(),
        };
        let lines: Vec<Line> = notice
            .into_iter()
            .map(|l| Line::from(Span::styled(format!(" {l}"), style)))
            .collect();
        f.render_widget(Paragraph::new(lines), note);
    }
    keybar::render(app, f, bar);

    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => overlays::help::render(app, f, area),
        Overlay::Presets => overlays::presets::render(app, f, area),
        Overlay::Runs => overlays::history::render(app, f, area),
        Overlay::Plans(c) => overlays::plans::render(app, f, area, c),
        Overlay::Import => overlays::import::render(app, f, area),
        Overlay::Tune => overlays::tune::render(app, f, area),
        Overlay::Verify => overlays::verify::render(app, f, area),
        Overlay::Confirm(c) => confirm(app, f, area, c.question()),
    }
}

/// Target and Host above, Parameters and Run below (as tabs on small screens).
fn panes_unzoomed(app: &App, f: &mut Frame, area: Rect, top: Rect, lower: Rect) {
    let [ta, ha] = Layout::horizontal([
        Constraint::Length(target_width(area.width)),
        Constraint::Min(20),
    ])
    .areas(top);
    target::render(app, f, ta);
    host::render(app, f, ha);

    if is_compact(area.width, area.height) {
        lower_tabs(app, f, lower);
    } else {
        let [pa, ra] = lower_split(lower);
        params::render(app, f, pa, true);
        run::render(app, f, ra, true);
    }
}

/// The space of the zoomed Run pane: from the top of the screen to the bottom of the lower
/// panes.
fn zoomed(top: Rect, lower: Rect) -> Rect {
    Rect::new(
        top.x,
        top.y,
        top.width,
        (lower.y + lower.height).saturating_sub(top.y),
    )
}

fn target_width(cols: u16) -> u16 {
    if cols >= 140 {
        cols * 58 / 100
    } else {
        cols * 52 / 100
    }
}

/// The rows of the screen (top panes, lower panes, history strip, notice, key bar) and the
/// notice's lines.
fn rows(app: &App, area: Rect) -> ([Rect; 5], Vec<String>) {
    let notice: Vec<String> = app
        .notice
        .as_ref()
        // A refusal or a failure is what the user must read next: it gets up to six lines,
        // so its advice is not cut off at 80 columns (enabling pg_stat_statements takes five);
        // other notices two.
        .map(|n| {
            let most = if matches!(n.level, Level::Error | Level::Warn) {
                6
            } else {
                2
            };
            wrap(&n.text, area.width.saturating_sub(2) as usize, most)
        })
        .unwrap_or_default();
    // Narrow panes stack their readings one to a row: give them two more rows when the
    // height allows (the parameters scroll).
    let narrow = (target_width(area.width) as usize).saturating_sub(2) < target::TWO_COLUMNS;
    let top_h = if area.height >= 40 || (narrow && area.height >= 24) {
        10
    } else {
        8
    };
    let rows = Layout::vertical([
        Constraint::Length(top_h),
        Constraint::Min(6),
        Constraint::Length(1),
        Constraint::Length(notice.len() as u16),
        Constraint::Length(1),
    ])
    .areas(area);
    (rows, notice)
}

/// Parameters and Run side by side (large terminals).
fn lower_split(lower: Rect) -> [Rect; 2] {
    let params_w = (lower.width * 36 / 100).clamp(34, 52);
    Layout::horizontal([Constraint::Length(params_w), Constraint::Min(20)]).areas(lower)
}

/// The inside of the run pane as `render` draws it on a screen of `app.size`; None when it
/// is not on screen. `update` scrolls the pane by it.
pub(crate) fn run_inner(app: &App) -> Option<Rect> {
    let (w, h) = app.size;
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 {
        return None;
    }
    let ([top, lower, ..], _) = rows(app, Rect::new(0, 0, w, h));
    let pane = if app.zoom {
        zoomed(top, lower)
    } else if is_compact(w, h) {
        (app.lower == Focus::Run).then_some(lower)?
    } else {
        lower_split(lower)[1]
    };
    Some(pane.inner(ratatui::layout::Margin::new(1, 1)))
}

/// Parameters and Run as tabs in one frame, for small terminals.
fn lower_tabs(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme;
    let focused = matches!(app.focus, Focus::Params | Focus::Run);
    let shown = app.lower;
    let sub = |p: Focus| -> String {
        match p {
            Focus::Params => app.params.kind.as_str().to_string(),
            _ => run::title_parts(app).join(" · "),
        }
    };
    let room = area.width.saturating_sub(4) as usize;
    let tab = |p: Focus, with_sub: bool| -> String {
        let s = sub(p);
        let name = if p == shown {
            format!("[{}]", p.title())
        } else {
            p.title().to_string()
        };
        if with_sub && !s.is_empty() {
            format!("{name} ─ {s}")
        } else {
            name
        }
    };
    // Subtitles go first when space is short; the titles always stay.
    let mut tabs = [tab(Focus::Params, true), tab(Focus::Run, true)];
    let total = |t: &[String; 2]| width(&t[0]) + width(&t[1]) + 5;
    if total(&tabs) > room {
        let other = if shown == Focus::Params { 1 } else { 0 };
        tabs[other] = tab(
            if other == 0 {
                Focus::Params
            } else {
                Focus::Run
            },
            false,
        );
    }
    if total(&tabs) > room {
        tabs = [tab(Focus::Params, false), tab(Focus::Run, false)];
    }
    let style_of = |p: Focus| {
        if p == shown {
            theme.title()
        } else {
            theme.dim()
        }
    };
    let title = Line::from(vec![
        Span::raw(" "),
        Span::styled(fit(&tabs[0], room), style_of(Focus::Params)),
        Span::styled(" │ ", theme.dim()),
        Span::styled(tabs[1].clone(), style_of(Focus::Run)),
        Span::raw(" "),
    ]);
    let block = panes::pane_frame(theme, focused, title);
    let inner = block.inner(area);
    f.render_widget(block, area);
    match shown {
        Focus::Run => run::render(app, f, inner, false),
        _ => params::render(app, f, inner, false),
    }
}

/// A bordered box over the screen, at most `max_w` wide, leaving the key bar visible; returns
/// the space inside it.
pub(crate) fn overlay_box(app: &App, f: &mut Frame, area: Rect, title: &str, max_w: u16) -> Rect {
    let theme = app.theme;
    let w = overlay_width(area.width, max_w);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y, w, h);
    framed(f, rect, title, theme.focused_border(), theme)
}

/// The outer width of an overlay box on a screen `screen_w` wide (its text has 2 fewer).
pub(crate) fn overlay_width(screen_w: u16, max_w: u16) -> u16 {
    screen_w.saturating_sub(2).min(max_w)
}

/// Clear `rect`, draw a double border titled `title` around it, and return the space inside
/// with one column of padding each side: the frame every overlay and dialog shares.
pub(crate) fn framed(f: &mut Frame, rect: Rect, title: &str, border: Style, theme: Theme) -> Rect {
    f.render_widget(Clear, rect);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(border)
        .title(Span::styled(title.to_string(), theme.title()));
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    Rect::new(
        inner.x + 1,
        inner.y,
        inner.width.saturating_sub(2),
        inner.height,
    )
}

fn confirm(app: &App, f: &mut Frame, area: Rect, question: &str) {
    let theme = app.theme;
    let w = area.width.saturating_sub(4).min(64);
    let inner_w = w.saturating_sub(4) as usize;
    let mut lines: Vec<Line> = wrap(question, inner_w, 6)
        .into_iter()
        .map(|l| Line::styled(l, theme.plain()))
        .collect();
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled("y", theme.key()),
        Span::raw(" yes · "),
        Span::styled("n", theme.key()),
        Span::raw(" no"),
    ]));
    let h = lines.len() as u16 + 2;
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + area.height.saturating_sub(h) / 2,
        w,
        h.min(area.height),
    );
    let inner = framed(f, rect, " Confirm ", theme.warn(), theme);
    f.render_widget(Paragraph::new(lines), inner);
}
