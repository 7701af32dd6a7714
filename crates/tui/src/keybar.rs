//! The key bar: the keys that do something now, most useful first when space is short.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::app::{App, Focus, Overlay};
use super::keys::Action;
use super::text::width;

/// (key, what it does, priority: lower is kept longer).
type Item = (String, String, u8);

/// The keys the bar offers now, and a word before them (look-only, quitting).
pub(crate) fn items(app: &App) -> (Option<String>, Vec<Item>) {
    if let Some(v) = overlay_items(app) {
        return (None, v);
    }
    if app.params.editing.is_some() {
        return (None, editor_items());
    }
    let prefix = app.observe.then(|| {
        if app.observe_flag {
            "look-only (--observe)".to_string()
        } else {
            "look-only (o)".to_string()
        }
    });
    if app.quitting.is_some() {
        let v = vec![("C-c".into(), "quit without waiting".into(), 0)];
        return (Some("quitting: waiting for the run to stop…".into()), v);
    }
    (prefix, pane_items(app))
}

/// An overlay's own keys; None when no overlay is open.
fn overlay_items(app: &App) -> Option<Vec<Item>> {
    let mut v: Vec<Item> = Vec::new();
    match &app.overlay {
        Overlay::Confirm(_) => {
            v.push(("y".into(), "yes".into(), 0));
            v.push(("n".into(), "no".into(), 0));
        }
        Overlay::Help => {
            v.push(("Esc".into(), "close help".into(), 0));
        }
        Overlay::Presets => {
            if app.presets.input.is_some() {
                v.push(("Enter".into(), "accept".into(), 0));
                v.push(("Esc".into(), "abort".into(), 0));
            } else {
                v.push(("↑↓".into(), "select".into(), 1));
                v.push(("Enter".into(), "load".into(), 0));
                v.push(("S".into(), "save current".into(), 0));
                v.push(("R".into(), "rename".into(), 2));
                v.push(("D".into(), "delete".into(), 2));
                v.push(("Esc".into(), "close".into(), 0));
            }
        }
        Overlay::Runs => {
            if app.runs.view.is_some() {
                v.push(("↑↓ PgUp PgDn".into(), "scroll".into(), 1));
                v.push(("Esc".into(), "back".into(), 0));
            } else {
                v.push(("↑↓".into(), "select".into(), 1));
                v.push(("Enter".into(), "report".into(), 0));
                v.push(("f".into(), "filter".into(), 2));
                v.push(("b".into(), "baseline".into(), 1));
                v.push(("c".into(), "compare".into(), 1));
                v.push((app.keys.label(Action::Report), "write report".into(), 2));
                v.push(("Esc".into(), "close".into(), 0));
            }
        }
        Overlay::Plans(_) => {
            v.push(("←→".into(), "combination".into(), 0));
            v.push(("Tab".into(), "statement".into(), 1));
            v.push(("↑↓".into(), "scroll".into(), 1));
            v.push(("Esc".into(), "close".into(), 0));
        }
        Overlay::Import => {
            v.extend(super::overlays::import::keys(&app.import));
        }
        Overlay::Tune => {
            v.extend(super::overlays::tune::keys(&app.tune));
        }
        Overlay::Verify => {
            v.push(("↑↓ PgUp PgDn".into(), "scroll".into(), 1));
            v.push(("Esc".into(), "close".into(), 0));
        }
        Overlay::None => return None,
    }
    Some(v)
}

/// The keys of a field's editor.
fn editor_items() -> Vec<Item> {
    vec![
        ("Enter".into(), "accept".into(), 0),
        ("Esc".into(), "abort".into(), 0),
        ("←→".into(), "move".into(), 2),
        ("C-u".into(), "clear".into(), 3),
        ("C-c".into(), "quit".into(), 1),
    ]
}

