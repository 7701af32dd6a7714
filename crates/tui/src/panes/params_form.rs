//! How the parameters pane is drawn: the form of fields (the one being edited with its
//! cursor), the selected field's help, and at the bottom what the run will cost or why it
//! cannot run.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::params::{Editor, ParamsState};
use super::{framed_pane, plain_line};
use crate::experiment::lab::field::FieldErrors;
use crate::experiment::{ExperimentSpec, FieldDef};
use crate::tui::app::{App, Focus};
use crate::tui::text::{fit, pack, pad, width, wrap};
use crate::tui::theme::Theme;

/// How long the sweep and one trial would take, by the history ("sweep 3m 10s–4m 02s",
/// "one trial ≈ 6.1 s"), or that nothing in it says.
fn time_items(app: &App) -> Vec<String> {
    let h = &app.history;
    if h.loading || h.spec_key.is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    match &h.eta.sweep {
        Some(e) => out.push(format!("sweep {}", e.range_text())),
        None => out.push("time: no past run to go by".into()),
    }
    // A trial that takes no measurable time (a projected step) says nothing useful.
    if let Some(e) = h.eta.one.as_ref().filter(|e| e.high_s >= 0.001) {
        out.push(format!("one trial {}", e.range_text()));
    }
    out
}

/// A value in `cols`: a path (a file field, a captured workload) keeps its file name and the
/// start of its directory, anything else is cut at a word or list boundary.
fn fit_value(value: &str, cols: usize) -> String {
    let path = value.contains('/') && !value.contains(char::is_whitespace);
    if path {
        crate::tui::text::fit_middle(value, cols)
    } else {
        fit(value, cols)
    }
}

/// Draw the pane in `area`: in its own frame when `title`, else (inside the tabbed
/// Parameters/Run pair) without one.
pub(crate) fn render(app: &App, f: &mut Frame, area: Rect, title: bool) {
    let st = &app.params;
    let theme = app.theme;
    let inner = if title {
        framed_pane(app, f, Focus::Params, &[st.kind.as_str().to_string()], area)
    } else {
        area
    };
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    if rows == 0 || cols < 10 {
        return;
    }
    let fields = st.fields();
    let (inner, rows) = restored_note(app, f, inner, rows);
    let label_w = fields
        .iter()
        .map(|f| width(f.key))
        .max()
        .unwrap_or(0)
        .min(cols / 2);
    let value_w = cols.saturating_sub(label_w + 3);
    let cost = cost(app, cols);
    // The cost sits on the last rows: two when there is room, else its first.
    // A reason why the run cannot start gets its two lines at every size (the fields scroll
    // to make room): it is what the user must read next.
    let cost_rows = if rows >= fields.len() + 3 || (st.parsed.is_err() && rows >= 6) {
        cost.len()
    } else {
        1
    };
    let cost: Vec<Line> = cost.into_iter().take(cost_rows).collect();
    let field_rows = fields.len().min(rows.saturating_sub(cost.len())).max(1);
    let sel = st.selected();
    let first = (sel + 1).saturating_sub(field_rows);
    let mut lines: Vec<Line> = fields
        .iter()
        .enumerate()
        .skip(first)
        .take(field_rows)
        .map(|(i, fd)| field_line(app, fd, i == sel, label_w, value_w))
        .collect();

    // Below the form: the selected field's help, then what the run will cost (or why it
    // cannot run).
    let mut footer: Vec<Line> = Vec::new();
    let spare = rows.saturating_sub(lines.len() + cost.len());
    if let Some(fd) = st.selected_field() {
        for l in wrap(fd.help, cols, 2.min(spare)) {
            footer.push(plain_line(l, theme.dim()));
        }
    }
    lines.extend(footer);
    lines.truncate(rows.saturating_sub(cost.len()));
    while lines.len() + cost.len() < rows {
        lines.push(Line::default());
    }
    lines.extend(cost);
    f.render_widget(Paragraph::new(lines), inner);
}

/// Restored values are said first, so nobody takes them for the defaults: the note takes the
/// top row when there is room, and the rest of `inner` (and its rows) is returned.
fn restored_note(app: &App, f: &mut Frame, inner: Rect, rows: usize) -> (Rect, usize) {
    if !(app.params.restored && rows > 4) {
        return (inner, rows);
    }
    let note = fit(
        "restored from your last session (p: presets)",
        inner.width as usize,
    );
    f.render_widget(
        Paragraph::new(plain_line(note, app.theme.dim())),
        Rect { height: 1, ..inner },
    );
    (
        Rect {
            y: inner.y + 1,
            height: inner.height - 1,
            ..inner
        },
        rows - 1,
    )
}

