//! The run pane under `update`: run events, quitting during a run, the progress header
//! between trials, the ETA, the view key and scrolling. No terminal, no server.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::app::{Confirm, Focus, Overlay};
use super::fixture::{self, code, key, press, screen};
use super::msg::{Command, Msg, RunKind};
use super::panes::run;
use super::panes::run_view::RunView;
use super::update::{QUIT_GRACE, set_focus, update};
use super::update_tests::{app, ctrl_c, start};
use crate::experiment::{ExperimentKind, Outcome, Progress, RunEvent, TrialRef};

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

#[test]
fn run_events_fill_the_run_pane_and_esc_cancels() {
    let mut app = app();
    start(&mut app, 's');
    let t0 = app.now;
    update(
        &mut app,
        Msg::Run(RunEvent::Started {
            run_id: "r1".into(),
            description: "index-build · 1M rows".into(),
            trials: 30,
            layout: fixture::layout(),
        }),
    );
    for s in fixture::samples(3) {
        update(&mut app, Msg::Run(RunEvent::Sample(s)));
    }
    app.now = t0 + Duration::from_secs(30);
    update(
        &mut app,
        Msg::Run(RunEvent::Progress(crate::experiment::Progress {
            trial: Some(crate::experiment::TrialRef {
                index: 4,
                total: 30,
                label: "sorted · 256MB".into(),
            }),
            phase: "building index".into(),
            fraction: Some(0.5),
            elapsed_s: 2.0,
            rate: Some(1e6),
            rate_unit: "tuples/s".into(),
        })),
    );
    assert_eq!(app.run.samples.len(), 3);
    assert_eq!(app.run.trial.as_ref().unwrap().index, 4);
    // 3.5 of 30 trials in 30 s: about 227 s to go.
    let eta = app.run.eta(app.now).unwrap();
    assert!((eta - 30.0 * 26.5 / 3.5).abs() < 1.0, "{eta}");
    assert!(app.animating());

    assert_eq!(update(&mut app, code(KeyCode::Esc)), [Command::CancelRun]);
    assert!(app.run.cancelling());
    // A second Esc does not send another cancel.
    assert!(update(&mut app, code(KeyCode::Esc)).is_empty());
    update(
        &mut app,
        Msg::Run(RunEvent::Note(
            "cleaned up: dropped \"pglab\".\"ib_x\"".into(),
        )),
    );
    let mut report = fixture::report("k", Outcome::Cancelled, 31.0);
    report.notes = vec!["cleaned up: dropped \"pglab\".\"ib_x\"".into()];
    let cmds = update(&mut app, Msg::Run(RunEvent::Cancelled(Box::new(report))));
    assert!(
        matches!(cmds.as_slice(), [Command::LoadHistory { .. }]),
        "{cmds:?}"
    );
    assert!(!app.run.running());
    assert_eq!(app.run.ended().unwrap().outcome, Outcome::Cancelled);
    assert_eq!(app.run.notes.len(), 1);
    assert_eq!(app.run.samples.len(), 3);
}

#[test]
fn a_stream_that_ends_without_a_result_is_a_failure() {
    let mut app = app();
    start(&mut app, 'r');
    update(&mut app, Msg::RunClosed);
    let e = app.run.ended().unwrap();
    assert_eq!(e.outcome, Outcome::Failed);
    assert!(!app.run.is_active());
}

#[test]
fn quit_is_immediate_when_idle_and_asks_during_a_run() {
    let mut app = app();
    assert_eq!(update(&mut app, key('q')), [Command::Quit]);

    let mut app = self::app();
    start(&mut app, 's');
    assert!(update(&mut app, key('q')).is_empty());
    assert!(matches!(
        app.overlay,
        Overlay::Confirm(Confirm::Quit { .. })
    ));
    assert!(update(&mut app, key('n')).is_empty());
    assert!(app.run.running() && app.quitting.is_none());

    assert!(update(&mut app, ctrl_c()).is_empty());
    assert_eq!(update(&mut app, key('y')), [Command::CancelRun]);
    assert!(app.quitting.is_some());
    let cmds = update(
        &mut app,
        Msg::Run(RunEvent::Cancelled(Box::new(fixture::report(
            "k",
            Outcome::Cancelled,
            3.0,
        )))),
    );
    assert_eq!(cmds, [Command::Quit]);
}

#[test]
fn quitting_gives_up_waiting_after_the_grace_period() {
    let mut app = app();
    start(&mut app, 's');
    update(&mut app, key('q'));
    update(&mut app, key('y'));
    assert!(update(&mut app, Msg::Tick).is_empty());
    app.now += QUIT_GRACE + Duration::from_secs(1);
    assert_eq!(update(&mut app, Msg::Tick), [Command::Quit]);
    // Ctrl-C while waiting leaves at once.
    let mut app = self::app();
    start(&mut app, 's');
    update(&mut app, key('q'));
    update(&mut app, key('y'));
    assert_eq!(update(&mut app, ctrl_c()), [Command::Quit]);
}

