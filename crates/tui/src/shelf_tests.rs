//! The run pane follows the experiment on screen: a finished run's results and findings stay
//! with their experiment (back when it is chosen again), a run in progress stays on screen.

use std::time::Instant;

use super::fixture::{self, key, screen};
use super::panes::run_view::RunView;
use super::update::update;
use crate::experiment::ExperimentKind;

const FINDING: &str = "16MB is enough";

#[test]
fn switching_experiments_leaves_the_last_runs_findings_with_their_experiment() {
    let mut app = fixture::finished_app((100, 30), Instant::now());
    app.run.set_view(RunView::Findings);
    assert!(screen(&app).contains(FINDING), "{}", screen(&app));
    for (k, kind) in [
        ('2', ExperimentKind::Ingest),
        ('3', ExperimentKind::Growth),
        ('4', ExperimentKind::Query),
    ] {
        update(&mut app, key(k));
        assert_eq!(app.params.kind, kind);
        let s = screen(&app);
        assert!(
            !s.contains(FINDING),
            "{kind}: the index-build findings stayed:\n{s}"
        );
        assert!(!s.contains("finished · index-build"), "{kind}:\n{s}");
        assert_eq!(app.run.experiment, None, "{kind}");
        // The view chosen stays the view.
        assert_eq!(app.run.view, RunView::Findings);
    }
    // Back to index-build: its run is there again, findings and all.
    update(&mut app, key('1'));
    assert_eq!(app.run.experiment, Some(ExperimentKind::IndexBuild));
    assert!(screen(&app).contains(FINDING));
    assert!(app.shelf.is_empty(), "nothing else was run");
}

#[test]
fn a_run_in_progress_stays_on_screen_whatever_the_experiment_shown() {
    let mut app = fixture::running_app((100, 30), Instant::now());
    update(&mut app, key('2'));
    assert_eq!(app.params.kind, ExperimentKind::Ingest);
    assert!(app.run.running());
    assert_eq!(app.run.experiment, Some(ExperimentKind::IndexBuild));
    assert!(screen(&app).contains("trial 7/10"), "{}", screen(&app));
}
