//! `update` for the two list overlays: the preset picker (`p`) and past runs (`h`). No I/O:
//! reading and writing presets and the history are commands.

use crossterm::event::KeyCode;

use super::app::{App, Confirm, Focus, Level, Overlay};
use super::keys::{Action, Key};
use super::msg::{Command, PresetOp};
use super::overlays::history::TextView;
use super::overlays::presets::{InputFor, NameInput};
use super::update::{set_focus, want_history};
use crate::experiment::RunReport;
use crate::preset::{self, Preset, PresetEntry, PresetError};
use crate::report;

pub fn open_presets(app: &mut App) -> Vec<Command> {
    app.overlay = Overlay::Presets;
    app.presets.input = None;
    app.presets.message = None;
    app.presets.loading = true;
    vec![Command::LoadPresets]
}

pub fn open_runs(app: &mut App) -> Vec<Command> {
    app.overlay = Overlay::Runs;
    app.runs.view = None;
    app.runs.message = None;
    app.runs.loading = true;
    vec![Command::LoadRuns]
}

pub fn on_presets(app: &mut App, entries: Vec<PresetEntry>, problems: Vec<String>) {
    app.presets.apply(entries, problems);
}

pub fn on_runs(app: &mut App, runs: Vec<RunReport>, warnings: Vec<String>) {
    app.runs.apply(runs, warnings);
}

fn is_up(app: &App, key: Key) -> bool {
    key.code == KeyCode::Up || app.keys.action(key) == Some(Action::Up)
}

fn is_down(app: &App, key: Key) -> bool {
    key.code == KeyCode::Down || app.keys.action(key) == Some(Action::Down)
}

fn closes(app: &App, key: Key, own: Action) -> bool {
    key.code == KeyCode::Esc
        || matches!(app.keys.action(key), Some(a) if a == own || a == Action::Quit)
}