#[test]
fn a_signal_cancels_the_run_without_asking() {
    let mut app = app();
    start(&mut app, 's');
    assert_eq!(update(&mut app, Msg::Shutdown), [Command::CancelRun]);
    assert_eq!(app.overlay, Overlay::None);
    let cmds = update(
        &mut app,
        Msg::Run(RunEvent::Cancelled(Box::new(fixture::report(
            "k",
            Outcome::Cancelled,
            3.0,
        )))),
    );
    assert_eq!(cmds, [Command::Quit]);
    assert!(app.by_signal);
    let mut app = self::app();
    assert_eq!(update(&mut app, Msg::Shutdown), [Command::Quit]);
}

fn trial(index: usize, total: usize, label: &str) -> Option<TrialRef> {
    Some(TrialRef {
        index,
        total,
        label: label.into(),
    })
}

#[test]
fn between_trials_the_header_names_the_phase_not_the_finished_trial() {
    let mut app = fixture::running_app(SMALL, Instant::now());
    let ev = |phase: &str, t| RunEvent::Phase {
        trial: t,
        phase: phase.into(),
    };
    update(
        &mut app,
        Msg::Run(ev("building index", trial(10, 10, "random · 1GB"))),
    );
    let last = fixture::samples(10).pop().unwrap();
    update(&mut app, Msg::Run(RunEvent::Sample(last)));
    update(
        &mut app,
        Msg::Run(ev("generating dataset: 1M rows, random", None)),
    );
    assert!(app.run.trial.is_none());
    assert_eq!(app.run.done, 10);
    let s = screen(&app);
    assert!(
        s.contains("10/10 trials done · generating dataset: 1M rows, random"),
        "{s}"
    );
    assert!(!s.contains("trial 10/10"), "{s}");
    // The next trial is named again once it starts.
    update(
        &mut app,
        Msg::Run(ev("CHECKPOINT", trial(11, 12, "random · 1MB"))),
    );
    assert!(screen(&app).contains("trial 11/12 · random · 1MB · CHECKPOINT"));
}

#[test]
fn growth_trials_get_a_run_bar_and_an_eta_weighted_by_their_steps() {
    let base = Instant::now();
    let mut app = fixture::idle_app(SMALL, base);
    update(&mut app, key('3'));
    assert_eq!(app.params.kind, ExperimentKind::Growth);
    // Steps 0,100,1000,10000,50000,100000 versions of two designs: 12 trials.
    let spec = app.params.spec_for(RunKind::Sweep).unwrap();
    app.run.begin(&spec, RunKind::Sweep, app.now);
    set_focus(&mut app, Focus::Run);
    let total = spec.estimate().trials;
    assert_eq!(total, 12);
    update(
        &mut app,
        Msg::Run(RunEvent::Started {
            run_id: "g".into(),
            description: "growth".into(),
            trials: total,
            layout: crate::experiment::growth::layout(),
        }),
    );
    // Step 0 of both designs done in 10 s; a phase of the next one without a fraction.
    for i in 1..=2 {
        update(
            &mut app,
            Msg::Run(RunEvent::Phase {
                trial: trial(i, total, "snapshot"),
                phase: "VACUUM (ANALYZE)".into(),
            }),
        );
    }
    app.now += Duration::from_secs(10);
    update(
        &mut app,
        Msg::Run(RunEvent::Phase {
            trial: trial(3, total, "snapshot · 100 versions"),
            phase: "writing one version × 3 (copy)".into(),
        }),
    );
    let done = app.run.run_fraction().unwrap();
    // The empty first step weighs next to nothing against 100000 versions.
    assert!(done > 0.0 && done < 0.001, "{done}");
    assert!(app.run.eta(app.now).is_none(), "too early to say");
    // Halfway through the COPY of the last trial: all but 25000 of 200002 versions of work.
    let last = total;
    update(
        &mut app,
        Msg::Run(RunEvent::Progress(Progress {
            trial: trial(last, total, "snapshot · 100k versions"),
            phase: "growing to 100000 versions".into(),
            fraction: Some(0.5),
            elapsed_s: 100.0,
            rate: Some(1e6),
            rate_unit: "rows/s".into(),
        })),
    );
    let f = app.run.run_fraction().unwrap();
    assert!((f - 175_002.0 / 200_002.0).abs() < 1e-9, "{f}");
    assert!(app.run.eta(app.now).is_some());
    update(
        &mut app,
        Msg::Run(RunEvent::Phase {
            trial: trial(last, total, "snapshot · 100k versions"),
            phase: "VACUUM (ANALYZE)".into(),
        }),
    );
    let s = screen(&app);
    assert!(
        s.contains("run "),
        "a bar for the run when the step has none:\n{s}"
    );
    assert!(s.contains("eta "), "{s}");
}

