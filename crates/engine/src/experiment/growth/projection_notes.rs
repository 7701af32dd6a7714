//! What the notes and confounders say of the steps a growth run projects rather than
//! measures: why it stopped measuring, and what projections cannot foresee.

use super::kinds::Design;
use super::report::GrowthReport;
use crate::measure::units::{format_bytes_short, format_count};

/// Why measuring stopped before the last step.
pub(super) enum Stop {
    FillLimit(u64),
    Disk { versions: u64, need: u64, free: u64 },
    DiskFull(String),
}

/// Why the steps past the last measured one are projected.
pub(super) fn why_projected(stop: Option<&Stop>) -> String {
    match stop {
        Some(Stop::FillLimit(l)) => format!(
            "steps beyond {} versions are projected, not measured (fill-limit)",
            format_count(*l as f64)
        ),
        Some(Stop::Disk {
            versions,
            need,
            free,
        }) => format!(
            "{} versions would need about {} with WAL and sort space but only {} is free: that step and later ones are projected, not run",
            format_count(*versions as f64),
            format_bytes_short(*need as f64),
            format_bytes_short(*free as f64)
        ),
        Some(Stop::DiskFull(e)) => format!(
            "the server's disk filled up while growing ({e}): the remaining steps are projected"
        ),
        None => "the target rows are projected, not measured".into(),
    }
}

/// What projections cannot foresee: jumps, ranges reads that grow unseen, indexes past RAM.
pub(super) fn projection_confounders(report: &GrowthReport, ram: u64) -> Vec<String> {
    let mut out = vec![
        "projections carry each design's measured steps along the shape they showed (sizes linear in rows; times flat unless growth was shown, then logarithmic or linear, whichever fits better), with intervals: no shape can foresee a jump such as the original's at 10000 versions, when the indexes outgrew memory".to_string(),
    ];
    if let Some(f) = report.fit.iter().find(|f| f.design == Design::Ranges)
        && f.read
            .is_some_and(|t| t.shape == crate::measure::fit::Shape::Flat)
    {
        out.push(
            "ranges reads scan every range added before the version read, so their time grows with the number of ranges; the measured steps were too small to show it, so the projection stays flat at their median: read the projected ranges reads as a floor, not an estimate".into(),
        );
    }
    if let Some(s) = report
        .steps
        .iter()
        .filter(|s| s.projected)
        .find(|s| ram > 0 && s.index_total() > ram)
    {
        out.push(format!(
            "{} at {} versions: the projected indexes ({}) exceed this host's memory ({}), so writes will wait on disk and likely take much longer than projected",
            s.design.as_str(),
            format_count(s.versions as f64),
            format_bytes_short(s.index_total() as f64),
            format_bytes_short(ram as f64)
        ));
    }
    out
}
