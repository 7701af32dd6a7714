//! The capture key: read the target's top statements as `pglab capture` does (only read:
//! read-only transactions), write the workload into pglab's data directory and open it as the
//! query experiment's `file`, so `s` sweeps the DBA's real mix. Esc ends the sample early.

use super::app::{App, Level};
use super::keys::Action;
use super::msg::{CaptureDone, CaptureMsg, Command};
use crate::experiment::ExperimentKind;

/// A capture under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capturing {
    /// Esc ended its sample early.
    pub ended_early: bool,
}

const SAMPLE_S: u64 = 10;

pub fn request(app: &mut App) -> Vec<Command> {
    if app.observe {
        let why = app.look_only_why();
        app.notify(
            Level::Warn,
            format!("a capture writes a workload file into pglab's data directory: not in {why}"),
        );
        return Vec::new();
    }
    if app.capture.is_some() {
        app.notify(
            Level::Info,
            format!(
                "a capture is running: {} ends its sample early",
                app.keys.label(Action::Cancel)
            ),
        );
        return Vec::new();
    }
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            "not while a run is in progress: the capture's queries would share its server",
        );
        return Vec::new();
    }
    app.capture = Some(Capturing::default());
    app.notify(
        Level::Info,
        format!(
            "capturing the target's workload (only read): sampling pg_stat_activity for {SAMPLE_S} s; {} ends the sample early",
            app.keys.label(Action::Cancel)
        ),
    );
    vec![Command::StartCapture]
}

/// Esc while a capture samples: end the sample, keep what was seen.
pub fn cancel(app: &mut App) -> Vec<Command> {
    match app.capture.as_mut() {
        Some(c) if !c.ended_early => {
            c.ended_early = true;
            app.notify(
                Level::Info,
                "ending the capture's sample: it goes on with what was seen",
            );
            vec![Command::CancelCapture]
        }
        _ => Vec::new(),
    }
}

pub fn on_msg(app: &mut App, m: CaptureMsg) -> Vec<Command> {
    match m {
        CaptureMsg::Progress { seen, seconds } => {
            if app.capture.is_some_and(|c| !c.ended_early) {
                app.notify(
                    Level::Info,
                    format!(
                        "capture: sampled {seconds:.0} of {SAMPLE_S} s, {seen} executions seen; {} ends the sample early",
                        app.keys.label(Action::Cancel)
                    ),
                );
            }
            Vec::new()
        }
        CaptureMsg::Done(Err(e)) => {
            app.capture = None;
            app.notify(Level::Warn, format!("the capture stopped: {e}"));
            Vec::new()
        }
        CaptureMsg::Done(Ok(d)) => {
            app.capture = None;
            opened(app, &d)
        }
    }
}

/// Open a finished capture as the query experiment's workload, or say why not.
fn opened(app: &mut App, d: &CaptureDone) -> Vec<Command> {
    let path = d.path.display().to_string();
    if d.written == 0 {
        app.notify(
            Level::Warn,
            format!(
                "captured {} statements from {} but none could be written with values (each says why in {path}); the query experiment is unchanged",
                d.captured, d.database
            ),
        );
        return Vec::new();
    }
    app.params.set_kind(ExperimentKind::Query);
    app.params.set_value("file", &path);
    app.params.select("file");
    let share = if d.from_statements {
        format!("{:.1} % of its statement time", d.coverage * 100.0)
    } else {
        format!(
            "{:.1} % of the executions seen; no pg_stat_statements, so no production timings",
            d.coverage * 100.0
        )
    };
    let sql_too = app
        .params
        .current()
        .get("sql")
        .is_some_and(|s| !s.trim().is_empty());
    app.notify(
        Level::Info,
        format!(
            "captured {} of {} statements from {} ({share}), the query experiment's file now ({} sweeps it{}): {path}",
            d.written,
            d.captured,
            d.database,
            app.keys.label(Action::Sweep),
            if sql_too {
                "; the sql field's statements run with it"
            } else {
                ""
            }
        ),
    );
    super::update::want_history(app)
}
