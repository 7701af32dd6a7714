//! Experiments. `lab/` is the machinery every kind shares (the runner, the spec vocabulary,
//! events, what-ifs, findings, preflight, leftovers, ETAs); each experiment kind is one folder
//! beside it, of the same shape (`spec.rs`, a run, a report and its summary).

pub mod growth;
pub mod index_build;
pub mod ingest;
pub mod lab;
pub mod query;

pub use lab::event::{
    Compare, Emitter, MeasureDef, Progress, ResultLayout, RunEvent, RunHandle, Sample, TrialRef,
};
pub use lab::field::{Cost, FieldDef, FieldKind, ParamText};
pub use lab::record::{Outcome, ReportBody, RunReport};
pub use lab::runner::spawn;
pub use lab::spec::{ExperimentKind, ExperimentSpec};
pub use lab::{RunCtx, RunError, RunOptions};
