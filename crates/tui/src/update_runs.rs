//! The history overlay's keys: moving, the filters (`f` the experiment, `/` a text), opening
//! a run's report or a tune's rounds, the baseline and the comparison.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Level, Overlay};
use super::keys::{Action, Key};
use super::msg::Command;
use super::overlays::history::TextView;
use super::overlays::history_rows::Row;
use super::update_overlays::{closes, is_down, is_up};
use crate::report;

/// The text filter being typed: the field's keys; Enter keeps it, Esc clears it.
fn filter_key(app: &mut App, key: Key) -> Vec<Command> {
    let st = &mut app.runs;
    match key.code {
        KeyCode::Enter => st.typing = false,
        KeyCode::Esc => {
            st.typing = false;
            st.query.clear();
            st.refiltered();
        }
        _ => {
            if super::line_edit::edit(&mut st.query, &KeyEvent::new(key.code, key.mods)) {
                st.refiltered();
            }
        }
    }
    Vec::new()
}

/// How far ←/→ move a table wider than the screen.
const HSTEP: usize = 8;

pub(crate) fn runs_key(app: &mut App, key: Key) -> Vec<Command> {
    let page = app.size.1.saturating_sub(6).max(1) as isize;
    let up = is_up(app, key);
    let down = is_down(app, key);
    // The text columns of the overlay (its box less the borders).
    let view_cols = crate::tui::render::overlay_width(app.size.0, 200).saturating_sub(2) as usize;
    if let Some(v) = app.runs.view.as_mut() {
        match key.code {
            KeyCode::Left => v.hscroll_by(-(HSTEP as isize), view_cols),
            KeyCode::Right => v.hscroll_by(HSTEP as isize, view_cols),
            KeyCode::PageUp => v.scroll_by(-page),
            KeyCode::PageDown => v.scroll_by(page),
            KeyCode::Home => v.scroll = 0,
            _ if up => v.scroll_by(-1),
            _ if down => v.scroll_by(1),
            KeyCode::Esc | KeyCode::Enter => app.runs.view = None,
            _ if closes(app, key, Action::History) => app.runs.view = None,
            _ if app.keys.action(key) == Some(Action::Report) => {
                return super::update_report::request(app);
            }
            _ => {}
        }
        return Vec::new();
    }
    app.runs.message = None;
    if app.runs.typing {
        return filter_key(app, key);
    }
    if up || down {
        app.runs.step(down);
        return Vec::new();
    }
    if closes(app, key, Action::History) {
        app.overlay = Overlay::None;
        return Vec::new();
    }
    if app.keys.action(key) == Some(Action::Report) {
        return super::update_report::request(app);
    }
    match key.code {
        KeyCode::Left => app.runs.hscroll = app.runs.hscroll.saturating_sub(HSTEP),
        KeyCode::Right => {
            // Never past the table's right edge (the rows have a marker and a tune bar).
            let table = crate::report::history_table::list_table(&app.runs.shown());
            let widest = table.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            let max = widest.saturating_sub(view_cols.saturating_sub(4));
            app.runs.hscroll = (app.runs.hscroll + HSTEP).min(max);
        }
        KeyCode::Char('f') => app.runs.cycle_filter(),
        KeyCode::Char('/') => app.runs.typing = true,
        KeyCode::Enter => match app.runs.selected_row() {
            Some(Row::Tune { id, .. }) => {
                let id = id.to_string();
                app.runs.toggle_tune(&id);
            }
            Some(Row::Run { run: r, .. }) => {
                let title = format!("Run {} · {}", r.run_id, r.kind().as_str());
                let text = report::render(r, report::Format::Table);
                app.runs.view = Some(TextView::new(title, &text));
            }
            None => {}
        },
        KeyCode::Char('b') => {
            if let Some(id) = app.runs.selected_run().map(|r| r.run_id.clone()) {
                app.runs.say(
                    Level::Info,
                    format!("{id} is the baseline: c compares a run with it"),
                );
                app.runs.baseline = Some(id);
            }
        }
        KeyCode::Char('c') => compare_selected(app),
        _ => {}
    }
    Vec::new()
}

fn compare_selected(app: &mut App) {
    let Some(b) = app.runs.baseline_run() else {
        app.runs.say(
            Level::Warn,
            "no baseline yet: select a run and press b, then select another and press c",
        );
        return;
    };
    let Some(r) = app.runs.selected_run() else {
        app.runs.say(
            Level::Warn,
            "a tune's line is no run: Enter opens it, then select one of its runs",
        );
        return;
    };
    if r.run_id == b.run_id {
        app.runs.say(
            Level::Warn,
            "this run is the baseline: select another run to compare with it",
        );
        return;
    }
    match crate::history::compare(b, r) {
        Ok(c) => {
            let title = format!("Compare {} (baseline) with {}", b.run_id, r.run_id);
            let text = report::comparison::render(&c, report::Format::Table);
            app.runs.view = Some(TextView::new(title, &text));
        }
        Err(e) => {
            app.runs.say(Level::Error, e);
        }
    }
}
