//! The tune view: its form, the command it starts, the news of the search and how it draws
//! at 80×24 and 160×48. No terminal, no server.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::app::{App, Overlay};
use super::fixture::{self, code, key, screen, typed};
use super::msg::{Command, Msg, TuneCmd, TuneMsg};
use super::overlays::tune::TuneStage;
use super::update::update;
use crate::tune::TuneEvent;
use crate::tune::decide::Why;
use crate::tune::race::Race;

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

fn clear(app: &mut App) {
    for _ in 0..20 {
        update(app, code(KeyCode::Backspace));
    }
}

/// The view open, budget 2min and settings max_wal_size,shared_buffers typed, started.
pub(super) fn started(size: (u16, u16)) -> App {
    let mut app = fixture::idle_app(size, Instant::now());
    assert!(update(&mut app, key('t')).is_empty());
    assert_eq!(app.overlay, Overlay::Tune);
    assert!(
        app.tune.workload == "index-build, the parameters on screen",
        "{}",
        app.tune.workload
    );
    clear(&mut app);
    typed(&mut app, "2min");
    update(&mut app, code(KeyCode::Tab));
    clear(&mut app);
    typed(&mut app, "max_wal_size,shared_buffers");
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [
        Command::Tune(TuneCmd::Start {
            budget, settings, ..
        }),
    ] = cmds.as_slice()
    else {
        panic!("{cmds:?}")
    };
    assert_eq!(*budget, Duration::from_secs(120));
    assert_eq!(settings, &["max_wal_size", "shared_buffers"]);
    assert_eq!(app.tune.stage, TuneStage::Running);
    app
}

fn race() -> Race {
    let mut r = Race::new(
        "shared_buffers",
        vec![
            ("128MB".into(), "current".into()),
            ("6026MB".into(), "pgtune".into()),
            ("1506MB".into(), "around".into()),
        ],
    );
    for i in 0..6 {
        let n = 1.0 + (i % 3) as f64 * 0.01;
        r.add_round(&[
            ("128MB".into(), 10.0 * n),
            ("6026MB".into(), 7.0 * n),
            ("1506MB".into(), 20.0 * n),
        ]);
    }
    r.look(
        crate::measure::verdict::Better::Lower,
        &crate::measure::rules::Rules::default(),
    );
    r
}

/// A finished screening: two settings that moved, one that did not.
fn screened() -> crate::tune::screen::Screen {
    let effect = |setting: &str, low: &str, high: &str, r: (f64, f64, f64), moved| {
        crate::tune::screen::Effect {
            setting: setting.into(),
            low: low.into(),
            high: high.into(),
            ratio: r.0,
            ratio_low: r.1,
            ratio_high: r.2,
            level: 0.9,
            rounds: 3,
            moved,
        }
    };
    crate::tune::screen::Screen {
        groups: Vec::new(),
        done: true,
        effects: vec![
            effect(
                "shared_buffers",
                "128MB",
                "6026MB",
                (0.70, 0.66, 0.74),
                true,
            ),
            effect("max_wal_size", "1GB", "16GB", (0.93, 0.88, 0.99), true),
            effect("wal_compression", "off", "on", (0.99, 0.97, 1.02), false),
        ],
        interactions: Vec::new(),
    }
}

pub(super) fn feed(app: &mut App) {
    let ev = |e| Msg::Tune(TuneMsg::Event(Box::new(e)));
    let mut first = Race::new(
        "max_wal_size",
        vec![
            ("1GB".into(), "current".into()),
            ("4GB".into(), "pgtune".into()),
        ],
    );
    first.add_round(&[("1GB".into(), 10.0), ("4GB".into(), 10.1)]);
    let d = first.decide(
        crate::measure::verdict::Better::Lower,
        &crate::measure::rules::Rules::default(),
    );
    assert_eq!(d.why, Why::NotShown);
    update(app, ev(TuneEvent::Screen(screened())));
    update(app, ev(TuneEvent::Decided(d)));
    update(app, ev(TuneEvent::Race(race())));
    update(
        app,
        ev(TuneEvent::Budget {
            spent_s: 60.0,
            total_s: 120.0,
        }),
    );
    update(
        app,
        ev(TuneEvent::Progress("[2/3] 6026MB · building index".into())),
    );
}

