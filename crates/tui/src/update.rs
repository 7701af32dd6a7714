//! `update`: a message in, the state changed, commands out. No I/O here.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::app::{App, Confirm, Focus, Level, Overlay};
use super::keys::{Action, Key};
use super::msg::{Command, Msg, ProbeStage, RunKind};
use super::overlays::plans;
use super::panes::params::Edit;
use super::update_overlays as ov;
use super::update_run;
use super::update_start as start;
use crate::experiment::{ExperimentKind, RunEvent};

/// How long quitting waits for a cancelled run to clean up before leaving anyway.
pub(crate) const QUIT_GRACE: Duration = Duration::from_secs(30);

/// The commands to run once at start-up.
pub(crate) fn init(app: &mut App) -> Vec<Command> {
    let mut cmds = want_history(app);
    if !app.observe {
        cmds.push(Command::FindLeftovers);
    }
    cmds
}

/// Offer to drop what interrupted runs left (never datasets, never a live run's tables).
fn on_leftovers(
    app: &mut App,
    objects: Vec<crate::experiment::lab::leftovers::LabObject>,
) -> Vec<Command> {
    if objects.is_empty() || app.overlay != Overlay::None {
        return Vec::new();
    }
    let names: Vec<String> = objects.iter().map(|o| o.name.clone()).collect();
    let shown = if names.len() > 3 {
        format!("{} and {} more", names[..3].join(", "), names.len() - 3)
    } else {
        names.join(", ")
    };
    app.overlay = Overlay::Confirm(Confirm::CleanLeftovers {
        question: format!(
            "interrupted runs left {} object(s) in the lab schema ({shown}); drop them now? (same as pglab clean)",
            names.len()
        ),
        objects,
    });
    Vec::new()
}

pub fn update(app: &mut App, msg: Msg) -> Vec<Command> {
    let cmds = dispatch(app, msg);
    super::run_shelf::follow_experiment(app);
    cmds
}

fn dispatch(app: &mut App, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::Leftovers(objects) => on_leftovers(app, objects),
        Msg::Cleaned(r) => {
            match r {
                Ok(d) if d.is_empty() => app.notify(Level::Info, "nothing was left to drop"),
                Ok(d) => app.notify(Level::Info, format!("cleaned up: dropped {}", d.join(", "))),
                Err(e) => app.notify(Level::Error, format!("cleaning failed: {e}")),
            }
            Vec::new()
        }
        Msg::Key(k) => {
            pglab_engine::fault::point("tui-key");
            on_key(app, k)
        }
        Msg::Resize(w, h) => {
            app.size = (w, h);
            Vec::new()
        }
        Msg::Tick => match app.quitting {
            Some(t) if app.now.saturating_duration_since(t) > QUIT_GRACE => vec![Command::Quit],
            _ => Vec::new(),
        },
        Msg::Server(m) => {
            app.target.apply(m, app.now);
            Vec::new()
        }
        Msg::HostInfo(i) => {
            app.host.info = Some(*i);
            Vec::new()
        }
        Msg::HostSample(s) => {
            app.host.push(s);
            Vec::new()
        }
        Msg::Probe(p) => {
            app.host.probe.apply(p, app.now);
            Vec::new()
        }
        Msg::Capture(m) => super::update_capture::on_msg(app, m),
        Msg::Verified(r) => super::update_verify::on_msg(app, r),
        Msg::RunRefused(why) => {
            app.run.refused(why);
            Vec::new()
        }
        Msg::ReportWritten(r) => super::update_report::on_written(app, r),
        Msg::Preflight {
            spec,
            kind,
            verdict,
        } => start::on_preflight(app, spec, kind, *verdict),
        Msg::Run(ev) => on_run_event(app, ev),
        Msg::RunClosed => {
            let was_running = app.run.running();
            app.run.closed(app.now);
            if was_running {
                after_run(app)
            } else {
                Vec::new()
            }
        }
        Msg::History { spec_key, past } => {
            app.history.apply(spec_key, past);
            Vec::new()
        }
        Msg::Presets { entries, problems } => {
            ov::on_presets(app, entries, problems);
            Vec::new()
        }
        Msg::PresetDone { op, result } => ov::on_preset_done(app, op, result),
        Msg::Runs { runs, warnings } => {
            ov::on_runs(app, runs, warnings);
            Vec::new()
        }
        Msg::Import(m) => super::update_import::on_msg(app, m),
        Msg::Tune(m) => super::update_tune::on_msg(app, m),
        Msg::Shutdown => {
            app.by_signal = true;
            app.overlay = Overlay::None;
            begin_quit(app)
        }
    }
}

