//! The run pane after a cancel or a failure says what was cleaned up, at every size, even
//! when findings arrive after the cleanup note.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::fixture::{self, press, screen};
use super::msg::Msg;
use super::update::update;
use crate::experiment::{Outcome, RunEvent};

fn cancelled(size: (u16, u16), notes: &[&str]) -> String {
    let mut app = fixture::running_app(size, Instant::now());
    press(&mut app, KeyCode::Esc);
    for n in notes {
        update(&mut app, Msg::Run(RunEvent::Note(n.to_string())));
    }
    let mut r = fixture::report("k", Outcome::Cancelled, 10.2);
    r.notes = notes.iter().map(|n| n.to_string()).collect();
    update(&mut app, Msg::Run(RunEvent::Cancelled(Box::new(r))));
    screen(&app)
}

#[test]
fn esc_says_what_was_cleaned_up_before_the_findings() {
    let notes = [
        "cleaned up: dropped index ib_int4_random_50000_s42_idx (the datasets stay for reuse)",
        "sorted: too few trials to decide: 2 per setting, 4 needed at 95%",
        "random: too few trials to decide: 1 to 2 per setting, 4 needed at 95%",
    ];
    for size in [(80, 24), (160, 48)] {
        let s = cancelled(size, &notes);
        assert!(s.contains("cancelled after 10.2 s"), "{size:?}\n{s}");
        assert!(s.contains("cleaned up: dropped index"), "{size:?}\n{s}");
    }
}

#[test]
fn esc_with_nothing_to_drop_says_so() {
    let s = cancelled((80, 24), &[]);
    assert!(s.contains("nothing was left to clean up"), "{s}");
}
