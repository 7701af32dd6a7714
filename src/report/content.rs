//! What a report says, independent of its format: facts about the run, the parameters, the
//! result tables, findings, recommendation, confounders and notes. The table and Markdown
//! formats lay this out; neither computes anything of its own.

use crate::experiment::{ReportBody, RunReport};
use crate::measure::units::{format_bytes, format_seconds};

use super::grid::Grid;
use super::recommend::{Recommendation, index_build_recommendations};

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
    pub findings: Vec<String>,
    pub recommendations: Vec<Recommendation>,
    pub confounders: Vec<String>,
    pub notes: Vec<String>,
}

/// The parameters from the run's spec key, in their text form.
pub fn params_of(report: &RunReport) -> Vec<(String, String)> {
    crate::experiment::spec::spec_params(&report.spec_key)
        .into_iter()
        .collect()
}

pub fn content(report: &RunReport) -> Content {
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

    let (server, settings) = match &report.server {
        Some(s) => (
            vec![
                ("version".to_string(), s.version.clone()),
                ("location".to_string(), s.location.clone()),
            ],
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
    };
    let h = &report.host;
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

    let mut c = Content {
        title: match &report.preset {
            Some(p) => format!("{} · {p}", report.kind()),
            None => report.kind().to_string(),
        },
        run,
        params: params_of(report),
        server,
        settings,
        host,
        error: report.error.clone(),
        grids: Vec::new(),
        blocks: Vec::new(),
        findings: Vec::new(),
        recommendations: Vec::new(),
        confounders: Vec::new(),
        notes: report.notes.clone(),
    };
    match &report.body {
        ReportBody::IndexBuild(b) => {
            c.grids = super::index_build::grids(b);
            c.findings = b.summary.findings.clone();
            c.confounders = b.summary.confounders.clone();
            c.recommendations = index_build_recommendations(report, b);
        }
        ReportBody::Ingest(b) => {
            c.grids = super::ingest::grids(b);
            c.findings = b.summary.findings.clone();
            c.confounders = b.summary.confounders.clone();
            c.recommendations = super::ingest_advice::recommendations(report, b);
        }
        ReportBody::Growth(b) => {
            c.grids = super::growth::grids(b);
            if let Some(d) = super::growth_advice::decision_grid(report, b) {
                c.grids.insert(0, d);
            }
            c.findings = b.summary.findings.clone();
            let ram = report.host.total_memory;
            for &d in &b.params.designs {
                if let Some(x) = super::growth_advice::ram_crossing(b, d, ram) {
                    c.findings.push(format!(
                        "{}: {} ({} of RAM on this host; by the index-size fit)",
                        d.as_str(),
                        super::growth_advice::crossing_text(x),
                        crate::measure::units::format_bytes_short(ram as f64)
                    ));
                }
            }
            c.findings
                .extend(super::growth_advice::seed_comparison(report, b));
            c.confounders = b.summary.confounders.clone();
            c.recommendations = super::growth_advice::recommendations(report, b);
        }
        ReportBody::Query(b) => {
            c.grids = super::query::grids(b);
            c.blocks = super::query_plans::blocks(b);
            c.findings = b.summary.findings.clone();
            c.confounders = b.summary.confounders.clone();
            c.recommendations = super::query_advice::recommendations(report, b);
        }
    }
    c
}
