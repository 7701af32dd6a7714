//! Test help for the records' JSON schemas (`assets/schema/`): a report's violations of its
//! schema, and the envelope of a record with every optional field present, which each kind's
//! schema test puts its fully populated body in.

#[cfg(test)]
use std::collections::BTreeMap;

#[cfg(test)]
use super::record::{ReportBody, RunReport, TuneRef};
#[cfg(test)]
use super::standby_fault::FaultWindow;
#[cfg(test)]
use super::whatif::WhatIfRecord;
#[cfg(test)]
use super::whatif::plan::{Apply, PlannedSetting};
use crate::server::replication::ReplicaLag;

#[cfg(test)]
/// Each way `report` breaks `schema` (the schema's text), as `message at /path`.
pub(crate) fn violations(schema: &str, report: &RunReport) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(schema).expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let instance = serde_json::to_value(report).expect("a report serialises");
    v.iter_errors(&instance)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[cfg(test)]
/// Fails the test with every violation when `report` breaks `schema`.
pub(crate) fn assert_fits(schema: &str, report: &RunReport) {
    let errors = violations(schema, report);
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[cfg(test)]
/// A failed tune round with every envelope field present (notes, a sweep of every way a
/// setting is applied) around `body`.
pub(crate) fn full_envelope(body: ReportBody, spec_key: String) -> RunReport {
    let mut r = crate::report::example::with_body(body);
    r.spec_key = spec_key;
    r.error = Some("the server went away".into());
    r.preset = Some("pulp-quick".into());
    r.tune = Some(TuneRef {
        id: "t-1".into(),
        workload: "pulp".into(),
    });
    r.notes = vec!["a note".into()];
    r.whatif = Some(whatif());
    r
}

/// The sandbox's synchronous standby, every lag known.
pub fn replica() -> ReplicaLag {
    ReplicaLag {
        application_name: "pglab_standby_1".into(),
        state: "streaming".into(),
        sync_state: "sync".into(),
        write_lag_ms: Some(0.3),
        flush_lag_ms: Some(0.4),
        replay_lag_ms: Some(0.5),
        replay_behind_bytes: Some(0),
    }
}

#[cfg(test)]
/// A standby fault `fault` (`stop-at=1s,for=1s`) that began, ended and was caught up on, with
/// a problem besides.
pub(crate) fn fault_window(fault: &str) -> FaultWindow {
    FaultWindow {
        fault: fault.into(),
        standby: "pglab_standby_1".into(),
        from_s: Some(1.0),
        to_s: Some(2.0),
        caught_up_s: Some(0.3),
        problems: vec!["pg_ctl said so".into()],
    }
}

#[cfg(test)]
/// A sweep with one setting applied each way pglab applies them.
fn whatif() -> WhatIfRecord {
    let setting = |name: &str, apply| PlannedSetting {
        name: name.into(),
        values: vec!["a".into(), "b".into()],
        context: "sighup".into(),
        apply,
        info: None,
    };
    WhatIfRecord {
        settings: vec![
            setting("work_mem", Apply::Session),
            setting("synchronous_commit", Apply::Reload),
            setting("shared_buffers", Apply::Restart),
            setting("hot_standby_feedback", Apply::Standby),
        ],
        restarts: vec![1.5],
        reloads: 2,
        before: BTreeMap::from([("shared_buffers".into(), "128MB".into())]),
        restored: Some("ALTER SYSTEM RESET, restarted".into()),
    }
}

#[test]
fn an_index_build_record_with_every_envelope_field_is_in_its_schema() {
    // The index-build example with every envelope field present (the other kinds' full
    // records have their own tests beside them).
    let example = crate::report::example::decided_10m("full");
    let r = full_envelope(example.body.clone(), example.spec_key.clone());
    let schema = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/schema/index-build.schema.json"
    ));
    assert_fits(schema, &r);
}

/// Where an object of `schema` with properties lets other fields through (no
/// `additionalProperties`), by its JSON pointer.
#[cfg(test)]
fn open_objects(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                out.push(at.to_string());
            }
            for (k, x) in m {
                open_objects(x, &format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                open_objects(x, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_query_and_ingest_schemas_refuse_fields_they_do_not_describe() {
    // A field a record writes that its schema does not describe must fail the schema tests,
    // so every object the schema describes is closed.
    for (name, text) in [
        (
            "query",
            include_str!("../../../../../assets/schema/query.schema.json"),
        ),
        (
            "ingest",
            include_str!("../../../../../assets/schema/ingest.schema.json"),
        ),
    ] {
        let schema: serde_json::Value = serde_json::from_str(text).expect("schema is JSON");
        let mut open = Vec::new();
        open_objects(&schema, "", &mut open);
        assert!(
            open.is_empty(),
            "{name}: objects open to any field: {open:?}"
        );
    }
}
