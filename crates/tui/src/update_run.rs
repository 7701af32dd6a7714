//! The run pane's own keys: the view key cycles summary, trials, chart and findings (from
//! any pane: it brings the run pane up); while the run pane has the focus, ↑↓ (j k) scroll
//! it a line, PgUp PgDn a page, Home End to either end.

use crossterm::event::KeyCode;

use super::app::{App, Focus};
use super::keys::{Action, Key};
use super::panes::run;
use super::panes::run_view::ScrollBy;
use super::update::set_focus;

/// Show the next view of the run pane, and the pane itself.
/// Swap the run pane's x axis between the experiment's own setting and the swept server
/// settings (a run without `--set` keeps its own axis).
pub(crate) fn toggle_axis(app: &mut App) {
    use crate::tui::panes::axis::Axis;
    if !app.run.sweeps_settings() {
        app.notify(
            crate::tui::app::Level::Info,
            format!(
                "{}: the run on screen sweeps no server setting to put on the x axis; give set a list (shared_buffers=128MB,1GB) and run",
                app.keys.label(Action::Axis)
            ),
        );
        return;
    }
    app.run.axis = Some(match app.run.axis() {
        Axis::Own => Axis::Settings,
        Axis::Settings => Axis::Own,
    });
    app.run.hscroll = 0;
    set_focus(app, Focus::Run);
}

/// The Run pane on the whole screen (`z`), and back.
pub(crate) fn toggle_zoom(app: &mut App) {
    let zoom = !app.zoom;
    set_focus(app, Focus::Run);
    app.zoom = zoom;
}

pub(crate) fn next_view(app: &mut App) {
    let next = app.run.view.next();
    app.run.set_view(next);
    set_focus(app, Focus::Run);
}

/// The scroll a key asks for in the focused run pane; None for keys that are not scrolling.
pub(crate) fn scroll_of(app: &App, key: Key, action: Option<Action>) -> Option<ScrollBy> {
    if app.focus != Focus::Run {
        return None;
    }
    match action {
        Some(Action::Up) => return Some(ScrollBy::Lines(-1)),
        Some(Action::Down) => return Some(ScrollBy::Lines(1)),
        _ => {}
    }
    if !key.mods.is_empty() {
        return None;
    }
    match key.code {
        KeyCode::PageUp => Some(ScrollBy::Pages(-1)),
        KeyCode::PageDown => Some(ScrollBy::Pages(1)),
        KeyCode::Home => Some(ScrollBy::Top),
        KeyCode::End => Some(ScrollBy::End),
        _ => None,
    }
}

/// ←→ in the focused run pane: scroll the table's columns; ← with none scrolled off is the
/// key that leaves the pane (false: not handled here).
pub(crate) fn scroll_columns(app: &mut App, action: Option<Action>) -> bool {
    if app.focus != Focus::Run {
        return false;
    }
    let room = run::column_room(app);
    app.run.hscroll = app.run.hscroll.min(room);
    match action {
        Some(Action::Right) if app.run.hscroll < room => {
            app.run.hscroll += 1;
            true
        }
        Some(Action::Left) if app.run.hscroll > 0 => {
            app.run.hscroll -= 1;
            true
        }
        _ => false,
    }
}

/// Scroll the run pane by what it shows now.
pub(crate) fn scroll(app: &mut App, by: ScrollBy) {
    if let Some((len, visible)) = run::viewport(app) {
        app.run.scroll.apply(by, len, visible);
    }
}