/// What the run will cost (the index build's table and sample; else the estimate's items,
/// with how long by the history second), or why it cannot run.
fn cost(app: &App, cols: usize) -> Vec<Line<'static>> {
    let st = &app.params;
    let theme = app.theme;
    match &st.parsed {
        Ok(ExperimentSpec::IndexBuild(s)) if s.table.is_some() => {
            let t = s.table.as_ref().map(|t| t.text()).unwrap_or_default();
            let items = vec![
                format!("on {} ({})", t[0].1, t[1].1),
                match s.table.as_ref().and_then(|t| t.sample) {
                    Some(_) => format!("{} sample, 3 sizes, projected", t[2].1),
                    None => "the whole table".into(),
                },
                format!("{} trials", s.trials()),
            ];
            pack(&items, cols, " · ", 2)
                .into_iter()
                .map(|l| plain_line(l, theme.accent()))
                .collect::<Vec<_>>()
        }
        Ok(spec) => {
            // The trials and the tables' size first, how long next: on a small screen only
            // the first row shows, and a longer time text must not push the size off it.
            let mut items = spec.estimate().items();
            let rest = items.split_off(2.min(items.len()));
            items.extend(time_items(app));
            items.extend(rest);
            pack(&items, cols, " · ", 2)
                .into_iter()
                .map(|l| plain_line(l, theme.accent()))
                .collect::<Vec<_>>()
        }
        Err(e) => invalid(st, e, cols, theme),
    }
}

/// The reason itself, at every size: the selected field's error when it has one, else the
/// first, and how many more there are.
fn invalid(st: &ParamsState, e: &FieldErrors, cols: usize, theme: Theme) -> Vec<Line<'static>> {
    let sel_key = st.selected_field().map(|f| f.key);
    let (k, why) = e
        .iter()
        .find(|(k, _)| Some(k.as_str()) == sel_key)
        .or(e.first())
        .map(|(k, w)| (k.as_str(), w.as_str()))
        .unwrap_or(("", ""));
    let more = if e.len() > 1 {
        format!(" (+{} more invalid)", e.len() - 1)
    } else {
        String::new()
    };
    wrap(&format!("✗ {k}: {}{more}", st.say(why)), cols, 2)
        .into_iter()
        .map(|l| plain_line(l, theme.error()))
        .collect::<Vec<_>>()
}

/// One field's row: the marker of the selection, its key, and its value (the editor when
/// it is being edited) with its error mark.
fn field_line(
    app: &App,
    fd: &FieldDef,
    is_sel: bool,
    label_w: usize,
    value_w: usize,
) -> Line<'static> {
    let st = &app.params;
    let theme = app.theme;
    let focused = app.focus == Focus::Params;
    let error = st.field_error(fd.key).map(|e| st.say(e));
    let marker = if is_sel && focused { "› " } else { "  " };
    let mut spans = vec![Span::raw(marker)];
    let label_style = if is_sel && focused {
        theme.title()
    } else {
        theme.label()
    };
    // One name per field: the editor shows the key the flag, the preset file and every
    // error message use.
    spans.push(Span::styled(pad(fd.key, label_w), label_style));
    spans.push(Span::raw(" "));
    match (&st.editing, is_sel) {
        (Some(ed), true) => {
            editor_spans(ed, value_w, theme, &mut spans);
            if error.is_some() {
                spans.push(Span::styled(" ✗", theme.error()));
            }
        }
        _ => {
            // A value of several lines (a preset's SQL) on one row: its lines joined by a
            // space, so `-- name: totals by customer` and `SELECT` do not run together.
            let joined = one_line(st.current().get(fd.key).map(String::as_str).unwrap_or(""));
            let value = joined.as_str();
            let value_style = if is_sel && focused {
                theme.selected()
            } else {
                theme.value()
            };
            match error {
                Some(e) => {
                    let v = fit(value, value_w.saturating_sub(2).max(1));
                    let beside = value_w.saturating_sub(width(&v) + 3);
                    spans.push(Span::styled(v.clone(), value_style));
                    // The reason beside the value when it fits; the line at the bottom
                    // always gives it in full.
                    if width(&e) <= beside {
                        spans.push(Span::styled(format!(" ✗ {e}"), theme.error()));
                    } else {
                        spans.push(Span::styled(" ✗", theme.error()));
                    }
                }
                None => spans.push(Span::styled(fit_value(value, value_w), value_style)),
            }
        }
    }
    Line::from(spans)
}

/// `s` on one row: every run of whitespace (newlines included) one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The editor's text around the cursor in `value_w`, the cursor as a reversed cell.
fn editor_spans(ed: &Editor, value_w: usize, theme: Theme, spans: &mut Vec<Span<'static>>) {
    let chars: Vec<char> = ed.text.chars().collect();
    let room = value_w.saturating_sub(2).max(1);
    let start = ed.cursor.saturating_sub(room.saturating_sub(1));
    let before: String = chars[start..ed.cursor].iter().collect();
    let at: String = chars
        .get(ed.cursor)
        .map(|c| c.to_string())
        .unwrap_or(" ".into());
    let after_end = (ed.cursor + 1 + room.saturating_sub(ed.cursor - start + 1)).min(chars.len());
    let after: String = chars
        .get(ed.cursor + 1..after_end)
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    spans.push(Span::styled(before, theme.value()));
    spans.push(Span::styled(at, theme.selected()));
    spans.push(Span::styled(after, theme.value()));
}
