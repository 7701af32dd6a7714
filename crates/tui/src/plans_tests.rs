//! The plan view of a query run (`e`): opened from the last run's report, the changed nodes
//! marked, combinations and statements stepped through, long plans scrolled at 80×24 and
//! shown whole at 200×60.

use std::time::Instant;

use crossterm::event::KeyCode;
use serde_json::json;

use super::app::Overlay;
use super::fixture::{self, key, press, screen};
use super::update::update;
use crate::experiment::query::{ComboInfo, ComboPlan, QueryReport, plan};

/// A sort above `depth` nested joins, or a hash aggregate: two plans of one statement.
fn plan_json(hashed: bool, depth: usize) -> serde_json::Value {
    let mut node = json!({"Node Type": "Seq Scan", "Relation Name": "t0", "Actual Total Time": 1.0, "Actual Rows": 10, "Actual Loops": 1});
    for i in 1..depth {
        node = json!({"Node Type": "Hash Join", "Actual Total Time": 2.0, "Actual Rows": 10, "Actual Loops": 1,
            "Plans": [node, {"Node Type": "Hash", "Actual Total Time": 1.0, "Plans": [
                {"Node Type": "Seq Scan", "Relation Name": format!("dimension_table_number_{i}"), "Actual Total Time": 1.0}]}]});
    }
    let top = if hashed {
        json!({"Node Type": "Aggregate", "Strategy": "Hashed", "Actual Total Time": 3.0, "Plans": [node]})
    } else {
        json!({"Node Type": "Aggregate", "Strategy": "Sorted", "Actual Total Time": 3.0,
            "Plans": [{"Node Type": "Sort", "Sort Method": "external merge", "Sort Space Type": "Disk",
                "Temp Written Blocks": 100, "Actual Total Time": 3.0, "Plans": [node]}]})
    };
    json!([{"Plan": top}])
}

fn query_report(depth: usize) -> QueryReport {
    let spec = crate::experiment::query::test_spec(&[
        ("sql", "-- name: report\nSELECT 1; -- name: other\nSELECT 2"),
        ("set", "work_mem=1MB,64MB"),
    ]);
    let mut r = QueryReport::new(&spec);
    for (c, v) in ["1MB", "64MB"].iter().enumerate() {
        r.combos.push(ComboInfo {
            combo: c,
            label: format!("work_mem={v}"),
            index_value: 0,
            settings: vec![("work_mem".into(), v.to_string())],
        });
        for s in 0..2 {
            let json = plan_json(c == 1, depth);
            r.plans.push(ComboPlan {
                statement: s,
                name: ["report", "other"][s].into(),
                combo: c,
                estimate_only: false,
                facts: plan::read(&json, plan::DEFAULT_BLOCK).unwrap(),
                plan: json,
            });
        }
    }
    r.current_combo = Some(0);
    r
}

pub(super) fn with_plans(size: (u16, u16), depth: usize) -> super::app::App {
    let mut app = fixture::finished_app(size, Instant::now());
    app.run.query = Some(Box::new(query_report(depth)));
    app
}

#[test]
fn t_opens_the_plans_and_marks_what_changes() {
    let mut app = with_plans((80, 24), 2);
    update(&mut app, key('e'));
    assert!(
        matches!(app.overlay, Overlay::Plans(_)),
        "{:?}",
        app.overlay
    );
    let s = screen(&app);
    assert!(s.contains("Plan · report"), "{s}");
    assert!(s.contains("1/2 work_mem=1MB"), "{s}");
    assert!(s.contains("* GroupAggregate"), "{s}");
    assert!(s.contains("*   -> Sort"), "{s}");
    // The join is in both plans: not marked.
    assert!(
        s.contains("  -> Hash Join") && !s.contains("* -> Hash Join"),
        "{s}"
    );
    assert!(s.contains("the server's own settings"), "{s}");
    press(&mut app, KeyCode::Right);
    let s = screen(&app);
    assert!(s.contains("2/2 work_mem=64MB"), "{s}");
    assert!(s.contains("* HashAggregate"), "{s}");
    press(&mut app, KeyCode::Tab);
    assert!(screen(&app).contains("Plan · other"));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn without_a_query_run_t_says_why() {
    let mut app = fixture::finished_app((80, 24), Instant::now());
    update(&mut app, key('e'));
    assert_eq!(app.overlay, Overlay::None);
    let n = app.notice.as_ref().expect("a notice");
    assert!(n.text.contains("once it ends"), "{}", n.text);
}

#[test]
fn a_long_plan_scrolls_at_80x24_and_fits_at_200x60() {
    let mut small = with_plans((80, 24), 12);
    update(&mut small, key('e'));
    let s = screen(&small);
    assert!(s.contains("lines 1–"), "{s}");
    // Labels too wide for 80 columns put their measurements on the next line.
    assert!(s.lines().all(|l| l.chars().count() <= 80));
    let before = s.clone();
    press(&mut small, KeyCode::PageDown);
    let after = screen(&small);
    assert_ne!(before, after);
    assert!(after.contains("lines 19–"), "{after}");
    assert!(after.contains("dimension_table_number_"), "{after}");
    let mut large = with_plans((200, 60), 12);
    update(&mut large, key('e'));
    let s = screen(&large);
    assert!(!s.contains("lines 1–"), "the whole plan fits: {s}");
    assert!(s.contains("Seq Scan on t0"), "{s}");
    assert!(s.contains("dimension_table_number_11  (rows"), "{s}");
}
