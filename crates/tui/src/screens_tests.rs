//! The query, plan, import and tune views at 80×24 and 100×30 with long names and many rows,
//! as the buffer shows them (insta snapshots): nothing runs past the edge, the keys and the
//! node details are on screen, long lists show where they are.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::app::App;
use super::fixture::{self, code, key, screen, typed};
use super::msg::{ImportMsg, Msg, RunKind};
use super::panes::run_view::RunView;
use super::update::update;
use crate::experiment::{RunEvent, Sample};
use crate::import::TableName;
use crate::import::source::Listed;

const SIZES: [(u16, u16); 2] = [(80, 24), (100, 30)];

const STATEMENTS: [&str; 3] = [
    "monthly revenue by customer segment and sales region, returns netted out",
    "open orders of the top 500 customers with their last three shipments",
    "stock",
];

/// A query run in progress: three statements (two with names longer than the pane), two
/// combinations, six repeats each in.
fn query_app(size: (u16, u16)) -> App {
    let base = Instant::now();
    let mut app = fixture::idle_app(size, base);
    update(&mut app, key('4'));
    let sql: Vec<String> = STATEMENTS
        .iter()
        .enumerate()
        .map(|(i, n)| format!("-- name: {n}\nSELECT {i};"))
        .collect();
    app.params.set_value("sql", &sql.join("\n"));
    app.params
        .set_value("set", "work_mem=4MB,256MB random_page_cost=1.1");
    let spec = app
        .params
        .spec_for(RunKind::Sweep)
        .expect("the query parses");
    let crate::experiment::ExperimentSpec::Query(q) = &spec else {
        unreachable!()
    };
    let combos = crate::experiment::query::combos(q);
    app.now = base + Duration::from_secs(60);
    app.run.begin(&spec, RunKind::Sweep, app.now);
    let mut events = vec![RunEvent::Started {
        run_id: "20261204T180000Z-q1".into(),
        description: "query · 3 statements · 2 combinations".into(),
        trials: 36,
        layout: crate::experiment::query::layout(q, &combos),
    }];
    for rep in 1..=6u32 {
        for (s, name) in STATEMENTS.iter().enumerate() {
            for c in &combos {
                let y = 0.010 * (s + 1) as f64 * if c.combo == 0 { 1.6 } else { 1.0 }
                    + 0.0001 * rep as f64;
                events.push(RunEvent::Sample(Sample {
                    series: name.to_string(),
                    x: c.combo as f64,
                    y,
                    projected: false,
                    cells: vec![
                        name.to_string(),
                        c.label.clone(),
                        rep.to_string(),
                        format!("{:.1} ms", y * 1000.0),
                        "12,345".into(),
                    ],
                    ..Sample::default()
                }));
            }
        }
    }
    for (i, ev) in events.into_iter().enumerate() {
        app.now = base + Duration::from_secs(60 + i as u64);
        update(&mut app, Msg::Run(ev));
    }
    app
}

fn no_line_too_wide(s: &str, size: (u16, u16)) {
    for l in s.lines() {
        assert!(l.chars().count() <= size.0 as usize, "{size:?}: {l}");
    }
}

#[test]
fn the_query_view_with_long_statement_names() {
    for size in SIZES {
        for view in [RunView::Summary, RunView::Trials] {
            let mut app = query_app(size);
            app.run.set_view(view);
            let s = screen(&app);
            no_line_too_wide(&s, size);
            assert!(s.contains("work_mem=4MB"), "{size:?} {view:?}:\n{s}");
            insta::assert_snapshot!(format!("query_{}_{}x{}", view.name(), size.0, size.1), s);
        }
    }
}

#[test]
fn the_plan_view_shows_every_node_detail_by_scrolling() {
    for size in SIZES {
        let mut app = super::plans_tests::with_plans(size, 12);
        update(&mut app, key('e'));
        let s = screen(&app);
        no_line_too_wide(&s, size);
        // The keys are all there (wrapped, not cut).
        assert!(s.contains("Esc"), "{s}");
        insta::assert_snapshot!(format!("plan_{}x{}", size.0, size.1), s);
        // Scrolled to the end, the last node's measurements are whole.
        update(&mut app, code(KeyCode::End));
        let s = screen(&app);
        // Pre-order: the outermost join's inner side (its Hash) comes last.
        assert!(s.contains("Seq Scan on dimension_table_number_11"), "{s}");
        assert!(!s.contains("…)"), "a node detail was cut:\n{s}");
    }
}

/// The import's table list: 60 tables with long schema-qualified names, some ticked.
fn import_app(size: (u16, u16)) -> App {
    let mut app = fixture::idle_app(size, Instant::now());
    update(&mut app, key('i'));
    typed(
        &mut app,
        "postgresql://report_reader:s3cret@warehouse.example.internal/sales",
    );
    update(&mut app, code(KeyCode::Enter));
    let tables: Vec<Listed> = (0..60)
        .map(|i| Listed {
            name: TableName::new(
                if i % 2 == 0 {
                    "sales_history_archive"
                } else {
                    "public"
                },
                &format!("order_line_items_partitioned_by_month_{i:02}"),
            ),
            rows_estimate: 1.0e5 * (i + 1) as f64,
            bytes: (i + 1) << 24,
            readable: i % 7 != 3,
        })
        .collect();
    update(&mut app, Msg::Import(ImportMsg::Tables(Ok(tables))));
    for _ in 0..3 {
        update(&mut app, key(' '));
        update(&mut app, code(KeyCode::Down));
        update(&mut app, code(KeyCode::Down));
    }
    for _ in 0..30 {
        update(&mut app, code(KeyCode::Down));
    }
    app
}

#[test]
fn the_import_view_with_many_long_tables() {
    for size in SIZES {
        let app = import_app(size);
        let s = screen(&app);
        no_line_too_wide(&s, size);
        assert!(!s.contains("s3cret"), "{s}");
        assert!(s.contains("to copy from 3 ticked tables"), "{s}");
        // The cursor's row is on screen, far down the list.
        assert!(s.contains("_month_36"), "{size:?}:\n{s}");
        insta::assert_snapshot!(format!("import_many_{}x{}", size.0, size.1), s);
    }
}

#[test]
fn the_tune_view_with_a_race_and_decisions() {
    for size in SIZES {
        let mut app = super::tune_tests::started(size);
        super::tune_tests::feed(&mut app);
        let s = screen(&app);
        no_line_too_wide(&s, size);
        assert!(s.contains("Esc"), "{s}");
        insta::assert_snapshot!(format!("tune_{}x{}", size.0, size.1), s);
    }
}