/// The panes' keys: the run's, the focused pane's, then the ones that always work.
fn pane_items(app: &App) -> Vec<Item> {
    let k = |a: Action| app.keys.label(a);
    let mut v: Vec<Item> = Vec::new();
    if app.run.running() {
        v.push((k(Action::Cancel), "cancel run".into(), 0));
    } else if !app.observe {
        v.push((k(Action::Run), "run 1 trial".into(), 0));
        v.push((k(Action::Sweep), "sweep".into(), 1));
    }
    if app.focus == Focus::Params {
        v.push((k(Action::Edit), "edit".into(), 1));
    }
    if app.focus == Focus::Target {
        let what = if app.capture.is_some_and(|c| c.window) {
            "end window"
        } else {
            "window"
        };
        v.push((k(Action::Window), what.into(), 1));
        v.push((k(Action::Verify), "verify".into(), 1));
    }
    let on_run = app.focus == Focus::Run;
    let view_priority = match (on_run, app.run.samples.is_empty()) {
        (true, _) => 1,
        (false, false) => 3,
        (false, true) => 4,
    };
    v.push((k(Action::View), "view".into(), view_priority));
    if app.run.sweeps_settings() {
        let what = match app.run.axis() {
            crate::tui::panes::axis::Axis::Own => "x: settings",
            crate::tui::panes::axis::Axis::Settings => "x: own",
        };
        v.push((k(Action::Axis), what.into(), view_priority));
    }
    if on_run || app.zoom {
        let what = if app.zoom { "panes back" } else { "zoom" };
        v.push((k(Action::Zoom), what.into(), if app.zoom { 0 } else { 2 }));
    }
    if app.run.ended().is_some() && !app.run.run_id.is_empty() {
        v.push((k(Action::Report), "report".into(), 3));
    }
    if on_run {
        v.push(("↑↓".into(), "scroll".into(), 4));
        if crate::tui::panes::run::column_room(app) > 0 {
            v.push(("←→".into(), "columns".into(), 2));
        }
    }
    if app.run.query.is_some() {
        v.push((k(Action::Plans), "plans".into(), 2));
    }
    v.push((k(Action::NextExperiment), "experiment".into(), 3));
    v.push((k(Action::Presets), "presets".into(), 2));
    v.push((k(Action::History), "history".into(), 2));
    if app.host.probe.running.is_some() {
        if !app.run.running() {
            v.push((k(Action::Cancel), "cancel probe".into(), 1));
        }
    } else if !app.run.is_active() {
        v.push((k(Action::Probe), "disk probe".into(), 4));
    }
    v.push((k(Action::NextPane), "focus".into(), 5));
    v.push((k(Action::Help), "help".into(), 0));
    v.push((k(Action::Quit), "quit".into(), 0));
    v
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme;
    let (prefix, mut items) = items(app);
    let cols = area.width as usize;
    let item_w = |it: &Item| width(&it.0) + 1 + width(&it.1);
    let prefix_w = prefix.as_ref().map(|p| width(p) + 3).unwrap_or(0);
    let total = |items: &[Item]| {
        prefix_w + items.iter().map(item_w).sum::<usize>() + 3 * items.len().saturating_sub(1) + 1
    };
    while total(&items) > cols && !items.is_empty() {
        // Drop the least useful item (the last of the highest priority number).
        let worst = items
            .iter()
            .enumerate()
            .max_by_key(|(i, it)| (it.2, *i))
            .map(|(i, _)| i)
            .unwrap_or(0);
        items.remove(worst);
    }
    let mut spans = vec![Span::raw(" ")];
    if let Some(p) = prefix
        && width(&p) < cols
    {
        spans.push(Span::styled(p, theme.warn()));
        if !items.is_empty() {
            spans.push(Span::styled(" · ", theme.dim()));
        }
    }
    for (i, (key, label, _)) in items.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.dim()));
        }
        spans.push(Span::styled(key, theme.key()));
        spans.push(Span::raw(" "));
        spans.push(Span::styled(label, theme.label()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
