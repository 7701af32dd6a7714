//! index-build: how long `CREATE INDEX` takes as `maintenance_work_mem`, parallel workers and
//! the physical order of the input vary (the first founding experiment).

mod report;
mod spec;

pub use report::{DatasetInfo, GroupSummary, IndexBuildReport, IndexSummary, IndexTrial, MwmStat};
pub use spec::{FIELDS, IndexBuildSpec, IndexMethod, KeyType, MWM_MAX, MWM_MIN, Order};

use super::lab::{RunCtx, RunError};

pub async fn run(
    _ctx: &RunCtx,
    _spec: &IndexBuildSpec,
    _report: &mut IndexBuildReport,
) -> Result<(), RunError> {
    Err(RunError::failed("index-build is being built"))
}
