//! The query record with every field it can write, against `assets/schema/query.schema.json`:
//! a throughput run sweeping synchronous_commit under a standby fault, whose trials keep their
//! load records (statement latency, per-second series, stalls, standbys, the fault's window),
//! with a candidate index, plans, sizing, the reads on a standby and a statement as
//! `pglab capture` writes it.

use std::collections::BTreeMap;

use super::batch::Sizing;
use super::per_second::LoadRecord;
use super::plan::{PlanFacts, PlanLine};
use super::setup::SetupInfo;
use super::{
    ComboInfo, ComboPlan, IndexCandidate, Latency, QueryReport, QueryTrial, StandbyReadTrial,
    test_spec,
};
use crate::experiment::lab::commit_cost::{LatencyMs, LoadShape};
use crate::experiment::lab::record::{ReportBody, RunReport};
use crate::experiment::lab::record_schema::{assert_fits, fault_window, full_envelope, replica};
use crate::experiment::lab::spec::ExperimentSpec;

const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../assets/schema/query.schema.json"
));

const LEVELS: [&str; 2] = ["local", "on"];

fn latency() -> Latency {
    Latency {
        p50: 1.0,
        p95: 2.0,
        p99: 3.0,
    }
}

/// What a throughput trial under a standby fault keeps beyond its transactions/s.
fn load() -> LoadRecord {
    LoadRecord {
        statement_ms: LatencyMs {
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            p999: 4.0,
            max: 5.0,
        },
        shape: LoadShape::of(vec![900.0, 0.0, 1000.0], vec![replica()]),
        fault: Some(fault_window("stop-at=1s,for=1s")),
    }
}

fn trial(combo: usize, repeat: u32) -> QueryTrial {
    QueryTrial {
        statement: 0,
        name: "2 clients".into(),
        combo,
        settings: BTreeMap::from([("synchronous_commit".into(), LEVELS[combo].into())]),
        repeat,
        seconds: 3.0,
        executions: 1,
        rows: 10,
        clients: Some(2),
        tps: Some(900.0 + repeat as f64),
        transactions: Some(2700),
        latency_ms: Some(latency()),
        client_cpu_s: Some(0.2),
        cold: false,
        load: Some(load()),
        host: None,
    }
}

/// A read on the standby with every field present.
fn standby_read(combo: usize) -> StandbyReadTrial {
    StandbyReadTrial {
        combo,
        repeat: 1,
        settings: BTreeMap::from([("hot_standby_feedback".into(), "on".into())]),
        seconds: 3.0,
        executions: 40,
        clients: Some(2),
        tps: Some(13.0),
        cancelled: 2,
        terminated: 1,
        conflicts: BTreeMap::from([("snapshot".into(), 2)]),
        latency_ms: Some(latency()),
        churned_rows: 1000,
        vacuums: 2,
        dead_before: 0,
        dead_after: 40,
        bytes_before: 8192,
        bytes_after: 16384,
        xmin_age_max: Some(12),
        caught_up_s: 0.4,
    }
}

fn plan(combo: usize) -> ComboPlan {
    ComboPlan {
        statement: 0,
        name: "q".into(),
        combo,
        estimate_only: true,
        facts: PlanFacts {
            fingerprint: "Seq Scan on t".into(),
            temp_bytes: 8192,
            temp_blocks_written: 1,
            temp_blocks_read: 1,
            shared_hit: 3,
            shared_read: 4,
            jit_ms: Some(1.0),
            planning_ms: Some(0.1),
            execution_ms: Some(2.0),
            total_cost: 10.5,
            spilled_nodes: vec!["Sort (external merge)".into()],
            lines: vec![PlanLine {
                depth: 0,
                label: "Seq Scan on t".into(),
                detail: "rows 10".into(),
                key: "Seq Scan on t".into(),
                spilled: true,
            }],
        },
        plan: serde_json::json!([{ "Plan": { "Node Type": "Seq Scan" } }]),
    }
}

/// The run's setup, candidate index, sizing and the rest around the trials.
fn fill_the_rest(r: &mut QueryReport) {
    r.transactions = "as written".into();
    r.setup = Some(SetupInfo {
        digest: "abc".into(),
        seconds: 0.2,
        objects: vec!["table t".into()],
        reused: false,
        kept: true,
    });
    r.data_bytes = 8192;
    r.current_combo = Some(1);
    r.current_settings = BTreeMap::from([("synchronous_commit".into(), "on".into())]);
    r.indexes = vec![IndexCandidate {
        value: 1,
        sql: "CREATE INDEX ON t (id)".into(),
        table: "lab.t".into(),
        how: "built".into(),
        name: "pglab_idx_1".into(),
        build_seconds: Some(0.3),
        index_bytes: Some(8192),
        dropped: true,
    }];
    r.sizing = vec![Sizing {
        statement: 0,
        name: "q".into(),
        executions: 1,
        fastest_s: Some(0.01),
        slowest_s: Some(0.02),
        why_one: "a statement that writes as written".into(),
    }];
    r.interleaved = true;
    r.cold_cache = Some("a restart".into());
}

/// A swept throughput run's query record, every field present.
pub(crate) fn full_record() -> RunReport {
    let base = [
        ("sql", "INSERT INTO t VALUES (1)"),
        ("setup", "CREATE TABLE t (id int)"),
        ("clients", "2"),
        ("duration", "3s"),
        ("sync-commit", "local,on"),
    ];
    let mut spec = test_spec(
        &[
            &base[..],
            &[
                ("on-standby", "1"),
                ("churn", "5k"),
                ("churn-vacuum", "500ms"),
            ],
        ]
        .concat(),
    );
    // A fault beside reads on a standby is refused, so no one run writes both: the fault's
    // fields come from a run on the primary, and one record still holds every field.
    spec.fault = test_spec(&[&base[..], &[("standby-fault", "stop-at=1s,for=1s")]].concat()).fault;
    assert!(spec.fault.is_some());
    // What a statement `pglab capture` wrote carries besides its text.
    let s = &mut spec.statements[0];
    s.weight = Some(2);
    s.production_mean_ns = Some(42_000);
    s.variants = vec![s.sql.clone(), "INSERT INTO t VALUES ($1)".into()];
    let mut r = QueryReport::new(&spec);
    for (combo, level) in LEVELS.iter().enumerate() {
        r.combos.push(ComboInfo {
            combo,
            label: format!("synchronous_commit={level}"),
            index_value: 0,
            settings: vec![("synchronous_commit".into(), level.to_string())],
        });
        r.plans.push(plan(combo));
        r.trials.extend((1..=3).map(|repeat| trial(combo, repeat)));
        r.standby_reads.push(standby_read(combo));
    }
    fill_the_rest(&mut r);
    r.summarize(&["a confounder".into()]);
    let key = ExperimentSpec::Query(Box::new(spec)).spec_key();
    full_envelope(ReportBody::Query(Box::new(r)), key)
}

#[test]
fn every_field_a_throughput_run_with_a_standby_writes_is_in_the_schema() {
    let r = full_record();
    let ReportBody::Query(q) = &r.body else {
        unreachable!()
    };
    assert!(!q.summary.units.is_empty(), "{:?}", q.summary);
    assert_fits(SCHEMA, &r);
}

#[test]
fn a_combination_whose_every_read_was_cancelled_is_in_the_schema() {
    let mut r = full_record();
    let ReportBody::Query(q) = &mut r.body else {
        unreachable!()
    };
    // As a run on a standby writes it when the standby cancelled every read of a combination.
    q.summary.units[0].all_cancelled = vec![1];
    assert_fits(SCHEMA, &r);
}
