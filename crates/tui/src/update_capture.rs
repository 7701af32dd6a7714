//! The capture key: read the target's top statements as `pglab capture` does (only read:
//! read-only transactions), write the workload into pglab's data directory and open it as the
//! query experiment's `file`, so `s` sweeps the DBA's real mix. Esc ends the sample early.
//! The window key (`W`) records the same capture as a window of `pg_stat_statements` kept in
//! the data directory's `windows` (up to 60 s; the key again or Esc ends it), for `V`.

use super::app::{App, Level};
use super::keys::Action;
use super::msg::{CaptureDone, CaptureMsg, Command};
use crate::experiment::ExperimentKind;

/// A capture under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capturing {
    /// Esc ended its sample early.
    pub ended_early: bool,
    /// A window (`W`) rather than a workload (`c`).
    pub window: bool,
}

const SAMPLE_S: u64 = 10;
/// The longest window the key records (the key again or Esc ends it sooner).
pub(crate) const WINDOW_S: u64 = 60;

fn sample_s(c: &Capturing) -> u64 {
    if c.window { WINDOW_S } else { SAMPLE_S }
}

/// `W`: record a window, or end the one being recorded.
pub(crate) fn request_window(app: &mut App) -> Vec<Command> {
    if app.capture.is_some_and(|c| c.window) {
        return cancel(app);
    }
    if app.observe {
        let why = app.look_only_why();
        app.notify(
            Level::Warn,
            format!("a window is a capture file written into pglab's data directory: not in {why}"),
        );
        return Vec::new();
    }
    if let Some(refused) = busy(app) {
        return refused;
    }
    app.capture = Some(Capturing {
        ended_early: false,
        window: true,
    });
    app.notify(
        Level::Info,
        format!(
            "recording a window of the target's pg_stat_statements (only read) for up to {WINDOW_S} s: {} again or {} ends it now",
            app.keys.label(Action::Window),
            app.keys.label(Action::Cancel)
        ),
    );
    vec![Command::StartWindow]
}

/// A capture or a run already going: the sentence, and nothing started.
fn busy(app: &mut App) -> Option<Vec<Command>> {
    if app.capture.is_some() {
        app.notify(
            Level::Info,
            format!(
                "a capture is running: {} ends its sample early",
                app.keys.label(Action::Cancel)
            ),
        );
        return Some(Vec::new());
    }
    if app.run.is_active() {
        app.notify(
            Level::Warn,
            "not while a run is in progress: the capture's queries would share its server",
        );
        return Some(Vec::new());
    }
    None
}

pub(crate) fn request(app: &mut App) -> Vec<Command> {
    if app.observe {
        let why = app.look_only_why();
        app.notify(
            Level::Warn,
            format!("a capture writes a workload file into pglab's data directory: not in {why}"),
        );
        return Vec::new();
    }
    if let Some(refused) = busy(app) {
        return refused;
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
pub(crate) fn cancel(app: &mut App) -> Vec<Command> {
    match app.capture.as_mut() {
        Some(c) if !c.ended_early => {
            c.ended_early = true;
            let what = if c.window {
                "ending the window now: pg_stat_statements is read once more and the window kept"
            } else {
                "ending the capture's sample: it goes on with what was seen"
            };
            app.notify(Level::Info, what);
            vec![Command::CancelCapture]
        }
        _ => Vec::new(),
    }
}

pub(crate) fn on_msg(app: &mut App, m: CaptureMsg) -> Vec<Command> {
    match m {
        CaptureMsg::Progress { seen, seconds } => {
            if let Some(c) = app.capture.filter(|c| !c.ended_early) {
                let what = if c.window { "window" } else { "capture" };
                app.notify(
                    Level::Info,
                    format!(
                        "{what}: sampled {seconds:.0} of {} s, {seen} executions seen; {} ends the sample early",
                        sample_s(&c),
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
            let window = app.capture.take().is_some_and(|c| c.window);
            if window {
                app.notify(
                    Level::Info,
                    format!(
                        "window recorded from {} ({} statements): {}; {} compares the last two",
                        d.database,
                        d.captured,
                        d.path.display(),
                        app.keys.label(Action::Verify)
                    ),
                );
                return Vec::new();
            }
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
