//! Experiments: specs, the event stream, the runner, one module per experiment.

pub mod checkpoint;
pub mod decision;
pub mod distribute;
pub mod eta;
pub mod event;
pub mod field;
pub mod findings;
pub mod growth;
pub mod index_build;
pub mod ingest;
pub mod lab;
pub mod leftovers;
pub mod leftovers_elsewhere;
pub mod preflight;
pub mod query;
pub mod record;
pub mod runner;
pub mod spec;
pub mod sync_standby;
pub mod whatif;

pub use event::{
    Compare, Emitter, MeasureDef, Progress, ResultLayout, RunEvent, RunHandle, Sample, TrialRef,
};
pub use field::{Cost, FieldDef, FieldKind, ParamText};
pub use lab::{RunCtx, RunError, RunOptions};
pub use record::{Outcome, ReportBody, RunReport};
pub use runner::spawn;
pub use spec::{ExperimentKind, ExperimentSpec};
