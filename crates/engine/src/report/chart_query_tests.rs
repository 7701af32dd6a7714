//! The standby charts of a query throughput report from hand-made trials: statement latency
//! per synchronous_commit level (a label per level and group of clients and distance, a series
//! per percentile, none when nothing varied or no trial has a load record) and transactions/s
//! over time (a point per second, a shade per stalled second, the fault's window), both among
//! the report's charts under the names ingest's have.

use std::collections::BTreeMap;

use crate::experiment::lab::commit_cost::LatencyMs;
use crate::experiment::lab::standby_fault::FaultWindow;
use crate::experiment::query::per_second::LoadRecord;
use crate::experiment::query::{Latency, QueryReport, QueryTrial, clients_name, test_spec};

use super::chart_commit::{self, LEVEL_AXIS};
use super::chart_load::{QUERY_COMMIT_AXIS, TRANSACTIONS_AXIS, of_query};
use super::chart_over_time::{self, STALL_OPACITY};
use super::chart_standby_tests::{count, said};

fn spec() -> Vec<(&'static str, &'static str)> {
    vec![
        ("sql", "INSERT INTO t VALUES (1)"),
        ("clients", "1,4"),
        ("duration", "5s"),
        ("sync-commit", "local,on,remote_apply"),
        ("standby-rtt", "0ms,2ms"),
    ]
}

/// A throughput trial of `clients` at `level` and distance `rtt`, statement p50 `p50` ms.
fn trial(clients: u32, level: &str, rtt: &str, p50: f64, repeat: u32) -> QueryTrial {
    let settings = BTreeMap::from([
        ("synchronous_commit".to_string(), level.to_string()),
        ("pglab.standby_rtt".to_string(), rtt.to_string()),
        (
            "synchronous_standby_names".to_string(),
            "pglab_standby_1".to_string(),
        ),
    ]);
    QueryTrial {
        name: clients_name(clients),
        settings,
        repeat,
        seconds: 5.0,
        clients: Some(clients),
        tps: Some(1000.0 / p50),
        transactions: Some((5000.0 / p50) as u64),
        latency_ms: Some(Latency {
            p50,
            p95: p50 * 1.5,
            p99: p50 * 2.0,
        }),
        load: Some(LoadRecord {
            statement_ms: LatencyMs {
                p50,
                p95: p50 * 1.5,
                p99: p50 * 2.0,
                p999: p50 * 4.0,
                max: p50 * 10.0,
            },
            ..LoadRecord::default()
        }),
        ..QueryTrial::default()
    }
}

/// Three levels at two distances and two client counts, two trials each.
fn swept() -> QueryReport {
    let mut r = QueryReport::new(&test_spec(&spec()));
    for repeat in 1..=2 {
        let jitter = 1.0 + 0.02 * repeat as f64;
        for clients in [1, 4] {
            for (rtt, wait) in [("0ms", 0.2), ("2ms", 2.0)] {
                for (level, cost) in [("local", 0.0), ("on", 0.3), ("remote_apply", 0.35)] {
                    let p50 = (0.25 + cost + if cost > 0.0 { wait } else { 0.0 }) * jitter;
                    r.trials.push(trial(clients, level, rtt, p50, repeat));
                }
            }
        }
    }
    r
}

#[test]
fn statement_latency_has_a_group_per_clients_and_distance_and_a_label_per_level() {
    let r = swept();
    let svg = chart_commit::svg(&of_query(&r)).expect("a chart");
    assert!(svg.contains(QUERY_COMMIT_AXIS) && svg.contains(LEVEL_AXIS));
    // Two client counts × two distances: four groups, each level once in each.
    for level in ["local", "on", "remote_apply"] {
        assert_eq!(count(&svg, level), 4, "{level}");
    }
    assert_eq!(count(&svg, "1 client"), 2);
    assert_eq!(count(&svg, "4 clients"), 2);
    assert_eq!(count(&svg, "RTT 2ms"), 2);
    // The level is the axis, not a group's name; the standby names the run set for all
    // trials tell none apart.
    assert!(
        !said(&svg).contains("synchronous_commit="),
        "{}",
        said(&svg)
    );
    assert!(!said(&svg).contains("synchronous_standby_names"));
    assert!(said(&svg).contains("query: statement latency by synchronous_commit"));
    for p in ["p99", "p99.9", "max"] {
        assert_eq!(count(&svg, p), 1, "{p}");
    }
    let charts = super::query::charts(&r);
    let suffixes: Vec<&str> = charts.iter().map(|c| c.suffix.as_str()).collect();
    assert!(suffixes.contains(&"-commit-latency"), "{suffixes:?}");
    assert!(
        !suffixes.contains(&"-over-time"),
        "no series: no chart over time"
    );
}

