//! Look-only mode: nothing is written, and every refusal says how look-only was turned on.

use std::time::Instant;

use super::app::App;
use super::fixture::{self, key};
use super::keybar;
use super::msg::Command;
use super::update::update;

fn app() -> App {
    fixture::idle_app((100, 30), Instant::now())
}

fn notice(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

#[test]
fn o_turns_look_only_on_and_the_messages_name_the_key() {
    let mut app = app();
    assert!(update(&mut app, key('o')).is_empty());
    assert!(app.observe);
    assert!(update(&mut app, key('r')).is_empty());
    let n = notice(&app);
    assert!(n.contains("turned on with o"), "{n}");
    assert!(!n.contains("--observe"), "{n}");
    assert_eq!(keybar::items(&app).0.as_deref(), Some("look-only (o)"));
    // And off again.
    update(&mut app, key('o'));
    assert!(!app.observe);
    let cmds = update(&mut app, key('d'));
    assert!(matches!(cmds.as_slice(), [Command::StartProbe]), "{cmds:?}");
}

#[test]
fn the_disk_probes_are_refused_in_look_only() {
    let mut app = app();
    update(&mut app, key('o'));
    assert!(update(&mut app, key('d')).is_empty());
    assert!(app.host.probe.running.is_none());
    let n = notice(&app);
    assert!(n.contains("disk probes") && n.contains("look-only"), "{n}");
}

#[test]
fn observe_from_the_command_line_cannot_be_switched_off_with_a_key() {
    let mut app = app();
    app.observe = true;
    app.observe_flag = true;
    assert!(update(&mut app, key('o')).is_empty());
    assert!(app.observe, "o must not break the --observe promise");
    let n = notice(&app);
    assert!(n.contains("--observe") && n.contains("restart"), "{n}");
    assert!(update(&mut app, key('d')).is_empty());
    assert!(notice(&app).contains("--observe"));
}
