//! The import dialog: messages in, state and commands out, and how it draws at 80×24 and
//! 160×48. No terminal, no server.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::app::{App, Focus, Overlay};
use super::fixture::{self, code, key, screen, typed};
use super::msg::{Command, ImportCmd, ImportMsg, Msg};
use super::overlays::import::Stage;
use super::update::update;
use crate::experiment::ExperimentKind;
use crate::import::source::Listed;
use crate::import::{ImportEvent, ImportProgress, ImportReport, Sample, TableName};

const SMALL: (u16, u16) = (80, 24);
const LARGE: (u16, u16) = (160, 48);

fn listed() -> Vec<Listed> {
    vec![
        Listed {
            name: TableName::new("sales", "orders"),
            rows_estimate: 4.2e7,
            bytes: 40 << 30,
            readable: true,
        },
        Listed {
            name: TableName::new("sales", "customers"),
            rows_estimate: 120_000.0,
            bytes: 30 << 20,
            readable: true,
        },
        Listed {
            name: TableName::new("audit", "log"),
            rows_estimate: -1.0,
            bytes: 8192,
            readable: false,
        },
    ]
}

/// The dialog open on the table list of a source.
fn with_tables(size: (u16, u16)) -> App {
    let mut app = fixture::idle_app(size, Instant::now());
    assert!(update(&mut app, key('i')).is_empty());
    assert_eq!(app.overlay, Overlay::Import);
    assert!(typed(&mut app, "host=db1 dbname=sales password=sekrit").is_empty());
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [Command::Import(ImportCmd::List { conninfo })] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(conninfo, "host=db1 dbname=sales password=sekrit");
    assert_eq!(app.import.stage, Stage::Listing);
    update(&mut app, Msg::Import(ImportMsg::Tables(Ok(listed()))));
    assert_eq!(app.import.stage, Stage::Tables);
    app
}

#[test]
fn choosing_tables_and_a_sample_starts_the_import() {
    let mut app = with_tables(LARGE);
    update(&mut app, code(KeyCode::Down));
    update(&mut app, key(' '));
    update(&mut app, code(KeyCode::Up));
    update(&mut app, key(' '));
    for _ in 0..3 {
        update(&mut app, code(KeyCode::Right));
    }
    update(&mut app, key('x'));
    let cmds = update(&mut app, code(KeyCode::Enter));
    let [Command::Import(ImportCmd::Start { conninfo, spec })] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(conninfo, "host=db1 dbname=sales password=sekrit");
    assert_eq!(
        spec.tables,
        [
            TableName::new("sales", "orders"),
            TableName::new("sales", "customers")
        ]
    );
    assert_eq!(spec.sample, Sample::Percent(10.0));
    assert!(!spec.indexes);
    assert_eq!(app.import.stage, Stage::Importing);
    // Esc cancels (once), and the sandbox is said to be as it was.
    let cmds = update(&mut app, code(KeyCode::Esc));
    assert!(matches!(
        cmds.as_slice(),
        [Command::Import(ImportCmd::Cancel)]
    ));
    assert!(update(&mut app, code(KeyCode::Esc)).is_empty());
    update(
        &mut app,
        Msg::Import(ImportMsg::Event(ImportEvent::Cancelled)),
    );
    assert!(screen(&app).contains("import cancelled: the sandbox is as it was"));
}

#[test]
fn a_listing_error_is_said_and_the_conninfo_kept() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    update(&mut app, key('i'));
    typed(&mut app, "host=nowhere");
    update(&mut app, code(KeyCode::Enter));
    update(
        &mut app,
        Msg::Import(ImportMsg::Tables(Err(
            "could not connect to nowhere:5432".into()
        ))),
    );
    assert_eq!(app.import.stage, Stage::Source);
    assert_eq!(app.import.conninfo, "host=nowhere");
    assert!(screen(&app).contains("could not connect to nowhere:5432"));
    // An empty conninfo is refused before anything is asked.
    update(
        &mut app,
        Msg::Key(crossterm::event::KeyEvent::new(
            KeyCode::Char('u'),
            crossterm::event::KeyModifiers::CONTROL,
        )),
    );
    assert!(update(&mut app, code(KeyCode::Enter)).is_empty());
    assert!(
        app.import
            .error
            .as_deref()
            .unwrap()
            .contains("give the server")
    );
}

#[test]
fn look_only_and_other_servers_refuse_the_dialog() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    app.observe = true;
    update(&mut app, key('i'));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.notice.as_ref().unwrap().text.contains("look-only"));
    let mut app = fixture::idle_app(SMALL, Instant::now());
    app.target.location = crate::server::Location::Remote {
        host: "db1".into(),
        port: 5432,
    };
    update(&mut app, key('i'));
    assert_eq!(app.overlay, Overlay::None);
    assert!(
        app.notice
            .as_ref()
            .unwrap()
            .text
            .contains("pglab sandbox import")
    );
}