#[test]
fn the_view_key_cycles_the_views_and_brings_up_the_run_pane() {
    let mut app = fixture::finished_app(SMALL, Instant::now());
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!((app.focus, app.lower), (Focus::Host, Focus::Run));
    update(&mut app, code(KeyCode::BackTab));
    assert_eq!((app.focus, app.lower), (Focus::Target, Focus::Run));
    update(&mut app, code(KeyCode::Tab));
    update(&mut app, code(KeyCode::Tab));
    assert_eq!((app.focus, app.lower), (Focus::Params, Focus::Params));
    assert_eq!(app.run.view, RunView::Summary);
    assert!(update(&mut app, key('v')).is_empty());
    assert_eq!(
        (app.focus, app.lower, app.run.view),
        (Focus::Run, Focus::Run, RunView::Trials)
    );
    for v in [RunView::Chart, RunView::Findings, RunView::Summary] {
        update(&mut app, key('v'));
        assert_eq!(app.run.view, v);
    }
    // The view stays for the next run.
    update(&mut app, key('v'));
    start(&mut app, 'r');
    assert_eq!(app.run.view, RunView::Trials);
}

#[test]
fn the_focused_run_pane_scrolls_without_leaving_it() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::finished_app(size, Instant::now());
        update(&mut app, key('v'));
        assert_eq!(app.run.view, RunView::Trials);
        let (len, visible) = run::viewport(&app).unwrap();
        assert_eq!(len, 60);
        assert!(visible >= 3 && visible < len, "{visible} at {size:?}");
        // The trial table follows the newest trial: it starts at the end.
        let last = len - visible;
        assert_eq!(app.run.scroll.first(len, visible), last);
        press(&mut app, KeyCode::Home);
        assert_eq!(app.run.scroll.first(len, visible), 0);
        for k in ['j', 'j'] {
            update(&mut app, key(k));
        }
        update(&mut app, code(KeyCode::Down));
        assert_eq!(app.run.scroll.first(len, visible), 3);
        update(&mut app, key('k'));
        update(&mut app, code(KeyCode::Up));
        assert_eq!(app.run.scroll.first(len, visible), 1);
        press(&mut app, KeyCode::PageDown);
        assert_eq!(app.run.scroll.first(len, visible), visible);
        press(&mut app, KeyCode::PageUp);
        assert_eq!(app.run.scroll.first(len, visible), 1);
        for _ in 0..3 {
            update(&mut app, key('k'));
        }
        assert_eq!(app.run.scroll.first(len, visible), 0);
        assert_eq!(app.focus, Focus::Run, "up at the top stays in the pane");
        press(&mut app, KeyCode::End);
        assert_eq!(app.run.scroll.first(len, visible), last);
        press(&mut app, KeyCode::PageDown);
        assert_eq!(
            app.run.scroll.first(len, visible),
            last,
            "no blank page past the end"
        );
        update(&mut app, key('k'));
        assert_eq!(app.run.scroll.first(len, visible), last - 1);
        // The screen shows the rows scrolled to: the first trial at the top after Home.
        press(&mut app, KeyCode::Home);
        let s = screen(&app);
        assert!(s.contains(&format!("1–{visible}/60")), "{s}");
    }
}

#[test]
fn scrolling_keys_elsewhere_keep_their_meaning() {
    let mut app = fixture::finished_app(SMALL, Instant::now());
    update(&mut app, code(KeyCode::Left));
    assert_eq!(app.focus, Focus::Params);
    let before = app.run.scroll;
    update(&mut app, key('j'));
    assert_eq!(app.params.selected(), 1, "j picks the next parameter");
    press(&mut app, KeyCode::End);
    assert_eq!(app.run.scroll, before);
}

/// The run's share beside its ETA follows time, not the count of trials: after one trial of
/// 40 s and 10 s into the second of four, "run 25%"-by-count would say a quarter while the
/// ETA says two more minutes; the share is the time spent over the time spent and left.
#[test]
fn the_run_share_follows_the_time_the_eta_counts() {
    let mut app = app();
    start(&mut app, 's');
    let t0 = app.now;
    update(
        &mut app,
        Msg::Run(RunEvent::Started {
            run_id: "r1".into(),
            description: "index-build · 1M rows".into(),
            trials: 4,
            layout: fixture::layout(),
        }),
    );
    let phase = |i: usize| {
        Msg::Run(RunEvent::Phase {
            trial: trial(i, 4, "sorted · 64MB"),
            phase: "building index".into(),
        })
    };
    update(&mut app, phase(1));
    app.now = t0 + Duration::from_secs(40);
    update(&mut app, phase(2));
    app.now = t0 + Duration::from_secs(50);
    let eta = app.run.eta(app.now).expect("an ETA from the first trial");
    let share = app.run.run_share(app.now).unwrap();
    assert!((share - 50.0 / (50.0 + eta)).abs() < 1e-9, "{share} {eta}");
    assert!(share > 0.0 && share < 1.0);
}
