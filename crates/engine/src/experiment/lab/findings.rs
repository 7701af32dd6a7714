//! Every finding a finished run decided, each under the name of the question it answers:
//! what a front end shows once a run is over, so that its marks and sentences are the ones
//! the report, the recommendation and the JSON read (the statistics core decided each once,
//! when the run was summarized).

use crate::experiment::{ReportBody, RunReport};
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
    match &report.body {
        ReportBody::IndexBuild(b) => b
            .summary
            .orders
            .iter()
            .map(|o| Decided {
                question: o.order.name(),
                finding: o.finding.clone(),
            })
            .collect(),
        ReportBody::Ingest(b) => b
            .summary
            .groups
            .iter()
            .filter_map(|g| {
                let finding = g.decided.clone()?;
                let question = g
                    .finding
                    .split_once(": ")
                    .map_or(g.question.as_str().to_string(), |(q, _)| q.to_string());
                Some(Decided { question, finding })
            })
            .collect(),
        ReportBody::Growth(b) => b
            .summary
            .settings
            .iter()
            .map(|s| Decided {
                question: s
                    .sentence
                    .split_once(": ")
                    .map_or(String::new(), |(q, _)| q.to_string()),
                finding: s.finding.clone(),
            })
            .collect(),
        ReportBody::Query(b) => b
            .summary
            .units
            .iter()
            .map(|u| Decided {
                question: u.name.clone(),
                finding: u.finding.clone(),
            })
            .collect(),
    }
}
