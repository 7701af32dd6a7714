//! The recommendation renders the core's one answer: the text, the SQL and the JSON name the
//! same setting, a swept setting shown not to matter gets no line, a server setting gets the
//! `ALTER SYSTEM` line and the reload or restart it needs, and the worker count is set only
//! when the workers launched.

use super::*;
use crate::experiment::index_build::{IndexTrial, Order};
use crate::experiment::lab::field::ParamText;
use crate::experiment::lab::whatif::{PlannedSetting, WhatIfRecord};
use crate::experiment::{ExperimentSpec, ReportBody};

/// One measured setting: order, settings combination, workers asked, workers launched,
/// maintenance_work_mem, seconds.
type Cell<'a> = (Order, usize, u32, u32, &'a str, &'a [f64]);

/// A finished run of `params` with these trials, summarized, and `whatif` as its record.
fn run(params: &[(&str, &str)], cells: &[Cell<'_>], whatif: Option<WhatIfRecord>) -> RunReport {
    let p: ParamText = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = match crate::experiment::ExperimentKind::IndexBuild.parse_spec(&p) {
        Ok(ExperimentSpec::IndexBuild(s)) => s,
        other => panic!("{other:?}"),
    };
    let mut body = IndexBuildReport::new(&spec);
    let combos = spec.set.combos();
    for &(order, combo, asked, got, mwm, secs) in cells {
        let m = spec
            .mwm
            .iter()
            .find(|m| m.text == mwm)
            .expect("mwm in spec");
        for (i, s) in secs.iter().enumerate() {
            body.trials.push(IndexTrial {
                combo,
                settings: combos[combo].iter().cloned().collect(),
                ..IndexTrial::example(order, spec.rows, m, (asked, got), i as u32 + 1, *s)
            });
        }
    }
    body.summarize(&[]);
    let mut r = crate::report::example::index_build("t", spec.rows, &[]);
    r.body = ReportBody::IndexBuild(Box::new(body));
    r.whatif = whatif;
    r
}

fn times(base: f64) -> Vec<f64> {
    [0.99, 1.0, 1.01, 0.995, 1.005, 1.0, 0.998]
        .iter()
        .map(|x| base * x)
        .collect()
}

fn recs(r: &RunReport) -> Vec<Recommendation> {
    match &r.body {
        ReportBody::IndexBuild(b) => index_build_recommendations(r, b),
        _ => unreachable!(),
    }
}

fn finding(r: &RunReport, i: usize) -> &Finding {
    match &r.body {
        ReportBody::IndexBuild(b) => &b.summary.orders[i].finding,
        _ => unreachable!(),
    }
}

#[test]
fn the_text_the_sql_and_the_json_name_one_setting() {
    // The run: sorted and random × 1MB, 64MB × 0, 2 workers. Sorted: 64MB ×0w is
    // best, 64MB ×2w within 5% of it (the workers make no difference), 1MB slower. Random:
    // 64MB ×2w is faster than everything (and its two workers launched).
    let (a, b, c, d) = (times(7.0), times(5.5), times(6.8), times(5.52));
    let (e, f, g, h) = (times(9.3), times(11.0), times(9.2), times(7.6));
    let r = run(
        &[
            ("order", "sorted,random"),
            ("mwm", "1MB,64MB"),
            ("workers", "0,2"),
            ("repeat", "7"),
        ],
        &[
            (Order::Sorted, 0, 0, 0, "1MB", &a),
            (Order::Sorted, 0, 0, 0, "64MB", &b),
            (Order::Sorted, 0, 2, 2, "1MB", &c),
            (Order::Sorted, 0, 2, 2, "64MB", &d),
            (Order::Random, 0, 0, 0, "1MB", &e),
            (Order::Random, 0, 0, 0, "64MB", &f),
            (Order::Random, 0, 2, 2, "1MB", &g),
            (Order::Random, 0, 2, 2, "64MB", &h),
        ],
        None,
    );
    let sorted = finding(&r, 0);
    assert_eq!(sorted.recommendation.as_deref(), Some("64MB ×0w"));
    // Only the memory matters: 64MB ×2w was shown within 5% of the best.
    assert_eq!(sorted.matters, [1]);
    let rs = recs(&r);
    assert!(rs[0].text.contains("64MB ×0w is enough"), "{}", rs[0].text);
    assert!(!rs[0].text.contains("1MB ×0w is enough"));
    assert_eq!(rs[0].sql, ["SET maintenance_work_mem = '64MB';"]);
    let random = finding(&r, 1);
    assert_eq!(random.winner.as_deref(), Some("64MB ×2w"));
    assert_eq!(
        rs[1].sql,
        [
            "SET maintenance_work_mem = '64MB';",
            "SET max_parallel_maintenance_workers = 2;"
        ]
    );
    assert!(
        rs[1]
            .text
            .contains("64MB ×2w built the random index faster")
    );
    // The orders differ in the workers only, and that is what is said.
    assert!(
        rs[2]
            .text
            .starts_with("The orders disagree (sorted → 64MB ×0w, random → 64MB ×2w)"),
        "{}",
        rs[2].text
    );
    // Beside SET lines, how to use them.
    let last = rs.last().unwrap();
    assert!(
        last.text.contains("`SET` lasts for the session"),
        "{}",
        last.text
    );
    // The JSON carries the same decided answer.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["summary"]["orders"][0]["finding"]["recommendation"],
        "64MB ×0w"
    );
    assert_eq!(
        json["summary"]["orders"][1]["finding"]["winner"],
        "64MB ×2w"
    );
}