fn on_key(app: &mut App, ev: KeyEvent) -> Vec<Command> {
    if ev.kind == KeyEventKind::Release {
        return Vec::new();
    }
    let key = Key::from_event(&ev);
    if key.is_ctrl_c() {
        app.params.editing = None;
        app.params.preview = None;
        return request_quit(app);
    }
    match &app.overlay {
        Overlay::Confirm(_) => return on_confirm_key(app, key),
        Overlay::Help => {
            let closes = matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q'))
                || matches!(
                    app.keys.action(key),
                    Some(Action::Help | Action::Quit | Action::Cancel)
                );
            if closes {
                app.overlay = Overlay::None;
            }
            app.help_scroll = super::overlays::help::scroll(app.help_scroll, key.code);
            return Vec::new();
        }
        Overlay::Presets => return ov::presets_key(app, key),
        Overlay::Runs => return super::update_runs::runs_key(app, key),
        Overlay::Plans(c) => {
            let page = app.size.1.saturating_sub(6) as usize;
            app.overlay = match app.run.query.as_deref() {
                Some(r) => plans::step(r, *c, key.code, page).map_or(Overlay::None, Overlay::Plans),
                None => Overlay::None,
            };
            return Vec::new();
        }
        Overlay::Import => return super::update_import::key(app, &ev),
        Overlay::Tune => return super::update_tune::key(app, &ev),
        Overlay::Verify => return super::update_verify::key(app, key),
        Overlay::None => {}
    }
    if app.params.editing.is_some() {
        return match app.params.edit_key(&ev) {
            Edit::Accepted { changed: true } => want_history(app),
            _ => Vec::new(),
        };
    }
    app.notice = None;
    let action = app.keys.action(key);
    if let Some(by) = update_run::scroll_of(app, key, action) {
        update_run::scroll(app, by);
        return Vec::new();
    }
    if update_run::scroll_columns(app, action) {
        return Vec::new();
    }
    match action {
        Some(a) => on_action(app, a),
        None => Vec::new(),
    }
}

fn on_confirm_key(app: &mut App, key: Key) -> Vec<Command> {
    let Overlay::Confirm(c) = std::mem::replace(&mut app.overlay, Overlay::None) else {
        return Vec::new();
    };
    if !matches!(
        c,
        Confirm::StartRun { .. } | Confirm::Quit { .. } | Confirm::CleanLeftovers { .. }
    ) {
        return ov::overlay_confirm(app, c, key.code);
    }
    match key.code {
        KeyCode::Char('y' | 'Y') => match c {
            Confirm::StartRun { spec, kind, .. } => start::start_run(app, spec, kind),
            Confirm::Quit { .. } => begin_quit(app),
            Confirm::CleanLeftovers { objects, .. } => vec![Command::CleanLeftovers(objects)],
            _ => Vec::new(),
        },
        KeyCode::Char('n' | 'N') | KeyCode::Esc => {
            if matches!(c, Confirm::StartRun { .. }) {
                app.notify(Level::Info, "run not started");
            }
            Vec::new()
        }
        _ => {
            app.overlay = Overlay::Confirm(c);
            Vec::new()
        }
    }
}

