//! The capture key: messages in, state and commands out (the capture itself runs against a
//! real server in tests/suite/capture.rs).

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::app::App;
use super::fixture::{self, code, key};
use super::msg::{CaptureDone, CaptureMsg, Command, Msg};
use super::update::update;
use crate::experiment::ExperimentKind;

fn app() -> App {
    fixture::idle_app((100, 30), Instant::now())
}

fn notice(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

fn done(written: usize) -> Msg {
    Msg::Capture(CaptureMsg::Done(Ok(CaptureDone {
        path: PathBuf::from("/data/captures/sales-20261205-120000.sql"),
        database: "sales".into(),
        captured: 4,
        written,
        coverage: 0.874,
        from_statements: true,
    })))
}

#[test]
fn c_captures_esc_ends_the_sample_and_the_workload_opens_in_the_query_experiment() {
    let mut app = app();
    let cmds = update(&mut app, key('c'));
    assert!(
        matches!(cmds.as_slice(), [Command::StartCapture]),
        "{cmds:?}"
    );
    assert!(notice(&app).contains("only read"), "{}", notice(&app));
    // A second c while it runs starts nothing.
    assert!(update(&mut app, key('c')).is_empty());
    assert!(notice(&app).contains("a capture is running"));
    update(
        &mut app,
        Msg::Capture(CaptureMsg::Progress {
            seen: 12,
            seconds: 3.2,
        }),
    );
    assert!(
        notice(&app).contains("12 executions seen"),
        "{}",
        notice(&app)
    );
    let cmds = update(&mut app, code(KeyCode::Esc));
    assert!(
        matches!(cmds.as_slice(), [Command::CancelCapture]),
        "{cmds:?}"
    );
    // Esc again asks nothing more.
    assert!(update(&mut app, code(KeyCode::Esc)).is_empty());
    update(&mut app, done(3));
    assert!(app.capture.is_none());
    assert_eq!(app.params.kind, ExperimentKind::Query);
    assert_eq!(
        app.params.current()["file"],
        "/data/captures/sales-20261205-120000.sql"
    );
    let n = notice(&app);
    assert!(
        n.contains("captured 3 of 4 statements from sales (87.4 % of its statement time)"),
        "{n}"
    );
}

#[test]
fn a_capture_with_nothing_to_replay_leaves_the_experiment_alone() {
    let mut app = app();
    let kind = app.params.kind;
    update(&mut app, key('c'));
    update(&mut app, done(0));
    assert_eq!(app.params.kind, kind);
    assert!(
        notice(&app).contains("none could be written"),
        "{}",
        notice(&app)
    );
    // A failed capture says why, and c works again.
    update(&mut app, key('c'));
    update(
        &mut app,
        Msg::Capture(CaptureMsg::Done(Err(
            "cannot connect to the target: refused".into(),
        ))),
    );
    assert!(notice(&app).contains("the capture stopped: cannot connect"));
    assert!(matches!(
        update(&mut app, key('c')).as_slice(),
        [Command::StartCapture]
    ));
}

#[test]
fn look_only_refuses_the_capture_and_says_why() {
    let mut app = app();
    update(&mut app, key('o'));
    assert!(update(&mut app, key('c')).is_empty());
    assert!(
        notice(&app).contains("writes a workload file")
            && notice(&app).contains("turned on with o"),
        "{}",
        notice(&app)
    );
}

#[test]
fn at_80_by_24_the_way_to_enable_pg_stat_statements_is_shown_whole() {
    let mut app = fixture::idle_app((80, 24), Instant::now());
    update(&mut app, key('c'));
    let why = format!(
        "nothing to capture from sales: no other session ran a statement during the 10 s sample, and {}",
        crate::capture::statements::ENABLE
    );
    update(&mut app, Msg::Capture(CaptureMsg::Done(Err(why))));
    let screen = fixture::screen(&app);
    // The screen wraps the sentence at word boundaries: its words, in order, to the last.
    let words: Vec<&str> = screen.split_whitespace().collect();
    let end = [
        "CREATE",
        "EXTENSION",
        "pg_stat_statements",
        "in",
        "this",
        "database",
    ];
    assert!(words.windows(end.len()).any(|w| w == end), "{screen}");
    assert!(!screen.contains('…'), "{screen}");
}

#[test]
fn w_records_a_window_that_w_again_ends_and_v_asks_for_the_comparison() {
    let mut app = app();
    let cmds = update(&mut app, key('W'));
    assert!(
        matches!(cmds.as_slice(), [Command::StartWindow]),
        "{cmds:?}"
    );
    assert!(notice(&app).contains("only read"), "{}", notice(&app));
    // c while the window records starts nothing; W again ends the window.
    assert!(update(&mut app, key('c')).is_empty());
    let cmds = update(&mut app, key('W'));
    assert!(
        matches!(cmds.as_slice(), [Command::CancelCapture]),
        "{cmds:?}"
    );
    assert!(
        notice(&app).contains("ending the window"),
        "{}",
        notice(&app)
    );
    update(&mut app, done(3));
    assert!(app.capture.is_none());
    assert_ne!(
        app.params.kind,
        ExperimentKind::Query,
        "a window is not opened as the workload"
    );
    let n = notice(&app);
    assert!(
        n.contains("window recorded") && n.contains("V compares the last two"),
        "{n}"
    );
    let cmds = update(&mut app, key('V'));
    assert!(
        matches!(cmds.as_slice(), [Command::CompareWindows]),
        "{cmds:?}"
    );
    update(
        &mut app,
        Msg::Verified(Err("fewer than two windows in /data/windows".into())),
    );
    assert!(notice(&app).contains("fewer than two windows"));
    assert_eq!(app.overlay, super::app::Overlay::None);
}
