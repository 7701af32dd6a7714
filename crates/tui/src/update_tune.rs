//! The tune view's part of `update`: opening it, its keys, and the news of the tune. No I/O:
//! starting and stopping are commands for the runtime.

use crossterm::event::{KeyCode, KeyEvent};

use std::path::PathBuf;

use super::app::{App, Confirm, Level, Overlay};
use super::msg::{Command, RunKind, TuneCmd, TuneMsg};
use super::overlays::tune::{TuneStage, TuneView};
use crate::outputs::OutputSet;
use crate::tune::TuneEvent;
use crate::tune::objective::Objective;

/// `t`: open the view (where it was left: a tune goes on behind the panes).
pub(crate) fn open(app: &mut App) -> Vec<Command> {
    if app.observe {
        app.notify(Level::Warn, app.look_only_why());
        return Vec::new();
    }
    if app.run.is_active() || app.import.busy() {
        app.notify(
            Level::Warn,
            "a run or an import is in progress: tune when it has ended (a tune needs the server to itself)",
        );
        return Vec::new();
    }
    if app.tune.stage == TuneStage::Form {
        // The workload as a DBA named it: the preset while its values are on screen, else the
        // experiment (the script's header gives every parameter).
        app.tune.workload = match app.params.spec_key() {
            Some(_) => app
                .params
                .preset_name()
                .unwrap_or_else(|| format!("{}, the parameters on screen", app.params.kind)),
            None => {
                app.notify(
                    Level::Warn,
                    "the parameters on screen do not parse: fix them, then tune (they are the workload)",
                );
                return Vec::new();
            }
        };
    }
    app.overlay = Overlay::Tune;
    Vec::new()
}

pub(crate) fn key(app: &mut App, ev: &KeyEvent) -> Vec<Command> {
    match app.tune.stage.clone() {
        TuneStage::Form => form_key(app, ev),
        TuneStage::Running => {
            if ev.code == KeyCode::Esc && !app.tune.cancelling {
                app.tune.cancelling = true;
                return vec![Command::Tune(TuneCmd::Cancel)];
            }
            Vec::new()
        }
        TuneStage::Done(_) => {
            if matches!(ev.code, KeyCode::Enter | KeyCode::Esc) {
                let v = &app.tune;
                app.tune = TuneView {
                    budget: v.budget.clone(),
                    settings: v.settings.clone(),
                    ..TuneView::default()
                };
                app.overlay = Overlay::None;
            }
            Vec::new()
        }
    }
}

fn form_key(app: &mut App, ev: &KeyEvent) -> Vec<Command> {
    let v = &mut app.tune;
    let field = if v.field == 0 {
        &mut v.budget
    } else {
        &mut v.settings
    };
    if super::line_edit::edit(field, ev) {
        return Vec::new();
    }
    match ev.code {
        KeyCode::Esc => app.overlay = Overlay::None,
        KeyCode::Tab | KeyCode::Down | KeyCode::Up | KeyCode::BackTab => v.field = 1 - v.field,
        KeyCode::Enter => return start(app),
        _ => {}
    }
    Vec::new()
}

fn start(app: &mut App) -> Vec<Command> {
    let spec = match app.params.spec_for(RunKind::Sweep) {
        Ok(s) => s,
        Err(_) => {
            app.tune.error = Some("the parameters on screen do not parse: fix them first".into());
            return Vec::new();
        }
    };
    let v = &mut app.tune;
    let budget = match crate::tune::setup::budget(v.budget.trim()) {
        Ok(b) => b,
        Err(e) => {
            v.error = Some(e);
            return Vec::new();
        }
    };
    let settings = match crate::tune::setup::settings(spec.kind(), &v.settings, false) {
        Ok(s) => s,
        Err(e) => {
            v.error = Some(e);
            return Vec::new();
        }
    };
    *v = TuneView {
        stage: TuneStage::Running,
        budget: v.budget.clone(),
        settings: v.settings.clone(),
        workload: v.workload.clone(),
        objective: Some(Objective::of(&spec)),
        total_s: budget.as_secs_f64(),
        progress: "reading the server and the host…".into(),
        ..TuneView::default()
    };
    vec![Command::Tune(TuneCmd::Start {
        workload: v.workload.clone(),
        spec: Box::new(spec),
        budget,
        settings,
        outputs: None,
    })]
}

/// The answer to "the script is there already": y replaces the files, n writes the numbered
/// ones, Esc (None) does not start the tune.
pub(crate) fn outputs_answer(app: &mut App, c: Confirm, yes: Option<bool>) -> Vec<Command> {
    app.overlay = Overlay::Tune;
    let Confirm::TuneOutputs {
        replace, numbered, ..
    } = c
    else {
        return Vec::new();
    };
    match yes {
        Some(true) => vec![Command::Tune(*replace)],
        Some(false) => vec![Command::Tune(*numbered)],
        None => {
            let v = &app.tune;
            app.tune = TuneView {
                budget: v.budget.clone(),
                settings: v.settings.clone(),
                workload: v.workload.clone(),
                error: Some("not started: the files that are there were left alone".into()),
                ..TuneView::default()
            };
            Vec::new()
        }
    }
}

/// The tune did not start because its files are there: ask.
fn ask_outputs(
    app: &mut App,
    existing: Vec<PathBuf>,
    taken: OutputSet,
    free: OutputSet,
    start: TuneCmd,
) {
    let with = |set: OutputSet| match start.clone() {
        TuneCmd::Start {
            workload,
            spec,
            budget,
            settings,
            ..
        } => TuneCmd::Start {
            workload,
            spec,
            budget,
            settings,
            outputs: Some(set),
        },
        other => other,
    };
    let question = format!(
        "{} already there: replace {} when the tune ends? n writes {} instead",
        OutputSet::names(&existing),
        if existing.len() == 1 { "it" } else { "them" },
        OutputSet::names(&free.files)
    );
    app.tune.progress = "waiting for the answer about the files…".into();
    app.overlay = Overlay::Confirm(Confirm::TuneOutputs {
        question,
        replace: Box::new(with(taken)),
        numbered: Box::new(with(free)),
    });
}

pub(crate) fn on_msg(app: &mut App, m: TuneMsg) -> Vec<Command> {
    let v = &mut app.tune;
    match m {
        TuneMsg::Event(ev) => match *ev {
            TuneEvent::Note(n) => v.notes.push(n),
            TuneEvent::Progress(p) => v.progress = p,
            TuneEvent::Round { setting, round, .. } => {
                v.progress = format!("{setting}: round {round}")
            }
            TuneEvent::Race(r) => v.race = Some(r),
            TuneEvent::Screen(s) => v.screen = Some(s),
            TuneEvent::Dropped { sentence, .. } => v.notes.push(sentence),
            TuneEvent::Decided(d) => {
                v.race = None;
                v.decided.push(d);
            }
            TuneEvent::Confirm(c) => v.confirm = Some(*c),
            TuneEvent::Budget { spent_s, total_s } => {
                v.spent_s = spent_s;
                v.total_s = total_s;
            }
        },
        TuneMsg::OutputsTaken {
            existing,
            taken,
            free,
            start,
        } => ask_outputs(app, existing, taken, free, *start),
        TuneMsg::Done(r) => {
            v.stage = TuneStage::Done(r);
            v.cancelling = false;
            if app.overlay != Overlay::Tune {
                app.notify(Level::Info, "the tune has ended: t shows what it found");
            }
        }
    }
    Vec::new()
}
