//! What a report says, independent of its format: facts about the run, the parameters, the
//! result tables, findings, recommendation, confounders and notes. The table and Markdown
//! formats lay this out; neither computes anything of its own.

use crate::experiment::{ReportBody, RunReport};
use crate::host::HostFingerprint;
use crate::measure::units::{format_bytes, format_seconds};

use super::grid::Grid;
use super::recommend::Recommendation;

/// Everything a report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    /// e.g. "index-build · cybertec-quick".
    pub title: String,
    /// Run facts: id, outcome, when, how long, target.
    pub run: Vec<(String, String)>,
    /// Parameters in their text form (as flags and presets write them).
    pub params: Vec<(String, String)>,
    pub server: Vec<(String, String)>,
    pub settings: Vec<(String, String)>,
    pub host: Vec<(String, String)>,
    pub error: Option<String>,
    pub grids: Vec<Grid>,
    /// Preformatted text with a title (the query experiment's plans side by side).
    pub blocks: Vec<(String, String)>,
    /// The run's decision (headline, evidence, SQL): every format shows it first.
    pub decision: Option<super::decision::Decision>,
    pub findings: Vec<String>,
    pub recommendations: Vec<Recommendation>,
    pub confounders: Vec<String>,
    pub notes: Vec<String>,
}

/// The parameters from the run's spec key, in their text form.
pub(crate) fn params_of(report: &RunReport) -> Vec<(String, String)> {
    crate::experiment::lab::spec::spec_params(&report.spec_key)
        .into_iter()
        .collect()
}

/// What `report` shows: its facts, parameters, server and host, then its kind's tables,
/// findings and advice.
pub fn content(report: &RunReport) -> Content {
    let (server, settings) = server_facts(report);
    let mut title = match &report.preset {
        Some(p) => format!("{} · {p}", report.kind()),
        None => report.kind().to_string(),
    };
    // A run on a table says what it measured first: a projection from a sample, or the table.
    if let ReportBody::IndexBuild(b) = &report.body
        && !b.headline.is_empty()
    {
        title.push_str(&format!(" — {}", b.headline));
    }
    let mut c = Content {
        title,
        run: run_facts(report),
        params: params_of(report),
        server,
        settings,
        host: host_facts(&report.host),
        error: report.error.clone(),
        grids: Vec::new(),
        blocks: Vec::new(),
        decision: super::decision::decision(report),
        findings: Vec::new(),
        recommendations: Vec::new(),
        confounders: Vec::new(),
        notes: report.notes.clone(),
    };
    add_body(&mut c, report);
    // The run's notes include the findings as it reached them: say each once.
    c.notes
        .retain(|n| !c.findings.contains(n) && !c.confounders.contains(n));
    c
}

/// The run's facts: id, outcome, when it started, how long it took, the preset if any, the
/// target and pglab's version.
fn run_facts(report: &RunReport) -> Vec<(String, String)> {
    let mut run = vec![
        ("run".to_string(), report.run_id.clone()),
        ("outcome".to_string(), report.outcome.as_str().to_string()),
        (
            "started".to_string(),
            report
                .started_at
                .format("%Y-%m-%d %H:%M:%S UTC")
                .to_string(),
        ),
        ("took".to_string(), format_seconds(report.seconds())),
    ];
    if let Some(p) = &report.preset {
        run.push(("preset".to_string(), p.clone()));
    }
    run.push(("target".to_string(), report.target.clone()));
    run.push(("pglab".to_string(), report.pglab_version.clone()));
    run
}

/// Labelled facts in the order a report shows them.
type Facts = Vec<(String, String)>;

/// The server's version, location and cluster, and its settings; or that it was not reached.
fn server_facts(report: &RunReport) -> (Facts, Facts) {
    match &report.server {
        Some(s) => (
            std::iter::once(("version".to_string(), s.version.clone()))
                .chain(std::iter::once((
                    "location".to_string(),
                    s.location.clone(),
                )))
                .chain(s.cluster.map(|c| ("cluster".to_string(), c.label())))
                .collect(),
            s.settings
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => (
            vec![(
                "server".to_string(),
                "not reached (no snapshot was taken)".to_string(),
            )],
            Vec::new(),
        ),
    }
}

/// The host: name, CPU, cores, memory, OS and (when known) the filesystem.
fn host_facts(h: &HostFingerprint) -> Vec<(String, String)> {
    let cores = match h.physical_cores {
        Some(p) => format!("{} logical, {p} physical", h.logical_cores),
        None => format!("{} logical", h.logical_cores),
    };
    let mut host = vec![
        ("hostname".to_string(), h.hostname.clone()),
        ("cpu".to_string(), h.cpu_model.clone()),
        ("cores".to_string(), cores),
        ("memory".to_string(), format_bytes(h.total_memory)),
        ("os".to_string(), format!("{} · kernel {}", h.os, h.kernel)),
    ];
    if let Some(fs) = &h.filesystem {
        host.push(("filesystem".to_string(), fs.clone()));
    }
    host
}

/// The tables, plans, findings, confounders and recommendations of the report's kind.
fn add_body(c: &mut Content, report: &RunReport) {
    super::kind_view::view(&report.body).add_body(c, report);
}

#[cfg(test)]
mod tests {
    use super::content;
    use crate::experiment::ReportBody;
    use crate::experiment::index_build::Order;

    #[test]
    fn notes_do_not_repeat_the_findings() {
        let mut r = crate::report::example::index_build(
            "n1",
            1000,
            &[
                (Order::Random, 0, "1MB", &[1.0, 1.01, 0.99, 1.0]),
                (Order::Random, 0, "64MB", &[2.0, 2.02, 1.98, 2.0]),
            ],
        );
        let ReportBody::IndexBuild(b) = &r.body else {
            unreachable!()
        };
        let findings = b.summary.findings.clone();
        assert!(!findings.is_empty());
        r.notes = findings.clone();
        r.notes.push("cleaned up: dropped index x".into());
        let c = content(&r);
        assert_eq!(c.findings, findings);
        assert_eq!(c.notes, ["cleaned up: dropped index x"]);
    }
}
