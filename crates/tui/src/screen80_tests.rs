//! The screens of issue 55 at 80×24 and 100×30: the zoomed Run pane with a 12-row result
//! whole, the trials view's `sort` column in view, the comparison with its name column fixed
//! when scrolled, the help listing `c`, the question before a 50M-row build with a terabyte
//! of maintenance_work_mem, the preset picker's position, the Target pane's settings and role
//! at 80 columns, and sessions hidden from a role without pg_read_all_stats.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::app::{Focus, Overlay};
use super::fixture::{self, code, key, press, screen};
use super::msg::{Command, Msg, RunKind, ServerMsg};
use super::update::{set_focus, update};
use crate::experiment::lab::preflight;

const SIZES: [(u16, u16); 2] = [(80, 24), (100, 30)];

fn name(what: &str, size: (u16, u16)) -> String {
    format!("{what}_{}x{}", size.0, size.1)
}

#[test]
fn zoomed_trials_show_a_12_row_result_whole() {
    for size in SIZES {
        let samples = fixture::repeated_samples(2).into_iter().take(12).collect();
        let mut app = fixture::finished_app_with(size, Instant::now(), samples);
        set_focus(&mut app, Focus::Run);
        app.run.set_view(super::panes::run_view::RunView::Trials);
        press(&mut app, KeyCode::Char('z'));
        let s = screen(&app);
        let rows = s
            .lines()
            .filter(|l| l.contains("┃sorted ") || l.contains("┃random "))
            .count();
        assert_eq!(rows, 12, "not every trial shows at {size:?}:\n{s}");
        assert!(s.contains("sort"), "{s}");
        assert!(s.contains("z gives the panes back"), "{s}");
        assert!(
            !s.contains("Target"),
            "the zoomed pane shares the screen:\n{s}"
        );
        insta::assert_snapshot!(name("zoomed_trials", size), s);
        press(&mut app, KeyCode::Char('z'));
        assert!(screen(&app).contains("Target"));
    }
}

#[test]
fn the_trials_sort_column_shows_at_80_columns_with_swept_settings() {
    let mut app = fixture::whatif_app((80, 24), Instant::now());
    set_focus(&mut app, Focus::Run);
    app.run.set_view(super::panes::run_view::RunView::Trials);
    let s = screen(&app);
    let header = s
        .lines()
        .find(|l| l.contains("order") && l.contains("seconds"))
        .unwrap_or_else(|| panic!("no header:\n{s}"));
    assert!(header.contains("sort"), "{header}\n{s}");
}

#[test]
fn the_comparison_keeps_its_name_column_when_scrolled() {
    for size in SIZES {
        // Two growth runs (the worked example): their comparison has tables.
        let mut app = fixture::idle_app(size, Instant::now());
        update(&mut app, key('h'));
        let runs = ["20261201T100000Z-aaaa", "20261202T100000Z-bbbb"]
            .map(crate::report::example::growth)
            .to_vec();
        update(
            &mut app,
            Msg::Runs {
                runs,
                warnings: Vec::new(),
            },
        );
        update(&mut app, code(KeyCode::Down));
        update(&mut app, key('b'));
        update(&mut app, code(KeyCode::Up));
        update(&mut app, key('c'));
        let v = app.runs.view.as_ref().expect("a comparison");
        let named: Vec<(String, usize)> = v
            .lines
            .iter()
            .zip(&v.fixed)
            .filter(|(_, f)| **f > 0)
            .map(|(l, f)| (l.chars().take(*f).collect::<String>(), *f))
            .collect();
        assert!(!named.is_empty(), "no table found in {:?}", v.lines);
        for _ in 0..4 {
            update(&mut app, code(KeyCode::Right));
        }
        assert!(app.runs.view.as_ref().unwrap().hscroll > 0);
        let s = screen(&app);
        for (head, _) in named.iter().filter(|(h, _)| !h.trim().is_empty()).take(3) {
            assert!(s.contains(head.trim_end()), "{head:?} scrolled off:\n{s}");
        }
        insta::assert_snapshot!(name("compare_scrolled", size), s);
    }
}

#[test]
fn the_help_lists_capture_and_ends_whole() {
    for size in SIZES {
        let mut app = fixture::idle_app(size, Instant::now());
        press(&mut app, KeyCode::Char('?'));
        press(&mut app, KeyCode::End);
        let s = screen(&app);
        assert!(
            s.contains("window verify") && s.contains("up down help quit"),
            "the last line is cut:\n{s}"
        );
        insta::assert_snapshot!(name("help_end", size), s);
        app.help_scroll = 0;
        let entries = super::overlays::help::entries(&app);
        assert!(entries.iter().any(|(k, _)| k == "c"));
        // Scrolled to `c`: the line is drawn.
        let at = entries.iter().position(|(k, _)| k == "c").unwrap();
        app.help_scroll = at;
        let s = screen(&app);
        assert!(s.contains("capture the target's top"), "{s}");
        insta::assert_snapshot!(name("help_capture", size), s);
    }
}

#[test]
fn a_50m_row_build_with_a_terabyte_of_mwm_asks_first() {
    for size in SIZES {
        let mut app = fixture::idle_app(size, Instant::now());
        app.params.set_value("rows", "50M");
        app.params.set_value("mwm", "1TB");
        app.params.set_value("order", "random");
        let cmds = update(&mut app, key('s'));
        let [Command::Preflight { spec, kind, .. }] = cmds.as_slice() else {
            panic!("{cmds:?}")
        };
        assert_eq!(*kind, RunKind::Sweep);
        let verdict = preflight::preflight(spec, Some(1 << 50), None, preflight::CONFIRM_ABOVE);
        let cmds = update(
            &mut app,
            Msg::Preflight {
                spec: spec.clone(),
                kind: *kind,
                verdict: Box::new(verdict),
            },
        );
        assert!(cmds.is_empty(), "started without asking: {cmds:?}");
        let Overlay::Confirm(c) = &app.overlay else {
            panic!("no question: {:?}", app.overlay)
        };
        let q = c.question().to_string();
        assert!(q.contains("maintenance_work_mem 1TB is more than"), "{q}");
        let s = screen(&app);
        insta::assert_snapshot!(name("confirm_big_build", size), s);
        update(&mut app, key('n'));
        assert!(!app.run.running());
    }
}

#[test]
fn the_preset_picker_says_where_it_is() {
    for size in SIZES {
        let mut app = super::overlay_tests::picker(size);
        update(&mut app, code(KeyCode::Down));
        let n = app.presets.entries.len();
        let s = screen(&app);
        assert!(s.contains(&format!("2 of {n}")), "{s}");
    }
}

#[test]
fn the_target_pane_at_80_columns_keeps_the_settings_experiments_turn() {
    let app = fixture::idle_app((80, 24), Instant::now());
    let s = screen(&app);
    for t in [
        "work_mem",
        "fsync",
        "synchronous_commit",
        "wal_level",
        "shared_buffers",
        "PostgreSQL 15",
        "role ",
    ] {
        assert!(s.contains(t), "{t} missing:\n{s}");
    }
    insta::assert_snapshot!("target_80x24", s);
}

#[test]
fn sessions_hidden_from_the_role_are_said_so() {
    let mut app = fixture::idle_app((100, 30), Instant::now());
    let mut snap = fixture::server(99, app.now);
    snap.connections.clear();
    snap.connections
        .insert(crate::server::snapshot::HIDDEN.to_string(), 2);
    update(&mut app, Msg::Server(ServerMsg::Snapshot(Box::new(snap))));
    let s = screen(&app);
    assert!(s.contains("2 hidden: needs pg_read_all_stats"), "{s}");
}
