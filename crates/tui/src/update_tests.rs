//! `update` alone: messages in, state and commands out. No terminal, no server.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, AppInit, Confirm, Focus, Level, Overlay};
use super::fixture::{self, code, key};
use super::keys::KeyMap;
use super::msg::{Command, Msg, ProbeMsg, RunKind, ServerMsg};
use super::theme::Theme;
use super::update::update;
use crate::experiment::lab::preflight::{self, Preflight};
use crate::experiment::{ExperimentKind, ExperimentSpec};

pub(super) fn ctrl_c() -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
}

pub(super) fn app() -> App {
    fixture::idle_app((100, 30), Instant::now())
}

/// Typing into a field gives no commands.
fn typed(app: &mut App, s: &str) {
    assert!(
        fixture::typed(app, s).is_empty(),
        "typing {s:?} gave commands"
    );
}

fn ok_verdict(spec: &ExperimentSpec) -> Box<Preflight> {
    Box::new(preflight::preflight(
        spec,
        Some(1 << 40),
        None,
        preflight::CONFIRM_ABOVE,
    ))
}

/// Press a run key and answer its preflight (and `y` to the question of a big run: the
/// fixture's history expects an 11-minute sweep); returns the spec started.
pub(super) fn start(app: &mut App, k: char) -> Box<ExperimentSpec> {
    let cmds = update(app, key(k));
    let [Command::Preflight { spec, kind, server }] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert!(server.is_some());
    let mut cmds = update(
        app,
        Msg::Preflight {
            spec: spec.clone(),
            kind: *kind,
            verdict: ok_verdict(spec),
        },
    );
    if matches!(app.overlay, Overlay::Confirm(Confirm::StartRun { .. })) {
        cmds = update(app, key('y'));
    }
    let [Command::StartRun { spec, .. }] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert!(app.run.running());
    assert_eq!(app.focus, Focus::Run);
    spec.clone()
}

#[test]
fn editing_validates_as_typed_and_blocks_the_run() {
    let mut app = app();
    assert_eq!(app.focus, Focus::Params);
    assert_eq!(app.params.selected_field().unwrap().key, "rows");
    update(&mut app, code(KeyCode::Enter));
    assert!(app.params.editing.is_some());
    // Clear and type a bad value: the error names the field while typing.
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    typed(&mut app, "0");
    assert_eq!(app.params.field_error("rows"), Some("must be at least 1"));
    // The accepted values are untouched until Enter.
    assert!(app.params.parsed.is_ok());
    // Esc aborts: the old value stays.
    update(&mut app, code(KeyCode::Esc));
    assert!(app.params.editing.is_none());
    assert_eq!(app.params.current()["rows"], "1M");
    assert_eq!(app.params.field_error("rows"), None);

    // Accept an invalid value: shown with its reason, no run.
    update(&mut app, code(KeyCode::Enter));
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    typed(&mut app, "lots");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(app.params.field_error("rows").is_some());
    let cmds = update(&mut app, key('s'));
    assert!(cmds.is_empty(), "{cmds:?}");
    let n = app.notice.clone().unwrap();
    assert_eq!(n.level, Level::Error);
    assert!(n.text.contains("rows"), "{}", n.text);

    // Fix it: a new spec, so its history is asked for.
    update(&mut app, code(KeyCode::Enter));
    for _ in 0..4 {
        update(&mut app, code(KeyCode::Backspace));
    }
    typed(&mut app, "200k");
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [Command::LoadHistory { spec_key, .. }] if spec_key.contains("rows=200k")),
        "{cmds:?}"
    );
    assert!(app.params.parsed.is_ok());
}

#[test]
fn keys_typed_into_a_field_are_not_commands() {
    let mut app = app();
    update(&mut app, code(KeyCode::Enter));
    typed(&mut app, "qsrx?");
    assert_eq!(app.overlay, Overlay::None);
    assert!(!app.run.is_active());
    assert_eq!(app.params.kind, ExperimentKind::IndexBuild);
}

