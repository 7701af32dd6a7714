//! Every one-line text field of the UI answers the same editing keys: `C-u` clears it, `C-w`
//! drops its last word, Backspace deletes, and a control key never types a letter.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::App;
use super::fixture::{self, code, key, typed};
use super::msg::Msg;
use super::update::update;

fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// (the field's name, how to open it from an idle app, how to read it).
type Field = (&'static str, fn(&mut App), fn(&App) -> String);

fn fields() -> Vec<Field> {
    vec![
        (
            "a parameter",
            |a| {
                update(a, code(KeyCode::Enter));
            },
            |a| a.params.editing.as_ref().unwrap().text.clone(),
        ),
        (
            "a preset's name",
            |a| {
                update(a, key('p'));
                update(a, key('S'));
            },
            |a| a.presets.input.as_ref().unwrap().text.clone(),
        ),
        (
            "the import's conninfo",
            |a| {
                update(a, key('i'));
            },
            |a| a.import.conninfo.clone(),
        ),
        (
            "the tune's budget",
            |a| {
                update(a, key('t'));
            },
            |a| a.tune.budget.clone(),
        ),
        (
            "the tune's settings",
            |a| {
                update(a, key('t'));
                update(a, code(KeyCode::Tab));
            },
            |a| a.tune.settings.clone(),
        ),
        (
            "the history filter",
            |a| {
                update(a, key('h'));
                update(a, key('/'));
            },
            |a| a.runs.query.clone(),
        ),
    ]
}

#[test]
fn every_text_field_clears_with_ctrl_u_and_drops_a_word_with_ctrl_w() {
    for (name, open, read) in fields() {
        let mut app = fixture::idle_app((80, 24), Instant::now());
        open(&mut app);
        update(&mut app, ctrl('u'));
        assert_eq!(read(&app), "", "{name}: C-u clears");
        typed(&mut app, "one two");
        assert_eq!(read(&app), "one two", "{name}");
        update(&mut app, ctrl('w'));
        assert_eq!(read(&app), "one ", "{name}: C-w drops the last word");
        update(&mut app, code(KeyCode::Backspace));
        assert_eq!(read(&app), "one", "{name}");
        update(&mut app, ctrl('u'));
        assert_eq!(read(&app), "", "{name}: C-u clears");
        // A control key the field does not know types nothing.
        update(&mut app, ctrl('x'));
        assert_eq!(read(&app), "", "{name}");
    }
}
