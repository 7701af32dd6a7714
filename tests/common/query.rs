//! The query experiment's test helpers, shared by the test binaries that drive it in-process
//! (`#[path = "common/query.rs"] mod query;` beside `mod common;`).
#![allow(dead_code)]

use std::sync::Arc;

use pglab::experiment::query::QueryReport;
use pglab::experiment::{
    self, ExperimentKind, ParamText, ReportBody, RunEvent, RunOptions, RunReport,
};
use pglab::server::Target;

/// The query experiment's spec from `field = value` pairs (valid by construction).
pub fn spec(pairs: &[(&str, &str)]) -> experiment::ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ExperimentKind::Query.parse_spec(&p).expect("valid spec")
}

pub fn body(r: &RunReport) -> &QueryReport {
    match &r.body {
        ReportBody::Query(b) => b,
        _ => panic!("not a query report"),
    }
}

/// Options for a run on the calling file's sandbox, in a schema of the test's own.
#[track_caller]
pub fn on_sandbox(schema: &str) -> RunOptions {
    RunOptions {
        schema: schema.into(),
        sandbox: Some(crate::common::lab().sandbox.clone()),
        ..RunOptions::default()
    }
}

/// Run to the end: the report, or the error and the report.
pub async fn run(
    target: Arc<Target>,
    s: experiment::ExperimentSpec,
    opts: RunOptions,
) -> Result<RunReport, (String, RunReport)> {
    let mut h = experiment::spawn(target, s, opts);
    loop {
        match h.events.recv().await.expect("a final event") {
            RunEvent::Finished(r) => return Ok(*r),
            RunEvent::Failed { error, report } => return Err((error, *report)),
            RunEvent::Cancelled(r) => return Err(("cancelled".into(), *r)),
            _ => {}
        }
    }
}