#[test]
fn r_runs_one_trial_of_the_first_values_and_s_the_sweep() {
    let mut app = app();
    let spec = start(&mut app, 'r');
    let ExperimentSpec::IndexBuild(s) = *spec else {
        panic!()
    };
    assert_eq!(s.orders.len(), 1);
    assert_eq!(s.mwm.len(), 1);
    assert_eq!(s.mwm[0].text, "1MB");
    assert_eq!(s.workers, [0]);
    assert_eq!(s.repeat, crate::experiment::lab::decision::Repeat::Fixed(1));
    assert_eq!(s.trials(), 1);
    // While it runs, another run is refused.
    assert!(update(&mut app, key('s')).is_empty());
    assert!(app.notice.as_ref().unwrap().text.contains("already"));

    let mut app = self::app();
    let spec = start(&mut app, 's');
    assert_eq!(spec.estimate().trials, 2 * 5 * 6);
}

#[test]
fn preflight_refuses_or_asks() {
    let mut app = app();
    let cmds = update(&mut app, key('s'));
    let [Command::Preflight { spec, kind, .. }] = cmds.as_slice() else {
        panic!()
    };
    let mut v = ok_verdict(spec);
    v.refuse = Some("only 1 GB is free".into());
    let cmds = update(
        &mut app,
        Msg::Preflight {
            spec: spec.clone(),
            kind: *kind,
            verdict: v,
        },
    );
    assert!(cmds.is_empty());
    assert!(!app.run.is_active());
    assert!(
        app.notice
            .as_ref()
            .unwrap()
            .text
            .contains("only 1 GB is free")
    );

    let cmds = update(&mut app, key('s'));
    let [Command::Preflight { spec, kind, .. }] = cmds.as_slice() else {
        panic!()
    };
    let mut v = ok_verdict(spec);
    v.confirm = Some("this run will use about 12 GB of disk: start it?".into());
    assert!(
        update(
            &mut app,
            Msg::Preflight {
                spec: spec.clone(),
                kind: *kind,
                verdict: v.clone()
            }
        )
        .is_empty()
    );
    assert!(matches!(
        app.overlay,
        Overlay::Confirm(Confirm::StartRun { .. })
    ));
    // Other keys do nothing; n declines.
    assert!(update(&mut app, key('q')).is_empty());
    assert!(update(&mut app, key('n')).is_empty());
    assert_eq!(app.overlay, Overlay::None);
    assert!(!app.run.is_active());

    let cmds = update(&mut app, key('s'));
    let [Command::Preflight { spec, kind, .. }] = cmds.as_slice() else {
        panic!()
    };
    update(
        &mut app,
        Msg::Preflight {
            spec: spec.clone(),
            kind: *kind,
            verdict: v,
        },
    );
    let cmds = update(&mut app, key('y'));
    assert!(
        matches!(cmds.as_slice(), [Command::StartRun { .. }]),
        "{cmds:?}"
    );
}

#[test]
fn observe_disables_runs() {
    let mut app = app();
    app.observe = true;
    app.observe_flag = true;
    assert!(update(&mut app, key('r')).is_empty());
    assert!(update(&mut app, key('s')).is_empty());
    assert!(app.notice.as_ref().unwrap().text.contains("--observe"));
    let (prefix, items) = super::keybar::items(&app);
    assert!(prefix.unwrap().contains("look-only (--observe)"));
    assert!(
        !items
            .iter()
            .any(|(_, l, _)| l.starts_with("run") || l == "sweep")
    );
}

