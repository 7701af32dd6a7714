//! `update` for the two list overlays: the preset picker (`p`) and past runs (`h`). No I/O:
//! reading and writing presets and the history are commands.

use crossterm::event::KeyCode;

use super::app::{App, Confirm, Focus, Level, Overlay};
use super::keys::{Action, Key};
use super::msg::{Command, PresetOp};
use super::overlays::presets::{InputFor, NameInput};
use super::update::{set_focus, want_history};
use crate::experiment::RunReport;
use crate::preset::{self, Preset, PresetEntry, PresetError};

pub(crate) fn open_presets(app: &mut App) -> Vec<Command> {
    app.overlay = Overlay::Presets;
    app.presets.input = None;
    app.presets.message = None;
    app.presets.loading = true;
    vec![Command::LoadPresets]
}

pub(crate) fn open_runs(app: &mut App) -> Vec<Command> {
    app.overlay = Overlay::Runs;
    app.runs.view = None;
    app.runs.message = None;
    app.runs.loading = true;
    vec![Command::LoadRuns]
}

pub(crate) fn on_presets(app: &mut App, entries: Vec<PresetEntry>, problems: Vec<String>) {
    app.presets.apply(entries, problems);
}

pub(crate) fn on_runs(app: &mut App, runs: Vec<RunReport>, warnings: Vec<String>) {
    app.runs.apply(runs, warnings);
}

pub(super) fn is_up(app: &App, key: Key) -> bool {
    key.code == KeyCode::Up || app.keys.action(key) == Some(Action::Up)
}

pub(super) fn is_down(app: &App, key: Key) -> bool {
    key.code == KeyCode::Down || app.keys.action(key) == Some(Action::Down)
}

pub(super) fn closes(app: &App, key: Key, own: Action) -> bool {
    key.code == KeyCode::Esc
        || matches!(app.keys.action(key), Some(a) if a == own || a == Action::Quit)
}

pub(crate) fn presets_key(app: &mut App, key: Key) -> Vec<Command> {
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
        KeyCode::Backspace | KeyCode::Char(_) => {
            let ev = crossterm::event::KeyEvent::new(key.code, key.mods);
            super::line_edit::edit(&mut inp.text, &ev);
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

/// A question an overlay asked (about a preset, a tune's files): the overlay stays open.
pub(crate) fn overlay_confirm(app: &mut App, c: Confirm, key: KeyCode) -> Vec<Command> {
    let yes = match key {
        KeyCode::Char('y' | 'Y') => true,
        KeyCode::Char('n' | 'N') => false,
        KeyCode::Esc if matches!(c, Confirm::TuneOutputs { .. }) => {
            return super::update_tune::outputs_answer(app, c, None);
        }
        KeyCode::Esc => false,
        _ => {
            app.overlay = Overlay::Confirm(c);
            return Vec::new();
        }
    };
    match c {
        Confirm::TuneOutputs { .. } => super::update_tune::outputs_answer(app, c, Some(yes)),
        c => preset_confirm(app, c, yes),
    }
}

/// A y/n answer about a preset; the picker stays open either way.
pub(crate) fn preset_confirm(app: &mut App, c: Confirm, yes: bool) -> Vec<Command> {
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

pub(crate) fn on_preset_done(
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
