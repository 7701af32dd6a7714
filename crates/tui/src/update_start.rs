//! Starting a run: what refuses it before anything is sent (look-only, a run, import or tune
//! already going, parameters that do not parse, the server out of reach), the preflight's
//! answer (a refusal, warnings, or a question with the time the history expects), and the
//! start itself, which hands the Host pane's disk probes to an ingest run.

use super::app::{App, Confirm, Focus, Level, Overlay};
use super::keys::Action;
use super::msg::{Command, RunKind};
use super::update::set_focus;
use crate::experiment::ExperimentSpec;
use crate::experiment::lab::preflight::Preflight;

pub(super) fn request_run(app: &mut App, kind: RunKind) -> Vec<Command> {
    if app.observe {
        app.notify(Level::Warn, app.look_only_why());
        return Vec::new();
    }
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            format!(
                "a run is already in progress: {} cancels it",
                app.keys.label(Action::Cancel)
            ),
        );
        return Vec::new();
    }
    if app.import.busy() {
        app.notify(
            Level::Warn,
            "an import is running into the sandbox: run when it has ended (i shows it)",
        );
        return Vec::new();
    }
    if app.tune.running() {
        app.notify(
            Level::Warn,
            "a tune is running on this server: run when it has ended (t shows it)",
        );
        return Vec::new();
    }
    let spec = match app.params.spec_for(kind) {
        Ok(s) => s,
        Err(errors) => {
            let (k, e) = errors.first().cloned().unwrap_or_default();
            let more = match errors.len() {
                0 | 1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            app.notify(
                Level::Error,
                format!(
                    "fix the parameters first: {k}: {}{more}",
                    app.params.say(&e)
                ),
            );
            return Vec::new();
        }
    };
    if !app.target.is_up() {
        app.notify(
            Level::Error,
            "the server is not reachable right now: start the run when the connection is back",
        );
        return Vec::new();
    }
    app.run.life.prepare(kind);
    vec![Command::Preflight {
        spec: Box::new(spec),
        kind,
        server: app.target.latest.clone().map(Box::new),
    }]
}

pub(super) fn on_preflight(
    app: &mut App,
    spec: Box<ExperimentSpec>,
    kind: RunKind,
    v: Preflight,
) -> Vec<Command> {
    if app.run.life.preparing() != Some(kind) || app.quitting.is_some() {
        return Vec::new();
    }
    app.run.life.unprepare();
    if let Some(why) = v.refuse {
        app.notify(Level::Error, format!("not started: {why}"));
        return Vec::new();
    }
    if !v.warnings.is_empty() {
        app.notify(Level::Info, v.warnings.join("; "));
    }
    let big = big_reasons(app, &spec, kind);
    let question = match (v.confirm, big.is_empty()) {
        (Some(q), true) => Some(q),
        (Some(q), false) => Some(format!("This run is big: {}; and {q}", big.join("; "))),
        (None, false) => Some(format!("This run is big: {}. Start it?", big.join("; "))),
        (None, true) => None,
    };
    if let Some(mut question) = question {
        if let Some(x) = expected(app, kind) {
            question.push_str(&format!(
                " (it should take {}, by {})",
                x.range_text(),
                x.basis
            ));
        }
        app.overlay = Overlay::Confirm(Confirm::StartRun {
            spec,
            kind,
            question,
        });
        return Vec::new();
    }
    start_run(app, spec, kind)
}

pub(super) fn start_run(
    app: &mut App,
    mut spec: Box<ExperimentSpec>,
    kind: RunKind,
) -> Vec<Command> {
    // The disk probes of the Host pane are the ingest run's ceilings: its fsync rate (so the
    // run need not probe it again) and the sequential write rate.
    if let (ExperimentSpec::Ingest(s), Some(p)) = (spec.as_mut(), app.host.probe.last.as_ref()) {
        s.fsync_ops_per_s = Some(p.fsync.ops_per_s);
        s.seq_write_bytes_per_s = Some(p.seq.mb_per_s * 1e6);
    }
    app.run.begin(&spec, kind, app.now);
    app.run.expected = expected(app, kind);
    set_focus(app, Focus::Run);
    let preset = app.params.preset_name();
    vec![Command::StartRun { spec, preset }]
}

/// Why the run is big enough to ask first (see [`crate::experiment::lab::big_run`]): the
/// history's estimate, the rows of a trial, memory beyond this machine's when the server is
/// on it.
fn big_reasons(app: &App, spec: &ExperimentSpec, kind: RunKind) -> Vec<String> {
    let ram = app
        .host
        .info
        .as_ref()
        .filter(|_| !app.host.remote)
        .map(|i| i.total_memory);
    let eta = expected(app, kind).map(|x| x.high_s);
    crate::experiment::lab::big_run::reasons(spec, eta, ram)
}

/// How long the history says a run of this kind of the parameters on screen takes.
fn expected(app: &App, kind: RunKind) -> Option<crate::experiment::lab::eta::Eta> {
    match kind {
        RunKind::Sweep => app.history.eta.sweep.clone(),
        RunKind::Single => app.history.eta.one.clone(),
    }
}
