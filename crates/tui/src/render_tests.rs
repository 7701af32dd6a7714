//! Rendering on ratatui's `TestBackend`: whole screens at 80×24 and 160×48, snapshotted, plus
//! checks that hold at every size (every pane's title shows, NO_COLOR means no colour).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;

use super::app::{Focus, Level};
use super::fixture::{self, draw, press, screen};
use super::msg::{Msg, ProbeMsg, ProbeStage, ServerMsg};
use super::theme::Theme;
use super::update::{set_focus, update};
use crate::experiment::{Outcome, RunEvent};

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

fn assert_titles(s: &str) {
    for t in ["Target", "Host", "Parameters", "Run", "History"] {
        assert!(s.contains(t), "{t} missing:\n{s}");
    }
}

#[test]
fn idle_small() {
    let app = fixture::idle_app(SMALL, Instant::now());
    let s = screen(&app);
    assert_titles(&s);
    assert!(s.contains("shared_buffers 128MB"), "{s}");
    assert!(s.contains("commits/s"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn idle_large() {
    let app = fixture::idle_app(LARGE, Instant::now());
    let s = screen(&app);
    assert_titles(&s);
    assert!(s.contains("PostgreSQL 15.18"), "{s}");
    assert!(s.contains("AMD EPYC 7B13"), "{s}");
    assert!(
        s.contains("best median: 10.9 s [10.7 s, 11.2 s] in run r6, best of 7 runs"),
        "{s}"
    );
    assert!(s.contains("60 trials"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn running_small() {
    let app = fixture::running_app(SMALL, Instant::now());
    let s = screen(&app);
    assert_titles(&s);
    assert!(s.contains("[Run]"), "{s}");
    assert!(s.contains("trial 7/10"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn running_large() {
    let app = fixture::running_app(LARGE, Instant::now());
    let s = screen(&app);
    assert_titles(&s);
    assert!(s.contains("66%"), "{s}");
    assert!(s.contains("maintenance_work_mem · log"), "{s}");
    assert!(s.contains("workers"), "{s}");
    assert!(s.contains("Esc cancel run"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn run_cancelled_shows_notes_and_outcome() {
    let base = Instant::now();
    let mut app = fixture::running_app(LARGE, base);
    press(&mut app, KeyCode::Esc);
    let note = "cleaned up: dropped \"pglab\".\"ib_run_abcd\"".to_string();
    update(&mut app, Msg::Run(RunEvent::Note(note.clone())));
    let mut r = fixture::report("k", Outcome::Cancelled, 72.4);
    r.notes = vec![note];
    update(&mut app, Msg::Run(RunEvent::Cancelled(Box::new(r))));
    let s = screen(&app);
    assert!(s.contains("cancelled after 72.4 s · 6 results kept"), "{s}");
    assert!(s.contains("cleaned up: dropped"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn help_overlay() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::idle_app(size, Instant::now());
        update(
            &mut app,
            Msg::Key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE)),
        );
        let s = screen(&app);
        for k in ["Help", "run the full sweep", "disk probes"] {
            assert!(s.contains(k), "{k} missing at {size:?}:\n{s}");
        }
        insta::assert_snapshot!(format!("help_{}x{}", size.0, size.1), s);
        // What does not fit is one End away, never cut.
        update(
            &mut app,
            Msg::Key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)),
        );
        let end = screen(&app);
        for k in ["[keys]", "q C-c"] {
            assert!(end.contains(k), "{k} missing at {size:?} after End:\n{end}");
        }
    }
}

#[test]
fn editing_shows_the_reason_beside_the_field() {
    let mut app = fixture::idle_app(LARGE, Instant::now());
    press(&mut app, KeyCode::Enter);
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
    );
    for c in "0".chars() {
        press(&mut app, KeyCode::Char(c));
    }
    let s = screen(&app);
    assert!(s.contains("✗"), "{s}");
    assert!(s.contains("Enter accept"), "{s}");
    press(&mut app, KeyCode::Enter);
    let s = screen(&app);
    assert!(s.contains("must be at least 1"), "{s}");
    assert!(s.contains("✗ rows: must be at least 1"), "{s}");
    insta::assert_snapshot!(s);
    // At 80 columns the reason goes under the form.
    update(&mut app, Msg::Resize(80, 24));
    let s = screen(&app);
    assert!(s.contains("✗ rows: must be at least 1"), "{s}");
}

#[test]
fn lost_connection_and_probe_progress() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    update(
        &mut app,
        Msg::Server(ServerMsg::Lost {
            error: "the server closed the connection".into(),
            retry_in: Duration::from_secs(8),
        }),
    );
    press(&mut app, KeyCode::Char('d'));
    update(
        &mut app,
        Msg::Probe(ProbeMsg::Progress {
            stage: ProbeStage::SeqWrite,
            fraction: 0.4,
        }),
    );
    let s = screen(&app);
    assert!(s.contains("connection lost"), "{s}");
    assert!(s.contains("retrying in 8 s"), "{s}");
    assert!(s.contains("sequential write 40%"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn remote_targets_say_the_host_pane_is_pglabs_machine() {
    let mut app = fixture::idle_app(LARGE, Instant::now());
    app.host.remote = true;
    let s = screen(&app);
    assert!(s.contains("pglab's machine"), "{s}");
    assert!(s.contains("not the server"), "{s}");
}

#[test]
fn notices_and_confirmations_draw_over_nothing_else() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    app.notify(Level::Error, "not started: this run needs about 40 GB of disk but only 12 GB is free on the server's filesystem: use fewer rows");
    let s = screen(&app);
    assert!(s.contains("not started: this run needs"), "{s}");
    assert_titles(&s);
    app.notice = None;
    app.overlay = super::app::Overlay::Confirm(super::app::Confirm::Quit {
        question: "A run is in progress. Cancel it (its tables are dropped) and quit?".into(),
    });
    let s = screen(&app);
    assert!(s.contains("y yes · n no"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn every_size_from_small_to_large_keeps_every_title() {
    let base = Instant::now();
    for (w, h) in [
        (80, 24),
        (90, 26),
        (100, 30),
        (120, 28),
        (120, 40),
        (200, 60),
    ] {
        for mut app in [
            fixture::idle_app((w, h), base),
            fixture::running_app((w, h), base),
        ] {
            let s = screen(&app);
            assert_titles(&s);
            set_focus(&mut app, Focus::Target);
            assert_titles(&screen(&app));
        }
    }
    // The first results of a run, at every size (a 1-row table once broke the split).
    for (w, h) in [(80, 24), (100, 30), (160, 48)] {
        for n in 0..3 {
            assert_titles(&screen(&fixture::running_app_with((w, h), base, n)));
        }
    }
    // Too small: a sentence instead of a broken layout.
    let app = fixture::idle_app((50, 12), base);
    assert!(screen(&app).contains("pglab needs at least 60×16"));
}

#[test]
fn any_number_of_results_draws_at_any_size() {
    let base = Instant::now();
    for n in 0..=10 {
        for (w, h) in [(60, 16), (80, 24), (100, 30), (130, 34), (160, 48)] {
            let mut app = fixture::running_app((w, h), base);
            app.run.samples = fixture::samples(n);
            if n % 3 == 1 {
                for s in &mut app.run.samples {
                    s.projected = true;
                }
            }
            assert_titles(&screen(&app));
        }
    }
}

#[test]
fn no_color_means_no_colour() {
    let mut app = fixture::running_app(LARGE, Instant::now());
    app.theme = Theme { color: false };
    let t = draw(&app);
    for cell in t.backend().buffer().content() {
        assert_eq!(cell.fg, Color::Reset, "{cell:?}");
        assert_eq!(cell.bg, Color::Reset, "{cell:?}");
    }
    app.theme = Theme { color: true };
    let t = draw(&app);
    assert!(
        t.backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.fg != Color::Reset)
    );
}

/// The run pane's four views after a finished sweep of five repeats, and the summary
/// scrolled, at 80×24 and 160×48.
#[test]
fn run_views_at_80x24_and_160x48() {
    for size in [SMALL, LARGE] {
        let mut app = fixture::finished_app(size, Instant::now());
        let name = |v: &str| format!("run_{v}_{}x{}", size.0, size.1);
        let s = screen(&app);
        assert!(s.contains("summary"), "{s}");
        // Medians with their interval, and the best groups marked.
        assert!(s.contains("5.2 s") && s.contains("5.1–5.3 s"), "{s}");
        assert!(s.contains("★"), "{s}");
        assert!(s.contains("v view"), "the key bar names the view key:\n{s}");
        insta::assert_snapshot!(name("summary"), s);
        press(&mut app, KeyCode::PageDown);
        let s = screen(&app);
        assert!(s.contains("≈"), "ties further down:\n{s}");
        insta::assert_snapshot!(name("summary_scrolled"), s);
        press(&mut app, KeyCode::Char('v'));
        let s = screen(&app);
        assert!(s.contains("trials"), "{s}");
        assert!(s.contains("external, 4 runs"), "{s}");
        insta::assert_snapshot!(name("trials"), s);
        press(&mut app, KeyCode::Char('v'));
        let s = screen(&app);
        assert!(
            s.contains("maintenance_work_mem · log"),
            "the chart at {size:?}:\n{s}"
        );
        assert!(s.contains("interval"), "{s}");
        insta::assert_snapshot!(name("chart"), s);
        press(&mut app, KeyCode::Char('v'));
        let s = screen(&app);
        assert!(s.contains("16MB is enough"), "{s}");
        insta::assert_snapshot!(name("findings"), s);
    }
}

#[test]
fn the_finding_shows_at_every_size() {
    let base = Instant::now();
    for (w, h) in [
        (60, 16),
        (80, 24),
        (100, 30),
        (120, 40),
        (160, 48),
        (200, 60),
    ] {
        let app = fixture::finished_app((w, h), base);
        let s = screen(&app);
        // The last note is in the head of every view but the findings view, wrapped.
        assert!(
            s.contains("note: SET maintenance_work_mem"),
            "{w}×{h}:\n{s}"
        );
        assert_titles(&s);
    }
}

/// The per-trial table shows at least the columns at 200×60 that it shows at 80×24.
#[test]
fn wide_layouts_show_every_column_narrow_ones_show() {
    use crate::experiment::{ResultLayout, Sample};
    let ib = crate::experiment::index_build::layout();
    let ib_cells = [
        "random",
        "0",
        "64MB",
        "3",
        "0.342",
        "0",
        "4408 kB",
        "3952 kB",
        "external sort, 3952 kB on disk",
    ];
    let ingest = ResultLayout {
        columns: crate::experiment::ingest::COLUMNS
            .iter()
            .map(|c| c.to_string())
            .collect(),
        ..ib.clone()
    };
    let ingest_cells = [
        "insert-tx",
        "1000",
        "4",
        "on",
        "1M",
        "12.31",
        "81.2k",
        "4.02",
        "8.05",
        "131",
    ];
    for (layout, cells) in [(ib, &ib_cells[..]), (ingest, &ingest_cells[..])] {
        let samples: Vec<Sample> = (0..6)
            .map(|i| Sample {
                series: "s".into(),
                x: (1u64 << (20 + i)) as f64,
                y: 1.0 + i as f64,
                projected: false,
                cells: cells.iter().map(|c| c.to_string()).collect(),
                settings: String::new(),
                ..Default::default()
            })
            .collect();
        let shown = |size: (u16, u16)| -> Vec<String> {
            let mut app =
                fixture::running_app_from(size, Instant::now(), layout.clone(), samples.clone());
            press(&mut app, KeyCode::Char('v'));
            let s = screen(&app);
            let header = s
                .lines()
                .find(|l| l.contains(&layout.columns[0]) && l.contains(&layout.columns[1]))
                .unwrap_or_else(|| panic!("no header at {size:?}:\n{s}"))
                .to_string();
            layout
                .columns
                .iter()
                .filter(|c| header.contains(c.as_str()))
                .cloned()
                .collect()
        };
        let narrow = shown(SMALL);
        assert!(narrow.len() >= 7, "{narrow:?}");
        for size in [LARGE, (200, 60)] {
            let wide = shown(size);
            for c in &narrow {
                assert!(
                    wide.contains(c),
                    "{c} shown at 80×24, not at {size:?}: {wide:?}"
                );
            }
        }
        assert_eq!(shown((200, 60)), layout.columns, "every column at 200×60");
    }
}

#[test]
fn every_view_draws_at_any_size() {
    let base = Instant::now();
    for (w, h) in [
        (60, 16),
        (80, 24),
        (100, 30),
        (130, 34),
        (160, 48),
        (200, 60),
    ] {
        for n in [0, 1, 7] {
            let mut app = fixture::running_app_with((w, h), base, n);
            for _ in 0..4 {
                press(&mut app, KeyCode::Char('v'));
                for k in [KeyCode::End, KeyCode::PageUp, KeyCode::Char('j')] {
                    press(&mut app, k);
                }
                assert_titles(&screen(&app));
            }
        }
    }
}

/// A Citus coordinator with two workers on this machine, as `citus::read` reports it.
fn citus() -> crate::server::CitusInfo {
    let node = |id: i32, port: i32, group: i32| crate::server::citus::CitusNode {
        id,
        host: "127.0.0.1".into(),
        port,
        group,
        active: true,
        has_shards: group != 0,
    };
    crate::server::CitusInfo {
        version: "Citus 13.2.2 on x86_64-pc-linux-gnu".into(),
        extension: "13.2-1".into(),
        shard_count: 32,
        nodes: vec![node(1, 5432, 0), node(2, 5433, 1), node(3, 5434, 2)],
    }
}

#[test]
fn a_citus_target_names_its_nodes_and_whose_machine_the_host_pane_shows() {
    let mut app = fixture::idle_app(LARGE, Instant::now());
    if let Some(s) = app.target.latest.as_mut() {
        s.citus = Some(citus());
    }
    let s = screen(&app);
    assert!(s.contains("Citus coordinator"), "{s}");
    assert!(
        s.contains("Citus 13.2.2 · 2 workers · 32 shards by default"),
        "{s}"
    );
    assert!(
        s.contains("Citus target: the Citus workers run on this machine too"),
        "{s}"
    );
}

#[test]
fn a_running_what_if_and_altered_settings_are_marked_in_the_panes() {
    let mut app = fixture::running_app(LARGE, Instant::now());
    app.run.whatif = "shared_buffers=128MB,1GB".into();
    if let Some(s) = app.target.latest.as_mut() {
        s.altered = vec![("shared_buffers".into(), "1GB".into())];
    }
    let s = screen(&app);
    assert!(
        s.contains("this run sweeps shared_buffers=128MB,1GB"),
        "{s}"
    );
    assert!(
        s.contains("this run changes shared_buffers=128MB,1GB"),
        "{s}"
    );
    assert!(s.contains("ALTER SYSTEM: shared_buffers=1GB"), "{s}");
    assert!(s.contains("shared_buffers 128MB*"), "{s}");
}

#[test]
fn a_primary_shows_its_standbys_and_a_standby_its_own_lag() {
    let mut app = fixture::idle_app(LARGE, Instant::now());
    if let Some(s) = app.target.latest.as_mut() {
        s.replicas = vec![crate::server::replication::ReplicaLag {
            application_name: "db2".into(),
            ..crate::experiment::lab::record_schema::replica()
        }];
    }
    let s = screen(&app);
    assert!(
        s.contains("standby db2 streaming (sync) replay 0.5 ms, 0 B behind"),
        "{s}"
    );
    if let Some(s) = app.target.latest.as_mut() {
        s.replicas.clear();
        s.in_recovery = true;
        s.standby_lag = Some(crate::server::replication::StandbyLag {
            replay_behind_bytes: Some(8192),
            last_replayed_s: Some(2.0),
        });
    }
    let s = screen(&app);
    assert!(s.contains("in recovery (standby)"), "{s}");
    assert!(
        s.contains("replay 8192 B behind · last replayed xact 2.0 s ago"),
        "{s}"
    );
}

/// A note that only repeats the recommendation's finding is not shown a second time below it
/// (a pane tall enough for notes beside the recommendation: `z` at 80×24, or a big terminal);
/// other notes still are.
#[test]
fn a_note_repeating_the_recommendation_is_not_shown_twice() {
    let mut app = fixture::finished_app(LARGE, Instant::now());
    let finding = "too few trials to decide: 1MB undecided against the best (64MB)";
    app.run.decision = vec![format!("random: not decided yet: {finding}.")];
    app.run.notes.push(format!("random: {finding}"));
    let s = screen(&app);
    assert!(s.contains("recommendation: random: not decided yet"), "{s}");
    assert!(!s.contains("note: random: too few"), "{s}");
    app.run.notes.push("sorted: a note of its own".into());
    let s = screen(&app);
    assert!(s.contains("note: sorted: a note of its own"), "{s}");
}
