//! The report key (`w`): write the report of the run on screen — in the history overlay, of
//! the selected run — as `pglab report` does (Markdown with its SVG charts beside it, in the
//! current directory, never over a file that is there), and say where it went.

use super::app::{App, Level, Overlay};
use super::keys::Action;
use super::msg::Command;

/// The run whose report the key writes now: the history's selected run while the history is
/// open, else the finished run on screen.
pub(crate) fn request(app: &mut App) -> Vec<Command> {
    let id = if app.overlay == Overlay::Runs {
        app.runs.selected_run().map(|r| r.run_id.clone())
    } else {
        on_screen(app)
    };
    match id {
        Some(run_id) => {
            let say = format!("writing the report of {run_id}…");
            if app.overlay == Overlay::Runs {
                app.runs.say(Level::Info, say);
            } else {
                app.notify(Level::Info, say);
            }
            vec![Command::WriteReport { run_id }]
        }
        None => {
            let why = if app.overlay == Overlay::Runs {
                "a tune's line is no run: Enter opens it, then select one of its runs".to_string()
            } else {
                format!(
                    "no finished run on screen: {} writes its report once it ends; {} lists past runs (select one, then {})",
                    app.keys.label(Action::Report),
                    app.keys.label(Action::History),
                    app.keys.label(Action::Report)
                )
            };
            if app.overlay == Overlay::Runs {
                app.runs.say(Level::Warn, why);
            } else {
                app.notify(Level::Warn, why);
            }
            Vec::new()
        }
    }
}

/// The id of the run on screen once it has ended (a run is in the history only then).
fn on_screen(app: &App) -> Option<String> {
    (app.run.ended().is_some() && !app.run.run_id.is_empty()).then(|| app.run.run_id.clone())
}

/// The files written, or why not.
pub(crate) fn on_written(
    app: &mut App,
    r: Result<Vec<std::path::PathBuf>, String>,
) -> Vec<Command> {
    let (level, text) = match r {
        Ok(files) => (
            Level::Info,
            format!(
                "report written: {}",
                files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Err(e) => (Level::Error, e),
    };
    if app.overlay == Overlay::Runs {
        app.runs.say(level, text);
    } else {
        app.notify(level, text);
    }
    Vec::new()
}
