//! Experiments: specs, the event stream, the runner, one module per experiment.

pub mod event;
pub mod growth;
pub mod guard;
pub mod index_build;
pub mod ingest;
pub mod lab;
pub mod report;
pub mod runner;
pub mod spec;

pub use event::{Emitter, Progress, ResultLayout, RunEvent, RunHandle, Sample, TrialRef};
pub use lab::{RunCtx, RunError, RunOptions};
pub use report::{Outcome, ReportBody, RunReport};
pub use runner::spawn;
pub use spec::{Cost, ExperimentKind, ExperimentSpec, FieldDef, FieldKind, ParamText};