#[test]
fn a_lost_server_blocks_new_runs_and_comes_back() {
    let mut app = app();
    update(
        &mut app,
        Msg::Server(ServerMsg::Lost {
            error: "server closed the connection".into(),
            retry_in: Duration::from_secs(4),
        }),
    );
    assert!(!app.target.is_up());
    assert!(update(&mut app, key('r')).is_empty());
    assert!(app.notice.as_ref().unwrap().text.contains("not reachable"));
    let later = app.now + Duration::from_secs(5);
    app.now = later;
    update(
        &mut app,
        Msg::Server(ServerMsg::Snapshot(Box::new(fixture::server(70, later)))),
    );
    assert!(app.target.is_up());
    assert!(!update(&mut app, key('r')).is_empty());
}

#[test]
fn rates_come_from_successive_snapshots() {
    let app = app();
    assert_eq!(app.target.commits.len(), 60);
    let r = app.target.rates.unwrap();
    assert!(r.commits_per_s > 0.0);
    assert!((r.cache_hit.unwrap() - 990.0 / 998.0).abs() < 1e-9);
    assert_eq!(app.host.cpu.len(), 61);
}

#[test]
fn disk_probe_starts_reports_and_cancels() {
    let mut app = app();
    assert_eq!(update(&mut app, key('d')), [Command::StartProbe]);
    assert!(app.animating());
    update(
        &mut app,
        Msg::Probe(ProbeMsg::Progress {
            stage: super::msg::ProbeStage::Fsync,
            fraction: 0.5,
        }),
    );
    assert_eq!(
        app.host.probe.running,
        Some((super::msg::ProbeStage::Fsync, 0.5))
    );
    assert!(update(&mut app, key('d')).is_empty());
    assert_eq!(update(&mut app, code(KeyCode::Esc)), [Command::CancelProbe]);
    update(&mut app, Msg::Probe(ProbeMsg::Cancelled));
    assert!(app.host.probe.running.is_none());
    assert!(app.host.probe.error.is_some());
    // Quitting during a probe cancels it and leaves.
    update(&mut app, key('d'));
    assert_eq!(
        update(&mut app, key('q')),
        [Command::CancelProbe, Command::Quit]
    );
}

#[test]
fn focus_moves_with_tab_arrows_and_hjkl() {
    let mut app = app();
    assert_eq!(app.focus, Focus::Params);
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Run);
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Target);
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT)),
    );
    assert_eq!(app.focus, Focus::Run);
    // Up in the run pane scrolls it; Shift-Tab leaves it.
    update(&mut app, key('k'));
    assert_eq!(app.focus, Focus::Run);
    update(&mut app, code(KeyCode::BackTab));
    update(&mut app, code(KeyCode::BackTab));
    assert_eq!(app.focus, Focus::Host);
    update(&mut app, code(KeyCode::Left));
    assert_eq!(app.focus, Focus::Target);
    update(&mut app, key('j'));
    assert_eq!(app.focus, Focus::Params);
    // In Parameters, up/down pick a field; up at the first stays there (typing goes on
    // into the parameters).
    update(&mut app, key('j'));
    update(&mut app, code(KeyCode::Down));
    assert_eq!(app.params.selected(), 2);
    assert_eq!(app.focus, Focus::Params);
    update(&mut app, key('k'));
    update(&mut app, key('k'));
    update(&mut app, key('k'));
    assert_eq!(app.params.selected(), 0);
    assert_eq!(app.focus, Focus::Params);
}

