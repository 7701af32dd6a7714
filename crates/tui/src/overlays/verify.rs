//! The verify view (`V`): the last two windows recorded from the Target pane (`W`) compared as
//! `pglab verify` compares two files (the same decision object, [`crate::capture::verify::verify`]):
//! the headline first, the windows and the settings that changed, then statement by
//! statement its ratio, interval and verdict with the mechanism beside it. Scrollable; the
//! lines are wrapped to the screen, so it reads on 80×24.

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use crate::capture::verify::Verification;
use crate::capture::verify::compare::Row;
use crate::capture::verify::render;
use crate::capture::verify::render::{ms_number as ms, x};
use crate::tui::text::{fit, wrap};
use crate::tui::theme::Theme;

/// The comparison on screen: what was compared and where the view is scrolled.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyView {
    pub verification: Box<Verification>,
    /// The two window files' names, before and after.
    pub files: (String, String),
    pub scroll: usize,
}

#[derive(Clone, Copy)]
enum Tone {
    Head,
    Plain,
    Warn,
    Good,
    Dim,
}

fn verdict_tone(verdict: &str) -> Tone {
    match verdict {
        "faster" => Tone::Good,
        "slower" => Tone::Warn,
        _ => Tone::Plain,
    }
}

type Lines = Vec<(String, Tone)>;

/// `s` wrapped to `cols`, each line in tone `t`.
fn push(out: &mut Lines, s: &str, t: Tone, cols: usize) {
    for l in wrap(s, cols, usize::MAX) {
        out.push((l, t));
    }
}

/// The view's text at `cols` wide, each line with its tone.
fn text(view: &VerifyView, cols: usize) -> Lines {
    let v = &view.verification;
    let mut out = head(view, cols);
    for r in &v.rows {
        out.push((String::new(), Tone::Plain));
        statement(&mut out, r, cols);
    }
    for (what, list) in [
        ("too few calls to compare", &v.too_few),
        ("new in the second window", &v.new),
        ("gone in the second window", &v.gone),
    ] {
        if !list.is_empty() {
            let names: Vec<&str> = list.iter().map(|a| a.name.as_str()).collect();
            out.push((String::new(), Tone::Plain));
            push(
                &mut out,
                &format!("{what}: {}", names.join(", ")),
                Tone::Dim,
                cols,
            );
        }
    }
    out
}

/// The headline, the windows, the settings that changed, the notes and the total.
fn head(view: &VerifyView, cols: usize) -> Lines {
    let v = &view.verification;
    let mut out = Lines::new();
    push(&mut out, &v.headline, Tone::Head, cols);
    let mut top = String::new();
    render::top(v, &mut top, "");
    for l in top.lines() {
        let tone = if l.starts_with("setting changed") {
            Tone::Warn
        } else {
            Tone::Plain
        };
        push(&mut out, l, tone, cols);
    }
    let files = format!("windows: {} → {}", view.files.0, view.files.1);
    push(&mut out, &files, Tone::Dim, cols);
    if let Some(t) = &v.total {
        let total = format!(
            "time-weighted total of {}: {} [{} … {}] {}",
            t.statements,
            x(t.ratio),
            x(t.low),
            x(t.high),
            t.verdict
        );
        push(&mut out, &total, verdict_tone(&t.verdict), cols);
    }
    out
}

/// One statement: its ratio, interval and verdict, the mechanism, its text, its flags.
fn statement(out: &mut Lines, r: &Row, cols: usize) {
    let head = format!(
        "{} · {} [{} … {}] {}",
        r.name,
        x(r.ratio),
        x(r.low),
        x(r.high),
        r.verdict
    );
    push(out, &head, verdict_tone(&r.verdict), cols);
    let lab = r.lab.map_or(String::new(), |l| format!(" · lab {}", x(l)));
    let figures = format!(
        "  ms/call {}→{} · calls {:.0}→{:.0} · rows {:.1}→{:.1} · read {:.1}→{:.1} · temp {:.1}→{:.1}{lab}",
        ms(r.mean_ms.before),
        ms(r.mean_ms.after),
        r.calls_before,
        r.calls_after,
        r.rows.before,
        r.rows.after,
        r.shared_read.before,
        r.shared_read.after,
        r.temp.before,
        r.temp.after
    );
    push(out, &figures, Tone::Plain, cols);
    out.push((fit(&format!("  {}", one_line(&r.query)), cols), Tone::Dim));
    for f in &r.flags {
        push(
            out,
            &format!("  flagged, not in the headline: {f}"),
            Tone::Warn,
            cols,
        );
    }
}

fn one_line(q: &str) -> String {
    q.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn style(t: Tone, theme: Theme) -> Style {
    match t {
        Tone::Head => theme.title(),
        Tone::Plain => theme.plain(),
        Tone::Warn => theme.warn(),
        Tone::Good => theme.good(),
        Tone::Dim => theme.dim(),
    }
}

/// The scroll after `key` (↑↓ j k PgUp PgDn Home End); `draw` keeps it within the text.
pub(crate) fn scroll(at: usize, key: KeyCode) -> usize {
    super::help::scroll(at, key)
}

/// Draw `view` over `area` (the whole screen).
pub fn draw(view: &VerifyView, theme: Theme, f: &mut Frame, area: Rect) {
    let w = crate::tui::render::overlay_width(area.width, 120);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let title = format!(" Verify · {} ", view.verification.database);
    let inner = crate::tui::render::framed(f, rect, &title, theme.focused_border(), theme);
    let cols = inner.width as usize;
    let all = text(view, cols);
    let room = (inner.height as usize).saturating_sub(1);
    let top = view.scroll.min(all.len().saturating_sub(room));
    let mut lines: Vec<Line> = all
        .iter()
        .skip(top)
        .take(room)
        .map(|(s, t)| Line::styled(s.clone(), style(*t, theme)))
        .collect();
    let pos = format!(
        "lines {}–{} of {} · ↑↓ PgUp PgDn scroll · Esc close",
        top + 1,
        (top + room).min(all.len()),
        all.len()
    );
    lines.push(Line::styled(fit(&pos, cols), theme.dim()));
    f.render_widget(Paragraph::new(lines), inner);
}

pub(crate) fn render(app: &crate::tui::app::App, f: &mut Frame, area: Rect) {
    if let Some(view) = &app.verify {
        draw(view, app.theme, f, area);
    }
}
