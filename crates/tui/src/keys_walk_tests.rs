//! The key table walked: in every pane, every key the key bar offers does what its label says,
//! every action has a line in the help (`?`), and the keys typed after moving the focus go
//! where the key bar says they go.

use std::time::Instant;

use crossterm::event::{KeyEvent, KeyModifiers};

use super::app::{App, Focus, Overlay};
use super::fixture::{self, code, key, press};
use super::keybar;
use super::keys::Action;
use super::msg::{Command, Msg};
use super::overlays::help;
use super::update::{set_focus, update};
use crossterm::event::KeyCode;

const SIZES: [(u16, u16); 2] = [(80, 24), (100, 30)];

/// A finished what-if run on screen (so the axis, zoom and report keys are offered), the
/// focus on `pane`.
fn app_on(size: (u16, u16), pane: Focus) -> App {
    let mut app = fixture::whatif_app(size, Instant::now());
    set_focus(&mut app, pane);
    app
}

/// The action bound to a key bar label, when the label is one key.
fn action_of(app: &App, label: &str) -> Option<Action> {
    Action::ALL
        .into_iter()
        .find(|a| app.keys.label(*a) == label)
}

/// Press `a`'s key on `app`; the commands it gave.
fn press_action(app: &mut App, a: Action) -> Vec<Command> {
    let k = app.keys.key(a);
    update(app, Msg::Key(KeyEvent::new(k.code, k.mods)))
}

/// What pressing `a` must have done, checked against the state before (`was`) and after.
fn did_what_it_says(a: Action, was: &App, now: &App, cmds: &[Command]) -> Result<(), String> {
    let has = |f: &dyn Fn(&Command) -> bool| cmds.iter().any(f);
    let ok = match a {
        Action::Run | Action::Sweep => has(&|c| matches!(c, Command::Preflight { .. })),
        Action::Edit => now.params.editing.is_some() && now.focus == Focus::Params,
        Action::View => now.run.view != was.run.view && now.focus == Focus::Run,
        Action::Axis => now.run.axis() != was.run.axis(),
        Action::Zoom => now.zoom != was.zoom,
        Action::Report => has(&|c| matches!(c, Command::WriteReport { .. })),
        Action::NextExperiment => now.params.kind != was.params.kind,
        Action::Presets => now.overlay == Overlay::Presets,
        Action::History => now.overlay == Overlay::Runs,
        Action::Probe => has(&|c| matches!(c, Command::StartProbe)),
        Action::Cancel => has(&|c| matches!(c, Command::CancelRun | Command::CancelProbe)),
        Action::NextPane => now.focus != was.focus,
        Action::Help => now.overlay == Overlay::Help,
        Action::Quit => has(&|c| matches!(c, Command::Quit)),
        Action::Plans => matches!(now.overlay, Overlay::Plans(_)),
        Action::Window => has(&|c| matches!(c, Command::StartWindow)),
        Action::Verify => has(&|c| matches!(c, Command::CompareWindows)),
        other => {
            return Err(format!(
                "the key bar offers {other:?}, which this walk does not know"
            ));
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{a:?} did not do what its label says (commands {cmds:?})"
        ))
    }
}

#[test]
fn every_key_the_key_bar_offers_does_what_it_says_in_every_pane() {
    let mut walked = 0;
    for size in SIZES {
        for pane in Focus::ORDER {
            let offered = keybar::items(&app_on(size, pane)).1;
            assert!(!offered.is_empty());
            for (label, what, _) in offered {
                // "↑↓ scroll", "←→ columns": two keys, checked by the run pane's own tests.
                let Some(a) = action_of(&app_on(size, pane), &label) else {
                    continue;
                };
                let was = app_on(size, pane);
                let mut now = app_on(size, pane);
                let cmds = press_action(&mut now, a);
                did_what_it_says(a, &was, &now, &cmds)
                    .unwrap_or_else(|e| panic!("{size:?} {pane:?}: {label} ({what}): {e}"));
                walked += 1;
            }
        }
    }
    assert!(walked >= 40, "only {walked} keys walked");
}

#[test]
fn every_action_has_its_key_in_the_help() {
    let app = app_on((80, 24), Focus::Params);
    let entries = help::entries(&app);
    for a in Action::ALL {
        let label = app.keys.label(a);
        assert!(
            entries
                .iter()
                .any(|(keys, _)| keys.split_whitespace().any(|k| k == label)),
            "{a:?} ({label}) has no line in the help"
        );
    }
    assert!(
        entries
            .iter()
            .any(|(k, d)| k == "c" && d.starts_with("capture")),
        "{entries:?}"
    );
}

#[test]
fn up_at_the_first_parameter_keeps_the_focus_so_typing_goes_into_the_field() {
    let mut app = fixture::idle_app((80, 24), Instant::now());
    assert_eq!(app.focus, Focus::Params);
    assert_eq!(app.params.selected(), 0);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.focus, Focus::Params, "↑ at the top left the pane");
    press(&mut app, KeyCode::Enter);
    assert!(app.params.editing.is_some(), "Enter did not edit");
    let kind = app.params.kind;
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    for c in "100k".chars() {
        update(&mut app, key(c));
    }
    update(&mut app, code(KeyCode::Enter));
    assert_eq!(
        app.params.kind, kind,
        "a typed digit switched the experiment"
    );
    assert_eq!(
        app.params.current().get("rows").map(String::as_str),
        Some("100k")
    );
}

#[test]
fn enter_in_the_upper_panes_edits_the_selected_parameter() {
    for pane in [Focus::Target, Focus::Host] {
        let mut app = fixture::idle_app((80, 24), Instant::now());
        set_focus(&mut app, pane);
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.focus, Focus::Params, "{pane:?}");
        assert!(app.params.editing.is_some(), "{pane:?}");
    }
}

#[test]
fn the_axis_key_without_swept_settings_says_why() {
    let mut app = fixture::finished_app((80, 24), Instant::now());
    let before = app.run.axis();
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.run.axis(), before);
    let n = app.notice.as_ref().expect("a sentence").text.clone();
    assert!(
        n.contains("sweeps no server setting") && n.contains("set"),
        "{n}"
    );
}

#[test]
fn zoom_gives_the_run_pane_the_screen_and_another_pane_gives_it_back() {
    let mut app = fixture::finished_app((80, 24), Instant::now());
    press(&mut app, KeyCode::Char('z'));
    assert!(app.zoom);
    assert_eq!(app.focus, Focus::Run);
    press(&mut app, KeyCode::Char('z'));
    assert!(!app.zoom);
    press(&mut app, KeyCode::Char('z'));
    press(&mut app, KeyCode::Tab);
    assert!(
        !app.zoom,
        "focus left the zoomed pane but it kept the screen"
    );
}
