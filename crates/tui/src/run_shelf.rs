//! The run pane follows the experiment on screen: switching experiments (`1`–`4`, Tab, a
//! preset, an import's `b`) puts the finished run of the one left on a shelf and shows the
//! new one's last run, or nothing; switching back brings it back. A run in progress stays
//! on screen whatever the experiment shown (it is what the server is doing).

use super::app::App;
use super::panes::run::RunState;

/// Called after every message: make the run pane agree with the experiment on screen.
pub(crate) fn follow_experiment(app: &mut App) {
    let kind = app.params.kind;
    if app.run.is_active() || app.run.experiment == Some(kind) {
        return;
    }
    let shelved = app.shelf.iter().position(|r| r.experiment == Some(kind));
    if app.run.experiment.is_none() && shelved.is_none() {
        return;
    }
    let fresh = RunState {
        view: app.run.view,
        axis: app.run.axis,
        ..RunState::default()
    };
    let shown = match shelved {
        Some(i) => app.shelf.remove(i),
        None => fresh,
    };
    let left = std::mem::replace(&mut app.run, shown);
    if left.experiment.is_some() {
        app.shelf.retain(|r| r.experiment != left.experiment);
        app.shelf.push(left);
    }
}
