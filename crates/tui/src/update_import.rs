//! The import dialog's part of `update`: opening it, its keys, and the news from the source
//! and the import. No I/O: listing and importing are commands for the runtime.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Level, Overlay};
use super::msg::{Command, ImportCmd, ImportMsg};
use super::overlays::import::{ImportDialog, SAMPLES, Stage};
use crate::experiment::ExperimentKind;
use crate::import::{ImportEvent, ImportSpec};

/// `i`: open the dialog (where it was left, unless that was a finished import).
pub(crate) fn open(app: &mut App) -> Vec<Command> {
    if app.observe {
        app.notify(Level::Warn, app.look_only_why());
        return Vec::new();
    }
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            "a run is in progress: import when it has ended (an import would share its server)",
        );
        return Vec::new();
    }
    let citus = app
        .target
        .latest
        .as_ref()
        .is_some_and(|s| s.citus.is_some());
    if citus {
        app.notify(
            Level::Warn,
            "import fills a single-server sandbox: start pglab without --citus-workers to import",
        );
        return Vec::new();
    }
    if !matches!(app.target.location, crate::server::Location::Sandbox { .. }) {
        app.notify(
            Level::Warn,
            "import fills pglab's sandbox: start pglab without --db (or with --sandbox) to import, or use `pglab sandbox import`",
        );
        return Vec::new();
    }
    if matches!(app.import.stage, Stage::Done(_)) {
        let conninfo = std::mem::take(&mut app.import.conninfo);
        app.import = ImportDialog {
            conninfo,
            ..ImportDialog::default()
        };
    }
    app.overlay = Overlay::Import;
    Vec::new()
}

pub(crate) fn key(app: &mut App, ev: &KeyEvent) -> Vec<Command> {
    let d = &mut app.import;
    match d.stage.clone() {
        Stage::Source => source_key(app, ev),
        Stage::Listing => {
            if ev.code == KeyCode::Esc {
                app.overlay = Overlay::None;
            }
            Vec::new()
        }
        Stage::Tables => tables_key(app, ev),
        Stage::Importing => {
            if ev.code == KeyCode::Esc && !d.cancelling {
                d.cancelling = true;
                return vec![Command::Import(ImportCmd::Cancel)];
            }
            Vec::new()
        }
        Stage::Done(r) => {
            match ev.code {
                KeyCode::Char('b') => {
                    if let Ok(Some(first)) = r.as_ref().map(|v| v.first()) {
                        let table = first.table.to_string();
                        app.params.set_kind(ExperimentKind::IndexBuild);
                        app.params.set_value("table", &table);
                        app.params.select("column");
                        super::update::set_focus(app, super::app::Focus::Params);
                        app.overlay = Overlay::None;
                        app.notify(
                            Level::Info,
                            format!("index-build now builds on {table}: set column (Enter on it) and run"),
                        );
                        return super::update::want_history(app);
                    }
                }
                KeyCode::Enter | KeyCode::Esc => app.overlay = Overlay::None,
                _ => {}
            }
            Vec::new()
        }
    }
}

fn source_key(app: &mut App, ev: &KeyEvent) -> Vec<Command> {
    let d = &mut app.import;
    match ev.code {
        KeyCode::Esc => app.overlay = Overlay::None,
        KeyCode::Enter => {
            let conninfo = d.conninfo.trim().to_string();
            if conninfo.is_empty() {
                d.error = Some("give the server to read from: a URL or key=value conninfo".into());
                return Vec::new();
            }
            d.error = None;
            d.stage = Stage::Listing;
            return vec![Command::Import(ImportCmd::List { conninfo })];
        }
        _ => {
            super::line_edit::edit(&mut d.conninfo, ev);
        }
    }
    Vec::new()
}

fn tables_key(app: &mut App, ev: &KeyEvent) -> Vec<Command> {
    let d = &mut app.import;
    let n = d.tables.len();
    match ev.code {
        KeyCode::Esc => {
            d.stage = Stage::Source;
            d.error = None;
        }
        KeyCode::Up | KeyCode::Char('k') => d.cursor = d.cursor.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => d.cursor = (d.cursor + 1).min(n.saturating_sub(1)),
        KeyCode::Char(' ') => {
            if let Some(c) = d.chosen.get_mut(d.cursor) {
                *c = !*c;
            }
        }
        KeyCode::Right | KeyCode::Char('+') => d.sample = (d.sample + 1).min(SAMPLES.len() - 1),
        KeyCode::Left | KeyCode::Char('-') => d.sample = d.sample.saturating_sub(1),
        KeyCode::Char('x') => d.indexes = !d.indexes,
        KeyCode::Enter => {
            let tables: Vec<_> = d.selection().into_iter().map(|t| t.name.clone()).collect();
            if tables.is_empty() {
                d.error = Some("no table to import: tick one with Space".into());
                return Vec::new();
            }
            let spec = ImportSpec {
                tables,
                sample: d.sample(),
                seed: 42,
                indexes: d.indexes,
            };
            d.stage = Stage::Importing;
            d.error = None;
            d.notes.clear();
            d.progress = None;
            d.cancelling = false;
            d.phase = "starting the import…".into();
            return vec![Command::Import(ImportCmd::Start {
                conninfo: d.conninfo.trim().to_string(),
                spec,
            })];
        }
        _ => {}
    }
    Vec::new()
}

/// News from the source or the import.
pub(crate) fn on_msg(app: &mut App, m: ImportMsg) -> Vec<Command> {
    let d = &mut app.import;
    match m {
        ImportMsg::Tables(Ok(tables)) => {
            d.chosen = vec![false; tables.len()];
            d.tables = tables;
            d.cursor = 0;
            d.stage = Stage::Tables;
        }
        ImportMsg::Tables(Err(e)) => {
            d.stage = Stage::Source;
            d.error = Some(e);
        }
        ImportMsg::Event(ev) => match ev {
            ImportEvent::Phase(p) => d.phase = p,
            ImportEvent::Progress(p) => d.progress = Some(p),
            ImportEvent::Note(n) => d.notes.push(n),
            ImportEvent::Finished(r) => {
                d.stage = Stage::Done(Ok(r.records.clone()));
                if app.overlay != Overlay::Import {
                    app.notify(
                        Level::Info,
                        "the import has finished: i shows what it brought",
                    );
                }
            }
            ImportEvent::Cancelled => {
                d.stage = Stage::Done(Err("import cancelled: the sandbox is as it was".into()));
            }
            ImportEvent::Failed { error, refused } => {
                d.stage = Stage::Done(Err(if refused {
                    error
                } else {
                    format!("import failed: {error}; the sandbox is as it was")
                }));
            }
        },
    }
    Vec::new()
}