fn on_action(app: &mut App, action: Action) -> Vec<Command> {
    match action {
        Action::Quit => request_quit(app),
        Action::Help => {
            app.overlay = Overlay::Help;
            app.help_scroll = 0;
            Vec::new()
        }
        Action::Run => start::request_run(app, RunKind::Single),
        Action::Sweep => start::request_run(app, RunKind::Sweep),
        Action::Cancel => cancel(app),
        Action::Edit => {
            // Enter edits the selected parameter from whichever pane has the focus: a key
            // that did nothing in Target or Host would send what is typed next nowhere.
            set_focus(app, Focus::Params);
            app.params.start_edit();
            Vec::new()
        }
        Action::NextExperiment => {
            let all = ExperimentKind::ALL;
            let i = all.iter().position(|k| *k == app.params.kind).unwrap_or(0);
            switch_experiment(app, all[(i + 1) % all.len()])
        }
        Action::Experiment1 => switch_experiment(app, ExperimentKind::IndexBuild),
        Action::Experiment2 => switch_experiment(app, ExperimentKind::Ingest),
        Action::Experiment3 => switch_experiment(app, ExperimentKind::Growth),
        Action::Experiment4 => switch_experiment(app, ExperimentKind::Query),
        Action::Plans => {
            match app.run.query.as_deref().and_then(plans::first) {
                Some(c) => app.overlay = Overlay::Plans(c),
                None => app.notify(
                    Level::Info,
                    "no plans yet: the plan view shows a query run's plans once it ends",
                ),
            }
            Vec::new()
        }
        Action::Probe => request_probe(app),
        Action::Observe => {
            toggle_observe(app);
            Vec::new()
        }
        Action::View => {
            update_run::next_view(app);
            Vec::new()
        }
        Action::Axis => {
            update_run::toggle_axis(app);
            Vec::new()
        }
        Action::Zoom => {
            update_run::toggle_zoom(app);
            Vec::new()
        }
        Action::Report => super::update_report::request(app),
        Action::Presets => ov::open_presets(app),
        Action::History => ov::open_runs(app),
        Action::Import => super::update_import::open(app),
        Action::Tune => super::update_tune::open(app),
        Action::Capture => super::update_capture::request(app),
        Action::Window => super::update_capture::request_window(app),
        Action::Verify => super::update_verify::request(app),
        Action::NextPane | Action::PrevPane => {
            let order = Focus::ORDER;
            let i = order.iter().position(|f| *f == app.focus).unwrap_or(0);
            let j = if action == Action::NextPane {
                (i + 1) % order.len()
            } else {
                (i + order.len() - 1) % order.len()
            };
            set_focus(app, order[j]);
            Vec::new()
        }
        Action::Left | Action::Right | Action::Up | Action::Down => {
            navigate(app, action);
            Vec::new()
        }
    }
}

/// `o`: look-only on or off (never off when `--observe` promised it).
fn toggle_observe(app: &mut App) {
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            "a run is in progress: cancel it (Esc) before switching to look-only",
        );
    } else if app.observe_flag {
        // --observe is a promise made on the command line (often against a server
        // that must not be written to): a key does not break it.
        app.notify(Level::Warn, app.look_only_why());
    } else {
        app.observe = !app.observe;
        app.notify(
            Level::Info,
            if app.observe {
                "look-only: experiments and disk probes are off, nothing is written (o turns them on)"
            } else {
                "experiments are on"
            },
        );
    }
}

pub(crate) fn set_focus(app: &mut App, f: Focus) {
    app.focus = f;
    // The zoomed Run pane is the only one on screen: focus elsewhere gives the panes back.
    if f != Focus::Run {
        app.zoom = false;
    }
    if matches!(f, Focus::Params | Focus::Run) {
        app.lower = f;
    }
}

