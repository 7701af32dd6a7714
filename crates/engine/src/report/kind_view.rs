//! What a report shows of its kind: the tables, plans, findings and advice, the charts, and
//! the SQL that applies a decided recommendation. Each kind's report file (`index_build.rs`,
//! `ingest.rs`, `growth.rs`, `query.rs` beside this one) implements [`KindView`] for its
//! report; [`view`] is the one arm that picks it, so the formats name no kind.

use super::charts::Chart;
use super::content::Content;
use crate::experiment::lab::findings::Decided;
use crate::experiment::{ReportBody, RunReport};

/// A kind's part of a report.
pub(crate) trait KindView {
    /// Its tables, plans, findings, confounders and recommendations, into `c`.
    fn add_body(&self, c: &mut Content, report: &RunReport);
    /// Its charts: the main one first (suffix ""), then its others.
    fn charts(&self, report: &RunReport) -> Vec<Chart>;
    /// The SQL that applies `rec`, the recommendation decided for question `d` (empty: none
    /// a DBA could paste).
    fn set_lines(&self, report: &RunReport, d: &Decided, rec: &str) -> Vec<String>;
}

/// The report part of `body`'s kind.
pub(crate) fn view(body: &ReportBody) -> &dyn KindView {
    match body {
        ReportBody::IndexBuild(b) => b.as_ref(),
        ReportBody::Ingest(b) => b.as_ref(),
        ReportBody::Growth(b) => b.as_ref(),
        ReportBody::Query(b) => b.as_ref(),
    }
}
