//! Text is never cut off where it matters: long refusals wrap, and what cannot wrap (tables,
//! reports) scrolls sideways without running past its end.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::app::Level;
use super::fixture::{self, code, key, screen};
use super::msg::Msg;
use super::update::update;
use crate::experiment::{ExperimentKind, Outcome};

#[test]
fn a_long_refusal_keeps_its_advice_at_80x24() {
    let mut app = fixture::idle_app((80, 24), Instant::now());
    app.notify(
        Level::Error,
        "not started: this run needs about 1.2 TB of disk (table 800 GB, indexes 300 GB, temp and WAL 100 GB) but only 78 GB is free on the server's filesystem: use fewer steps or a fill-limit, or grow-mode keep",
    );
    let s = screen(&app);
    assert!(s.contains("grow-mode keep"), "{s}");
}

fn history(size: (u16, u16)) -> super::app::App {
    let mut app = fixture::idle_app(size, Instant::now());
    update(&mut app, key('h'));
    let mut r = fixture::report("index-build:x", Outcome::Finished, 12.0);
    r.run_id = "20250102T030405Z-aaaa".into();
    assert_eq!(r.kind(), ExperimentKind::IndexBuild);
    update(
        &mut app,
        Msg::Runs {
            runs: vec![r],
            warnings: Vec::new(),
        },
    );
    app
}

#[test]
fn the_history_list_does_not_scroll_past_its_end() {
    let mut app = history((80, 24));
    for _ in 0..40 {
        update(&mut app, code(KeyCode::Right));
    }
    let s = screen(&app);
    // The last column's text is still on screen: no blank columns past the end.
    let table = crate::report::history_table::list_table(&app.runs.shown());
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(app.runs.hscroll <= widest, "{}", app.runs.hscroll);
    assert!(app.runs.hscroll + 78 >= widest, "scrolled to the end");
    let row = s.lines().find(|l| l.contains("▶")).unwrap_or_default();
    assert!(row.trim_end_matches(['║', ' ']).chars().count() > 40, "{s}");
}

#[test]
fn the_report_view_scrolls_sideways_to_the_end_of_its_widest_line() {
    let mut app = history((80, 24));
    update(&mut app, code(KeyCode::Enter));
    let v = app.runs.view.clone().expect("the report view");
    let widest = v.width();
    let s = screen(&app);
    if widest > 76 {
        assert!(s.contains("←→ scroll"), "{s}");
    }
    for _ in 0..200 {
        update(&mut app, code(KeyCode::Right));
    }
    let v = app.runs.view.as_ref().unwrap();
    assert_eq!(v.hscroll, widest.saturating_sub(76));
    update(&mut app, code(KeyCode::Left));
    assert!(app.runs.view.as_ref().unwrap().hscroll < widest.saturating_sub(76).max(1));
}