fn navigate(app: &mut App, dir: Action) {
    let lower_left = if app.compact() {
        app.lower
    } else {
        Focus::Params
    };
    let lower_right = if app.compact() { app.lower } else { Focus::Run };
    let to = match (app.focus, dir) {
        (Focus::Host, Action::Left) => Focus::Target,
        (Focus::Target, Action::Right) => Focus::Host,
        (Focus::Run, Action::Left) => Focus::Params,
        (Focus::Params, Action::Right) => Focus::Run,
        (Focus::Target, Action::Down) => lower_left,
        (Focus::Host, Action::Down) => lower_right,
        (Focus::Params, Action::Up) => {
            // At the first field ↑ stays: the focus moving to Target there sent the keys
            // typed next (Enter, a value) nowhere. Tab and S-Tab reach the upper panes.
            app.params.select_step(false);
            return;
        }
        (Focus::Params, Action::Down) => {
            app.params.select_step(true);
            return;
        }
        (f, _) => f,
    };
    set_focus(app, to);
}

fn switch_experiment(app: &mut App, kind: ExperimentKind) -> Vec<Command> {
    if app.params.kind != kind {
        app.params.set_kind(kind);
    }
    want_history(app)
}

/// Ask for the history of the current spec when it is not the one shown.
pub(super) fn want_history(app: &mut App) -> Vec<Command> {
    let key = app.params.spec_key();
    if app.history.want(key.clone())
        && let (Some(spec_key), Ok(spec)) = (key, app.params.parsed.as_ref())
    {
        return vec![Command::LoadHistory {
            spec_key,
            spec: Box::new(spec.clone()),
        }];
    }
    Vec::new()
}

fn cancel(app: &mut App) -> Vec<Command> {
    if app.run.running() {
        if app.run.life.cancel() {
            return vec![Command::CancelRun];
        }
        return Vec::new();
    }
    if app.run.life.preparing().is_some() {
        app.run.life.unprepare();
        app.notify(Level::Info, "run not started");
        return Vec::new();
    }
    if app.host.probe.running.is_some() && !app.host.probe.cancelling {
        app.host.probe.cancelling = true;
        return vec![Command::CancelProbe];
    }
    super::update_capture::cancel(app)
}

fn request_probe(app: &mut App) -> Vec<Command> {
    if app.observe {
        let why = app.look_only_why();
        app.notify(
            Level::Warn,
            format!("the disk probes write 256 MB and fsync: not in {why}"),
        );
        return Vec::new();
    }
    if app.host.probe.running.is_some() {
        app.notify(
            Level::Info,
            format!(
                "the disk probe is running: {} cancels it",
                app.keys.label(Action::Cancel)
            ),
        );
        return Vec::new();
    }
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            "not while a run is in progress: the probe would disturb its timings",
        );
        return Vec::new();
    }
    app.host.probe.running = Some((ProbeStage::SeqWrite, 0.0));
    app.host.probe.cancelling = false;
    app.host.probe.error = None;
    vec![Command::StartProbe]
}

fn request_quit(app: &mut App) -> Vec<Command> {
    if app.quitting.is_some() {
        // Asked again while waiting for the run to stop: leave now.
        return vec![Command::Quit];
    }
    if app.run.running() {
        app.overlay = Overlay::Confirm(Confirm::Quit {
            question: "A run is in progress. Cancel it (its tables are dropped) and quit?".into(),
        });
        return Vec::new();
    }
    begin_quit(app)
}

/// Quit now, or cancel the run and quit when it has stopped.
fn begin_quit(app: &mut App) -> Vec<Command> {
    let mut cmds = Vec::new();
    if app.host.probe.running.is_some() {
        app.host.probe.cancelling = true;
        cmds.push(Command::CancelProbe);
    }
    app.run.life.unprepare();
    if app.run.running() {
        app.quitting = Some(app.now);
        if app.run.life.cancel() {
            cmds.push(Command::CancelRun);
        }
        return cmds;
    }
    cmds.push(Command::Quit);
    cmds
}

fn on_run_event(app: &mut App, ev: RunEvent) -> Vec<Command> {
    if app.run.apply(ev, app.now) {
        return after_run(app);
    }
    Vec::new()
}

fn after_run(app: &mut App) -> Vec<Command> {
    if app.quitting.is_some() {
        return vec![Command::Quit];
    }
    // The run may have added to the history of the spec on screen.
    app.history.spec_key = None;
    want_history(app)
}