#[test]
fn the_search_draws_live_with_dropped_values_and_the_budget_at_both_sizes() {
    for size in [SMALL, LARGE] {
        let mut app = started(size);
        feed(&mut app);
        let s = screen(&app);
        assert!(s.contains("budget █"), "{s}");
        assert!(s.contains("shared_buffers: round 6"), "{s}");
        assert!(s.contains("1506MB") && s.contains("dropped"), "{s}");
        assert!(s.contains("decided: max_wal_size stays 1GB"), "{s}");
        assert!(s.contains("screening (high end over low end, 90%)"), "{s}");
        assert!(
            s.contains("wal_compression off → on: ×0.99 [×0.97, ×1.02], screened"),
            "{s}"
        );
        assert!(s.contains("Esc"), "{s}");
        for line in s.lines() {
            assert!(line.chars().count() <= size.0 as usize, "{line}");
        }
    }
}

#[test]
fn esc_stops_the_tune_and_the_end_is_said() {
    let mut app = started(SMALL);
    let cmds = update(&mut app, code(KeyCode::Esc));
    assert_eq!(cmds, vec![Command::Tune(TuneCmd::Cancel)]);
    assert!(
        update(&mut app, code(KeyCode::Esc)).is_empty(),
        "asked once"
    );
    update(
        &mut app,
        Msg::Tune(TuneMsg::Done(Ok(
            "stopped; what the tune learnt is saved: pglab tune --resume goes on".into(),
        ))),
    );
    assert!(screen(&app).contains("pglab tune --resume"));
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.tune.stage, TuneStage::Form);
    assert_eq!(app.tune.budget, "2min", "the form keeps what was typed");
}

#[test]
fn a_bad_budget_or_setting_is_said_in_the_view_and_starts_nothing() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    update(&mut app, key('t'));
    clear(&mut app);
    typed(&mut app, "1s");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(screen(&app).contains("too short"), "{}", screen(&app));
    clear(&mut app);
    typed(&mut app, "5min");
    update(&mut app, code(KeyCode::Tab));
    clear(&mut app);
    typed(&mut app, "maintenance_work_mem");
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(screen(&app).contains("own parameter"), "{}", screen(&app));
    assert_eq!(app.tune.stage, TuneStage::Form);
}

#[test]
fn look_only_refuses_the_tune() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    app.observe = true;
    update(&mut app, key('t'));
    assert_eq!(app.overlay, Overlay::None);
}

/// The form filled in and Enter pressed: the view and the start command it sent.
fn start_cmd() -> (App, TuneCmd) {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    update(&mut app, key('t'));
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [Command::Tune(start @ TuneCmd::Start { outputs: None, .. })] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    (app, start.clone())
}

fn outputs_of(cmds: &[Command]) -> Option<crate::outputs::OutputSet> {
    match cmds {
        [Command::Tune(TuneCmd::Start { outputs, .. })] => outputs.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_script_already_there_is_asked_about_before_the_tune_starts() {
    let taken = crate::outputs::tune("tune.sql".into(), None);
    let taken_msg = |start: &TuneCmd| {
        Msg::Tune(TuneMsg::OutputsTaken {
            existing: vec!["tune.sql".into(), "tune.md".into()],
            taken: taken.clone(),
            free: taken.numbered(2),
            start: Box::new(start.clone()),
        })
    };
    // n: the numbered names.
    let (mut app, start) = start_cmd();
    update(&mut app, taken_msg(&start));
    let Overlay::Confirm(c) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert_eq!(
        c.question(),
        "tune.sql and tune.md already there: replace them when the tune ends? n writes tune-2.sql, tune-2.md and tune-2.svg instead"
    );
    let s = screen(&app);
    assert!(s.contains("already there"), "{s}");
    let cmds = update(&mut app, key('n'));
    assert_eq!(outputs_of(&cmds), Some(taken.numbered(2)));
    assert_eq!(app.overlay, Overlay::Tune);
    // y: replace them.
    let (mut app, start) = start_cmd();
    update(&mut app, taken_msg(&start));
    assert_eq!(outputs_of(&update(&mut app, key('y'))), Some(taken.clone()));
    // Esc: no tune, the files left alone, the form back.
    let (mut app, start) = start_cmd();
    update(&mut app, taken_msg(&start));
    assert!(update(&mut app, code(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, Overlay::Tune);
    assert_eq!(app.tune.stage, TuneStage::Form);
    assert!(screen(&app).contains("not started"), "{}", screen(&app));
}