#[test]
fn workers_that_did_not_launch_get_no_set_line() {
    // 64MB ×2w is faster, but the server launched one worker of the two asked for.
    let (a, b) = (times(7.0), times(5.0));
    let r = run(
        &[
            ("order", "random"),
            ("mwm", "64MB"),
            ("workers", "0,2"),
            ("repeat", "7"),
        ],
        &[
            (Order::Random, 0, 0, 0, "64MB", &a),
            (Order::Random, 0, 2, 1, "64MB", &b),
        ],
        None,
    );
    assert_eq!(finding(&r, 0).winner.as_deref(), Some("64MB ×2w"));
    let rs = recs(&r);
    assert!(rs[0].sql.is_empty(), "{:?}", rs[0].sql);
    assert!(
        rs[0]
            .text
            .contains("asked for 2 parallel workers and the server launched 1"),
        "{}",
        rs[0].text
    );
}

#[test]
fn a_swept_server_setting_that_made_the_difference_is_named_with_its_restart() {
    // shared_buffers 128MB vs 1GB (a restart setting) × mwm 1MB, 64MB: 1GB with 64MB is best,
    // and both knobs matter.
    let sb = PlannedSetting {
        name: "shared_buffers".into(),
        values: vec!["128MB".into(), "1GB".into()],
        context: "postmaster".into(),
        apply: Apply::Restart,
        info: None,
    };
    let whatif = WhatIfRecord {
        settings: vec![sb],
        ..Default::default()
    };
    let (a, b, c, d) = (times(9.0), times(7.0), times(8.9), times(5.0));
    let r = run(
        &[
            ("order", "random"),
            ("mwm", "1MB,64MB"),
            ("set", "shared_buffers=128MB,1GB"),
            ("repeat", "7"),
        ],
        &[
            (Order::Random, 0, 0, 0, "1MB", &a),
            (Order::Random, 0, 0, 0, "64MB", &b),
            (Order::Random, 1, 0, 0, "1MB", &c),
            (Order::Random, 1, 0, 0, "64MB", &d),
        ],
        Some(whatif),
    );
    let f = finding(&r, 0);
    assert_eq!(f.winner.as_deref(), Some("64MB · shared_buffers=1GB"));
    assert_eq!(f.matters, [0, 2]);
    assert_eq!(
        recs(&r)[0].sql,
        [
            "SET maintenance_work_mem = '64MB';",
            "ALTER SYSTEM SET shared_buffers = '1GB';",
            "-- then restart the server: shared_buffers takes effect only at a restart",
        ]
    );
}

#[test]
fn a_swept_setting_shown_equivalent_is_left_out() {
    // wal_compression off vs pglz changes nothing measurable; 64MB beats 1MB at both.
    let (a, b, c, d) = (times(9.0), times(7.0), times(9.05), times(7.02));
    let r = run(
        &[
            ("order", "random"),
            ("mwm", "1MB,64MB"),
            ("set", "wal_compression=off,pglz"),
            ("repeat", "7"),
        ],
        &[
            (Order::Random, 0, 0, 0, "1MB", &a),
            (Order::Random, 0, 0, 0, "64MB", &b),
            (Order::Random, 1, 0, 0, "1MB", &c),
            (Order::Random, 1, 0, 0, "64MB", &d),
        ],
        None,
    );
    let f = finding(&r, 0);
    assert_eq!(
        f.recommendation.as_deref(),
        Some("64MB · wal_compression=off")
    );
    assert_eq!(f.matters, [2]);
    assert_eq!(recs(&r)[0].sql, ["SET maintenance_work_mem = '64MB';"]);
}

#[test]
fn an_undecided_cheaper_setting_gets_no_set_line_but_the_repeats_that_would_settle_it() {
    // The C (1MB, cheaper) against B (64MB, best): 1.10× [0.99, 1.23].
    let r = run(
        &[("order", "random"), ("mwm", "1MB,64MB"), ("repeat", "5")],
        &[
            (
                Order::Random,
                0,
                0,
                0,
                "1MB",
                &[11.0, 9.9, 11.8, 10.4, 12.0],
            ),
            (
                Order::Random,
                0,
                0,
                0,
                "64MB",
                &[10.0, 10.3, 9.7, 10.5, 9.6],
            ),
        ],
        None,
    );
    let f = finding(&r, 0);
    assert_eq!(f.recommendation, None);
    let rs = recs(&r);
    assert!(rs.iter().all(|x| x.sql.is_empty()), "{rs:?}");
    let n = f.more_repeats_needed.unwrap();
    assert!(
        rs[0].text.contains("1MB undecided against the best (64MB)")
            && rs[0]
                .text
                .contains(&format!("run again with repeat {n} or more (an estimate)")),
        "{}",
        rs[0].text
    );
    // Nothing to set, so no advice on how to use a SET.
    assert!(rs.iter().all(|x| !x.text.contains("`SET` lasts")), "{rs:?}");
}
