//! Every finding a finished run decided, each under the name of the question it answers:
//! what a front end shows once a run is over, so that its marks and sentences are the ones
//! the report, the recommendation and the JSON read (the statistics core decided each once,
//! when the run was summarized).

use crate::experiment::RunReport;
use crate::measure::finding::Finding;

/// One decided question of a run: its name ("random", "copy, 1 client, sync=on, by batch",
/// "snapshot write time at 100 versions") and the core's finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub question: String,
    pub finding: Finding,
}

/// The findings of `report`, in the order its summary lists them: index-build per order,
/// ingest per question, growth per design, step and timing across swept server settings,
/// query per statement (or client count).
/// (Growth's snapshot-against-ranges comparisons are pairs, not sweeps: they are in the
/// report's findings as sentences.)
pub fn decided(report: &RunReport) -> Vec<Decided> {
    report.body.facts().decided()
}