pub fn presets_key(app: &mut App, key: Key) -> Vec<Command> {
    if app.presets.input.is_some() {
        return name_key(app, key);
    }
    app.presets.message = None;
    if is_up(app, key) || is_down(app, key) {
        app.presets.step(is_down(app, key));
        return Vec::new();
    }
    if closes(app, key, Action::Presets) {
        app.overlay = Overlay::None;
        return Vec::new();
    }
    match key.code {
        KeyCode::Enter => load_selected(app),
        KeyCode::Char('S') => {
            app.presets.input = Some(NameInput {
                purpose: InputFor::Save,
                text: String::new(),
            });
            Vec::new()
        }
        KeyCode::Char('R' | 'D') => {
            let Some(e) = app.presets.selected_entry() else {
                return Vec::new();
            };
            let name = e.preset.name.clone();
            let (verb, rename) = if key.code == KeyCode::Char('R') {
                ("renamed", true)
            } else {
                ("deleted", false)
            };
            if e.shipped {
                let why = PresetError::Shipped { name, action: verb };
                app.presets.say(Level::Warn, why.to_string());
            } else if rename {
                app.presets.input = Some(NameInput {
                    purpose: InputFor::Rename { from: name.clone() },
                    text: name,
                });
            } else {
                let question = if e.shadows_shipped {
                    format!(
                        "Delete your preset '{name}'? The shipped one of that name shows again."
                    )
                } else {
                    format!("Delete your preset '{name}'? This cannot be undone.")
                };
                app.overlay = Overlay::Confirm(Confirm::DeletePreset { name, question });
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn load_selected(app: &mut App) -> Vec<Command> {
    let Some(e) = app.presets.selected_entry() else {
        return Vec::new();
    };
    let p = e.preset.clone();
    if app.params.editing.is_some() {
        app.params.editing = None;
    }
    app.params.load(&p.name, p.experiment, &p.params);
    app.overlay = Overlay::None;
    set_focus(app, Focus::Params);
    app.notify(
        Level::Info,
        format!("loaded preset '{}' ({})", p.name, p.experiment.as_str()),
    );
    want_history(app)
}

/// The one-line name input of save and rename.
fn name_key(app: &mut App, key: Key) -> Vec<Command> {
    let Some(inp) = app.presets.input.as_mut() else {
        return Vec::new();
    };
    match key.code {
        KeyCode::Esc => {
            app.presets.input = None;
            app.presets.message = None;
        }
        KeyCode::Backspace => {
            inp.text.pop();
        }
        KeyCode::Char('u') if key.mods.contains(crossterm::event::KeyModifiers::CONTROL) => {
            inp.text.clear();
        }
        KeyCode::Char(c) if key.mods.is_empty() => {
            inp.text.push(c);
        }
        KeyCode::Enter => {
            let name = inp.text.trim().to_string();
            if let Err(e) = preset::check_name(&name) {
                app.presets.say(Level::Error, e.to_string());
                return Vec::new();
            }
            let purpose = inp.purpose.clone();
            app.presets.input = None;
            app.presets.message = None;
            let op = match purpose {
                InputFor::Save => PresetOp::Save {
                    preset: Box::new(current_preset(app, name)),
                    overwrite: false,
                },
                InputFor::Rename { from } => {
                    if from == name {
                        return Vec::new();
                    }
                    PresetOp::Rename { from, to: name }
                }
            };
            return vec![Command::Preset(op)];
        }
        _ => {}
    }
    Vec::new()
}

/// The parameters on screen as a preset named `name`.
fn current_preset(app: &App, name: String) -> Preset {
    let kind = app.params.kind;
    Preset {
        name,
        description: format!("{} parameters saved from the lab", kind.as_str()),
        experiment: kind,
        params: app.params.current().clone(),
        source: None,
    }
}

/// A y/n answer about a preset; the picker stays open either way.
pub fn preset_confirm(app: &mut App, c: Confirm, yes: bool) -> Vec<Command> {
    app.overlay = Overlay::Presets;
    match (c, yes) {
        (Confirm::OverwritePreset { preset, .. }, true) => vec![Command::Preset(PresetOp::Save {
            preset,
            overwrite: true,
        })],
        (Confirm::DeletePreset { name, .. }, true) => {
            vec![Command::Preset(PresetOp::Delete { name })]
        }
        (Confirm::OverwritePreset { preset, .. }, false) => {
            app.presets
                .say(Level::Info, format!("'{}' left as it was", preset.name));
            Vec::new()
        }
        (Confirm::DeletePreset { name, .. }, false) => {
            app.presets.say(Level::Info, format!("'{name}' kept"));
            Vec::new()
        }
        _ => Vec::new(),
    }
}

pub fn on_preset_done(
    app: &mut App,
    op: PresetOp,
    result: Result<(), PresetError>,
) -> Vec<Command> {
    match (op, result) {
        (PresetOp::Save { preset, .. }, Err(PresetError::Exists { name, .. })) => {
            if app.overlay == Overlay::Presets {
                app.overlay = Overlay::Confirm(Confirm::OverwritePreset {
                    question: format!("A preset named '{name}' already exists. Overwrite it?"),
                    preset,
                });
            }
            Vec::new()
        }
        (_, Err(e)) => {
            app.presets.say(Level::Error, e.to_string());
            Vec::new()
        }
        (op, Ok(())) => {
            if let PresetOp::Rename { from, to } = &op {
                // The list is read again: keep the selection on the renamed preset.
                for e in app.presets.entries.iter_mut() {
                    if e.preset.name == *from {
                        e.preset.name = to.clone();
                    }
                }
            }
            let text = match op {
                PresetOp::Save { preset, .. } => format!("saved preset '{}'", preset.name),
                PresetOp::Rename { from, to } => format!("renamed '{from}' to '{to}'"),
                PresetOp::Delete { name } => format!("deleted preset '{name}'"),
            };
            app.presets.say(Level::Info, text);
            vec![Command::LoadPresets]
        }
    }
}

/// How far ←/→ move a table wider than the screen.
const HSTEP: usize = 8;

pub fn runs_key(app: &mut App, key: Key) -> Vec<Command> {
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
            _ => {}
        }
        return Vec::new();
    }
    app.runs.message = None;
    if up || down {
        app.runs.step(down);
        return Vec::new();
    }
    if closes(app, key, Action::History) {
        app.overlay = Overlay::None;
        return Vec::new();
    }
    match key.code {
        KeyCode::Left => app.runs.hscroll = app.runs.hscroll.saturating_sub(HSTEP),
        KeyCode::Right => {
            // Never past the table's right edge (the rows have a 2-column marker).
            let table = crate::report::history_table::list_table(&app.runs.shown());
            let widest = table.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            let max = widest.saturating_sub(view_cols.saturating_sub(2));
            app.runs.hscroll = (app.runs.hscroll + HSTEP).min(max);
        }
        KeyCode::Char('f') => app.runs.cycle_filter(),
        KeyCode::Enter => {
            if let Some(r) = app.runs.selected_run() {
                let title = format!("Run {} · {}", r.run_id, r.kind().as_str());
                let text = report::render(r, report::Format::Table);
                app.runs.view = Some(TextView::new(title, &text));
            }
        }
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
