//! The run pane's results for the runs a DBA met on a first afternoon (issue 25), drawn on
//! ratatui's `TestBackend` at 80×24 and 200×60 and snapshotted: a growth run (`pulp-quick`)
//! in every view, and a what-if run whose only varying thing is the swept setting.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::fixture::{self, press, screen};
use super::panes::run_view::RunView;

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (200, 60);

fn name(what: &str, size: (u16, u16)) -> String {
    format!("{what}_{}x{}", size.0, size.1)
}

/// The growth summary says what `history show` says: every step's writes as n, median and
/// interval (not `n 1` and no interval), the reads and sizes beside them, the step as its
/// versions for both designs (ranges' own row count in its rows column), the verdicts of
/// each step, and the decision.
#[test]
fn growth_summary_shows_the_numbers_of_history_show() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::growth_app(size, Instant::now());
        app.run.set_view(RunView::Summary);
        let s = screen(&app);
        assert!(
            s.contains("recommendation: On size, the evidence points to ranges"),
            "{s}"
        );
        if size == LARGE {
            // history show: snapshot at 10 versions, write median 119 ms over 4 trials,
            // interval 48 ms–180 ms (88%); ranges at 100 versions has 1990 rows.
            assert!(
                s.contains("snapshot  10        4  119 ms  48–180 ms (87.5%)"),
                "{s}"
            );
            assert!(s.contains("1990"), "{s}");
            assert!(
                s.contains("0.38 ms  0.34–0.40 ms (87.5%)"),
                "the reads:\n{s}"
            );
            assert!(s.contains("7.3 MB"), "the sizes:\n{s}");
            assert!(s.contains("at 100 versions: ranges faster to write"), "{s}");
            assert!(
                s.contains("ranges    100       4  2.8 ms"),
                "the step is its versions for ranges too:\n{s}"
            );
        } else {
            assert!(s.contains("4  46 ms   40–50 ms (87.5%)"), "{s}");
        }
        insta::assert_snapshot!(name("growth_summary", size), s);
    }
}

/// The trials view gives times in their unit (ranges' 2.8 ms write is not 0.00 s) and sizes
/// as sizes (71.5 GB, not 73219).
#[test]
fn growth_trials_have_units() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::growth_app(size, Instant::now());
        app.run.set_view(RunView::Trials);
        let s = screen(&app);
        assert!(s.contains("2.8 ms"), "{s}");
        assert!(!s.contains("0.00 "), "{s}");
        if size == LARGE {
            assert!(s.contains("71.5 GB"), "{s}");
            assert!(!s.contains("73219"), "{s}");
        }
        insta::assert_snapshot!(name("growth_trials", size), s);
    }
}

/// The chart's x axis is the versions, a 0 at its start and round decades after it; its
/// title names the quantity once.
#[test]
fn growth_chart_axes_read_as_versions() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::growth_app(size, Instant::now());
        app.run.set_view(RunView::Chart);
        let s = screen(&app);
        assert!(s.contains("versions · log"), "{s}");
        assert!(!s.contains("(rows)"), "{s}");
        assert!(!s.contains("0.0 "), "{s}");
        assert!(s.contains("1M"), "{s}");
        assert!(s.contains("ms"), "y ticks with their unit:\n{s}");
        insta::assert_snapshot!(name("growth_chart", size), s);
    }
}

/// A what-if run whose only varying thing is the swept setting: the swept values are the x
/// axis without pressing `a`, labelled by their values (the name once, in the header), and
/// the summary compares them.
#[test]
fn whatif_puts_the_settings_on_the_axis_by_itself() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::whatif_app(size, Instant::now());
        app.run.set_view(RunView::Summary);
        let s = screen(&app);
        assert!(
            !s.contains("one setting run: nothing to compare"),
            "the own axis repeated a useless sentence:\n{s}"
        );
        assert!(s.contains("shared_buffers"), "{s}");
        assert!(s.contains("128MB") && s.contains("256MB"), "{s}");
        assert!(!s.contains("shared_buffers=128MB…"), "a cut label:\n{s}");
        assert!(
            s.contains("a x: own"),
            "the key bar offers the other axis:\n{s}"
        );
        insta::assert_snapshot!(name("whatif_summary", size), s);
        app.run.set_view(RunView::Chart);
        let s = screen(&app);
        assert!(s.contains("128MB") && s.contains("256MB"), "{s}");
        insta::assert_snapshot!(name("whatif_chart", size), s);
        // `a` goes to the own axis and stays there.
        press(&mut app, KeyCode::Char('a'));
        app.run.set_view(RunView::Summary);
        let s = screen(&app);
        assert!(s.contains("series · shared_buffers"), "{s}");
        assert!(s.contains("random · 128MB"), "{s}");
    }
}

/// Every trial row names its settings (second, by value), and at 80 columns ←→ scroll the
/// columns that do not fit while the first ones stay.
#[test]
fn trials_scroll_sideways_and_name_their_settings() {
    let mut app = fixture::whatif_app(SMALL, Instant::now());
    app.run.set_view(RunView::Trials);
    let s = screen(&app);
    let header = s
        .lines()
        .find(|l| l.contains("order") && l.contains("shared_buffers"))
        .unwrap_or_else(|| panic!("no header naming the setting:\n{s}"));
    assert!(header.contains('→'), "hidden columns are announced:\n{s}");
    // `sort` comes beside `seconds`: in view at 80 columns without scrolling (issue 55).
    assert!(header.contains("seconds  sort"), "{s}");
    insta::assert_snapshot!("whatif_trials_80x24", s);
    for _ in 0..8 {
        press(&mut app, KeyCode::Right);
    }
    let s = screen(&app);
    let header = s
        .lines()
        .find(|l| l.contains("order") && l.contains("shared_buffers"))
        .unwrap_or_else(|| panic!("the leading columns stay:\n{s}"));
    assert!(header.contains("temp"), "the last column is reached:\n{s}");
    assert!(!header.contains("workers"), "{s}");
    // ← scrolls back, and at the first column leaves the pane as before.
    let scrolled = app.run.hscroll;
    assert!(scrolled > 0);
    for _ in 0..scrolled {
        press(&mut app, KeyCode::Left);
    }
    assert_eq!(app.run.hscroll, 0);
    assert_eq!(app.focus, super::app::Focus::Run);
    press(&mut app, KeyCode::Left);
    assert_eq!(app.focus, super::app::Focus::Params);
}

/// TUI messages name fields as the editor does (`mwm`), not as the command line's flags.
#[test]
fn editor_messages_name_fields_not_flags() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    app.params.set_value("set", "maintenance_work_mem=1MB,2MB");
    let s = screen(&app);
    assert!(s.contains("sweep it with mwm"), "{s}");
    assert!(!s.contains("--mwm"), "{s}");
}