#[test]
fn progress_and_the_result_draw_and_b_builds_on_the_table() {
    for size in [SMALL, LARGE] {
        let mut app = with_tables(size);
        update(&mut app, key(' '));
        update(&mut app, code(KeyCode::Enter));
        let ev = |e| Msg::Import(ImportMsg::Event(e));
        update(
            &mut app,
            ev(ImportEvent::Phase(
                "copying sales.orders (binary, all rows)".into(),
            )),
        );
        update(&mut app, ev(ImportEvent::Note("sales.orders: foreign key orders_customer_fkey is left out: it references sales.customers, which is not imported".into())));
        update(
            &mut app,
            ev(ImportEvent::Progress(ImportProgress {
                table: TableName::new("sales", "orders"),
                index: 1,
                tables: 1,
                rows: 21_000_000,
                rows_expected: Some(42_000_000),
                bytes: 20 << 30,
                seconds: 100.0,
            })),
        );
        let s = screen(&app);
        for t in [
            "copying sales.orders",
            "50%",
            "21M of ≈42M rows",
            "eta 1m 40s",
            "password=…",
            "foreign key",
        ] {
            assert!(s.contains(t), "{t} missing at {size:?}:\n{s}");
        }
        assert!(!s.contains("sekrit"), "the password is never drawn:\n{s}");
        insta::assert_snapshot!(format!("import_progress_{}x{}", size.0, size.1), s);
        let record = crate::import::ImportRecord {
            table: TableName::new("sales", "orders"),
            source: crate::sql::imported::SourceFingerprint {
                target: "me@db1:5432/sales".into(),
                version: "15.4".into(),
                system_identifier: None,
                database: "sales".into(),
            },
            snapshot_at: chrono::DateTime::UNIX_EPOCH,
            imported_at: chrono::DateTime::UNIX_EPOCH,
            sample: None,
            rows: 42_000_000,
            source_rows_estimate: 4.2e7,
            stream_bytes: 40 << 30,
            table_bytes: 38 << 30,
            index_bytes: 9 << 30,
            format: "binary".into(),
            seconds: 200.0,
        };
        update(
            &mut app,
            ev(ImportEvent::Finished(Box::new(ImportReport {
                records: vec![record],
                notes: vec![],
                seconds: 210.0,
            }))),
        );
        assert!(screen(&app).contains("imported sales.orders: 42M rows (all rows)"));
        update(&mut app, key('b'));
        assert_eq!(app.overlay, Overlay::None);
        assert_eq!(app.params.kind, ExperimentKind::IndexBuild);
        assert_eq!(app.params.current()["table"], "sales.orders");
        assert_eq!(app.params.selected_field().unwrap().key, "column");
        assert_eq!(app.focus, Focus::Params);
    }
}

#[test]
fn the_table_list_draws_with_sizes() {
    for size in [SMALL, LARGE] {
        let app = with_tables(size);
        let s = screen(&app);
        for t in [
            "sales.orders",
            "≈42M",
            "40 GB",
            "no SELECT",
            "all rows",
            "Space tick",
        ] {
            assert!(s.contains(t), "{t} missing at {size:?}:\n{s}");
        }
        insta::assert_snapshot!(format!("import_tables_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn the_password_is_masked_while_it_is_typed() {
    let mut app = fixture::idle_app(SMALL, Instant::now());
    update(&mut app, key('i'));
    for typed_so_far in ["host=db1 password=sek", "rit dbname=sales"] {
        typed(&mut app, typed_so_far);
        let s = screen(&app);
        assert!(!s.contains("sek"), "{s}");
        assert!(s.contains("password=•••"), "{s}");
    }
    assert!(screen(&app).contains("password=•••••• dbname=sales▏"));
    // A URL's password, before its @ is typed.
    update(&mut app, ctrl('u'));
    typed(&mut app, "postgresql://me:hunter2");
    let s = screen(&app);
    assert!(
        !s.contains("hunter2") && s.contains("postgresql://me:•••••••▏"),
        "{s}"
    );
    // What goes to the server is what was typed.
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(
        matches!(cmds.as_slice(), [Command::Import(ImportCmd::List { conninfo })] if conninfo == "postgresql://me:hunter2"),
        "{cmds:?}"
    );
}

#[test]
fn the_size_to_copy_sums_what_is_ticked() {
    let mut app = with_tables(SMALL);
    // Nothing ticked: no sum, and what Enter alone would take.
    let s = screen(&app);
    assert!(!s.contains("to copy"), "{s}");
    assert!(
        s.contains("nothing ticked: Space ticks; Enter alone imports sales.orders (≈ 40 GB)"),
        "{s}"
    );
    update(&mut app, code(KeyCode::Down));
    update(&mut app, key(' '));
    assert!(screen(&app).contains("≈ 30 MB to copy from 1 ticked table"));
    update(&mut app, code(KeyCode::Up));
    update(&mut app, key(' '));
    assert!(
        screen(&app).contains("≈ 40 GB to copy from 2 ticked tables"),
        "{}",
        screen(&app)
    );
    // A sample scales it.
    update(&mut app, code(KeyCode::Right));
    update(&mut app, key(' '));
    assert!(
        screen(&app).contains("≈ 15 MB to copy from 1 ticked table"),
        "{}",
        screen(&app)
    );
}

fn ctrl(c: char) -> Msg {
    Msg::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char(c),
        crossterm::event::KeyModifiers::CONTROL,
    ))
}