#[test]
fn small_terminals_show_the_focused_lower_pane() {
    let mut app = app();
    update(&mut app, Msg::Resize(80, 24));
    assert!(app.compact());
    assert_eq!(app.lower, Focus::Params);
    update(&mut app, key('l'));
    assert_eq!((app.focus, app.lower), (Focus::Run, Focus::Run));
    update(&mut app, key('k'));
    assert_eq!(app.focus, Focus::Run, "k scrolls the run pane");
    update(&mut app, code(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Target);
    // Down from Target or Host goes to the tab on show.
    update(&mut app, key('j'));
    assert_eq!(app.focus, Focus::Run);
}

#[test]
fn experiments_switch_and_keep_their_values() {
    let mut app = app();
    app.params.set_value("rows", "2M");
    let cmds = update(&mut app, key('x'));
    assert_eq!(app.params.kind, ExperimentKind::Ingest);
    assert!(
        matches!(cmds.as_slice(), [Command::LoadHistory { spec_key, .. }] if spec_key.starts_with("ingest:"))
    );
    update(&mut app, key('3'));
    assert_eq!(app.params.kind, ExperimentKind::Growth);
    update(&mut app, key('1'));
    assert_eq!(app.params.current()["rows"], "2M");
    // `r` on the other experiments runs them as set.
    update(&mut app, key('2'));
    let cmds = update(&mut app, key('r'));
    let [Command::Preflight { spec, kind, .. }] = cmds.as_slice() else {
        panic!()
    };
    assert_eq!(
        (spec.kind(), *kind),
        (ExperimentKind::Ingest, RunKind::Single)
    );
}

#[test]
fn help_opens_and_closes_and_swallows_keys() {
    let mut app = app();
    update(&mut app, key('?'));
    assert_eq!(app.overlay, Overlay::Help);
    assert!(update(&mut app, key('r')).is_empty());
    assert_eq!(app.overlay, Overlay::Help);
    update(&mut app, code(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    update(&mut app, key('?'));
    assert!(update(&mut app, key('q')).is_empty());
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn configured_keys_replace_the_defaults() {
    let c = super::config::parse(
        "[keys]\nrun = \"R\"\nquit = \"Q\"\n",
        &PathBuf::from("config.toml"),
    );
    let mut app = App::new(AppInit {
        now: Instant::now(),
        theme: Theme { color: false },
        keys: c.keys,
        config_file: PathBuf::from("config.toml"),
        observe: false,
        location: fixture::location(),
        size: (100, 30),
        notice: None,
        last_params: None,
        saved_probe: None,
    });
    assert!(update(&mut app, key('q')).is_empty());
    assert_eq!(update(&mut app, key('Q')), [Command::Quit]);
    let _ = KeyMap::default();
}

#[test]
fn history_answers_for_another_spec_are_dropped() {
    let mut app = app();
    let n = app.history.points.len();
    assert_eq!(n, 7);
    update(
        &mut app,
        Msg::History {
            spec_key: "index-build:other".into(),
            past: Ok(Default::default()),
        },
    );
    assert_eq!(app.history.points.len(), 7);
}

#[test]
fn leftovers_found_at_start_are_offered_for_cleaning() {
    use crate::experiment::lab::leftovers::{LabObject, LabObjectKind};
    let mut a = app();
    assert!(super::update::init(&mut a).contains(&Command::FindLeftovers));
    let obj = LabObject {
        name: "ib_int4_random_1000_s42".into(),
        kind: LabObjectKind::RunTable,
        run_id: Some("dead".into()),
        bytes: 8192,
        live: false,
        comment: "pglab:run=dead dataset being generated".into(),
    };
    assert!(update(&mut a, Msg::Leftovers(vec![obj.clone()])).is_empty());
    let Overlay::Confirm(Confirm::CleanLeftovers { question, .. }) = &a.overlay else {
        panic!("no question: {:?}", a.overlay)
    };
    assert!(question.contains("ib_int4_random_1000_s42"), "{question}");
    assert_eq!(
        update(&mut a, key('y')),
        vec![Command::CleanLeftovers(vec![obj])]
    );
    update(
        &mut a,
        Msg::Cleaned(Ok(vec!["ib_int4_random_1000_s42".into()])),
    );
    assert!(
        a.notice
            .as_ref()
            .unwrap()
            .text
            .contains("dropped ib_int4_random_1000_s42")
    );
    // Nothing found, nothing asked; --observe does not even look.
    let mut b = app();
    assert!(update(&mut b, Msg::Leftovers(vec![])).is_empty());
    assert_eq!(b.overlay, Overlay::None);
    b.observe = true;
    assert!(!super::update::init(&mut b).contains(&Command::FindLeftovers));
}