#[test]
fn one_level_and_one_distance_or_no_load_record_draw_no_latency_chart() {
    let mut one = QueryReport::new(&test_spec(&spec()));
    one.trials = vec![trial(1, "on", "2ms", 2.5, 1), trial(1, "on", "2ms", 2.6, 2)];
    assert!(chart_commit::svg(&of_query(&one)).is_none());
    // Trials without a level (the server's own) are not on a level axis.
    let mut unset = swept();
    for t in &mut unset.trials {
        t.settings.remove("synchronous_commit");
    }
    assert!(chart_commit::svg(&of_query(&unset)).is_none());
    // Statement mode: no load record, nothing of either chart.
    let mut statements = swept();
    for t in &mut statements.trials {
        t.load = None;
    }
    assert!(of_query(&statements).trials.is_empty());
    assert!(super::query::charts(&statements).len() <= 1);
}

fn faulted() -> QueryReport {
    let window = FaultWindow {
        fault: "stop-at=1s,for=2s".into(),
        standby: "pglab_standby_1".into(),
        from_s: Some(1.0),
        to_s: Some(3.2),
        caught_up_s: Some(0.1),
        problems: vec![],
    };
    let mut on = trial(1, "on", "0ms", 0.4, 1);
    let load = on.load.as_mut().unwrap();
    load.shape.series = vec![2400.0, 0.0, 0.0, 2300.0, 2350.0];
    load.shape.stall_seconds = 2;
    load.fault = Some(window.clone());
    let mut local = trial(1, "local", "0ms", 0.25, 1);
    let load = local.load.as_mut().unwrap();
    load.shape.series = vec![4000.0, 3900.0, 4100.0, 4050.0];
    load.fault = Some(window);
    let mut r = QueryReport::new(&test_spec(&spec()));
    r.trials = vec![local, on];
    r
}

#[test]
fn over_time_draws_transactions_per_second_with_stalls_and_the_fault() {
    let r = faulted();
    let load = of_query(&r);
    let svg = chart_over_time::svg(&load).expect("a chart");
    let stall_rects = svg
        .lines()
        .filter(|l| l.trim_start().starts_with("<rect"))
        .filter(|l| l.contains(&format!("opacity=\"{STALL_OPACITY}\"")))
        .count();
    assert_eq!(stall_rects, 2, "the two stalled seconds of on");
    let said = said(&svg);
    assert!(svg.contains(TRANSACTIONS_AXIS));
    assert!(
        said.contains("query: transactions/s in each second"),
        "{said}"
    );
    assert!(
        said.contains("no transaction finished (2 in all)"),
        "{said}"
    );
    assert!(
        said.contains("standby fault stop-at=1s,for=2s on pglab_standby_1, from the fault (1.0 s) until the standby was back (3.2 s)"),
        "{said}"
    );
    // The trial that stalled most first, named by clients, level and round.
    let (trials, all) = chart_over_time::shown(&load);
    assert_eq!(all, 2);
    assert_eq!(trials[0].name, "1 client · sync on · #1");
    let plot = chart_over_time::plot(&load, &trials, all);
    let xs: Vec<f64> = plot.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, [0.5, 1.5, 2.5, 3.5, 4.5]);
    // Among the report's charts, named as ingest's are.
    let charts = super::query::charts(&r);
    assert!(
        charts
            .iter()
            .any(|c| c.suffix == "-over-time" && c.title.starts_with("Transactions per second"))
    );
    assert!(charts.iter().any(|c| c.suffix == "-commit-latency"));
}
