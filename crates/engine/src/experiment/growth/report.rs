//! growth results: one record per step per design (measured or projected), the fits that
//! project them, the fill-rate baseline, and the summary a reader wants first.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::kinds::{Design, GrowMode};
use super::spec::GrowthSpec;
use super::verdicts::{self, DesignComparison, StepEstimate};
use crate::measure::fit::{Projected, Trend, reach_words};

/// How a design's table grew to a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowStats {
    pub mode: GrowMode,
    /// Versions before this growth.
    pub from_versions: u64,
    /// Rows added (as the server counted them).
    pub rows: u64,
    /// Everything: dropping indexes, COPY, rebuilding, VACUUM.
    pub seconds: f64,
    pub copy_seconds: f64,
    pub index_seconds: f64,
    pub vacuum_seconds: f64,
    pub copy_rows_per_second: f64,
    pub rows_per_second: f64,
}

/// One step of one design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthStep {
    pub design: Design,
    pub versions: u64,
    /// Rows in the design's table (projected: computed).
    pub rows: u64,
    /// (version, content) pairs the table represents: versions × units (the chart's x).
    pub pairs: u64,
    /// True when this step was not run but projected from the fit.
    pub projected: bool,
    /// Median seconds to write one new version (None when neither measured nor projectable).
    pub write_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_repeats: Vec<f64>,
    /// Median seconds to read all content of one version, warm cache.
    pub read_seconds: Option<f64>,
    /// Every warm read, in the order of `read_versions`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_repeats: Vec<f64>,
    /// Median seconds of the same reads right after dropping the OS page cache of the table
    /// and its indexes (None where that is not possible).
    pub read_cold_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_cold_repeats: Vec<f64>,
    /// Content units the reads returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rows: Option<u64>,
    /// Versions read (seeded, the same for every design at a step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_versions: Vec<u64>,
    /// Fingerprint of the content of the first version read, to compare designs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_digest: Option<String>,
    /// pg_table_size.
    pub table_bytes: u64,
    /// pg_relation_size per index, by name (pk, version, content, version_content, versions);
    /// on a distributed table one entry, `all indexes`, summed over the shards.
    pub index_bytes: BTreeMap<String, u64>,
    /// Citus: the table's shards (heap and indexes) on each node holding some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_bytes: Vec<NodeBytes>,
    /// (table + indexes) / rows.
    pub bytes_per_row: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grow: Option<GrowStats>,
    /// Disk this step needs in all (tables, indexes, WAL, sort space) and whether that fits
    /// the free space (None: free space unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_needed_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fits_disk: Option<bool>,
    /// Projected steps: pairs / the largest pairs measured (how far the fit is stretched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<f64>,
    /// The combination of swept server settings (`--set`) the step was measured with: an
    /// index into the spec's (0 when nothing is swept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    /// The swept settings as `SHOW` reported them in the measuring session.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Measured steps: the primary's standbys as `pg_stat_replication` showed them after
    /// this combination's last writes of the step (empty: none, or projected).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<crate::server::replication::ReplicaLag>,
    /// Measured steps: whether a CHECKPOINT followed the growth, before the measurements
    /// (None: projected, or a record from before pglab said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<bool>,
    /// What the host did beside the step's timed writes and reads: CPU other processes
    /// took, steal, memory stalls (None: projected, not read, or an older record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::host::load::TrialHost>,
}

/// Bytes of a distributed table's shards on one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeBytes {
    /// `host:port`.
    pub node: String,
    pub bytes: u64,
}

impl GrowthStep {
    #[cfg(test)]
    /// A measured step holding nothing but its design, versions and rows: tests fill in the
    /// rest with struct update syntax.
    #[cfg(any(test, feature = "fixtures"))]
    pub(crate) fn blank(design: Design, versions: u64, rows: u64) -> GrowthStep {
        GrowthStep {
            design,
            versions,
            rows,
            pairs: rows,
            projected: false,
            write_seconds: None,
            write_repeats: vec![],
            read_seconds: None,
            read_repeats: vec![],
            read_cold_seconds: None,
            read_cold_repeats: vec![],
            read_rows: None,
            read_versions: vec![],
            content_digest: None,
            table_bytes: 0,
            index_bytes: BTreeMap::new(),
            node_bytes: Vec::new(),
            bytes_per_row: None,
            grow: None,
            disk_needed_bytes: None,
            fits_disk: None,
            reach: None,
            replicas: Vec::new(),
            combo: 0,
            settings: BTreeMap::new(),
            checkpoint: None,
            host: None,
        }
    }

    pub fn index_total(&self) -> u64 {
        self.index_bytes.values().sum()
    }
    pub(crate) fn total_bytes(&self) -> u64 {
        self.table_bytes + self.index_total()
    }
}

/// How one design's sizes and times grow with the rows of its table (see
/// [`crate::measure::fit`]): what its projected steps are carried along.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignFit {
    pub design: Design,
    /// What x is: "rows" of the design's table.
    pub x: String,
    pub measured_steps: usize,
    /// The projection starts at the largest table measured (rows)…
    #[serde(default)]
    pub from_rows: u64,
    /// …and reaches this far (the last point reported).
    #[serde(default)]
    pub to_rows: u64,
    /// to_rows / from_rows (None when only the empty table was measured).
    pub reach: Option<f64>,
    /// Table and index bytes (linear in rows) and the time to write and to read one version
    /// (flat, logarithmic or linear, as the repeats showed), each with its interval.
    #[serde(default)]
    pub table: Option<Trend>,
    #[serde(default)]
    pub index: Option<Trend>,
    #[serde(default)]
    pub write: Option<Trend>,
    #[serde(default)]
    pub read: Option<Trend>,
}

/// A projected step's figures with their intervals and shapes, and how far they reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepProjection {
    /// The step's rows ÷ the largest table measured.
    pub reach: f64,
    pub table: Option<Projected>,
    pub index: Option<Projected>,
    pub write: Option<Projected>,
    pub read: Option<Projected>,
}

impl StepProjection {
    /// "extrapolated ×10000" past ten times the largest table measured, else "projected".
    pub(crate) fn words(&self) -> String {
        reach_words(self.reach)
    }
}

/// The fill rate against a plain COPY of the same rows into an unindexed table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillBaseline {
    pub design: Design,
    pub rows: u64,
    pub seconds: f64,
    pub rows_per_second: f64,
    /// The growth fill these rows were taken from.
    pub growth_copy_rows_per_second: f64,
    pub growth_rows_per_second: f64,
    /// growth COPY rate / plain rate, and growth rate including index work and VACUUM / plain.
    pub copy_ratio: f64,
    pub total_ratio: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrowthSummary {
    /// Sentences, most important first.
    pub findings: Vec<String>,
    /// Per measured step and design: write, read and cold-read seconds as medians with
    /// their intervals.
    #[serde(default)]
    pub estimates: Vec<StepEstimate>,
    /// ranges against snapshot per measured step and timing, with the verdict.
    #[serde(default)]
    pub comparisons: Vec<DesignComparison>,
    /// Citus: each distributed snapshot table against the plain one at the largest step both
    /// measured, for writing and reading one version, with the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distributed: Vec<super::sharding::ShardComparison>,
    /// Each design and step across the swept server settings (`--set`), decided.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<verdicts::SettingsFinding>,
    /// Things that may have skewed the numbers.
    pub confounders: Vec<String>,
    /// Whether both designs returned the same content for the same versions (None: not both
    /// designs measured).
    pub same_content: Option<bool>,
    /// Whether cold reads were measured.
    pub cold_reads: bool,
    /// Each combination's version-write COMMITs over every step (see `commits`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<super::commits::ComboCommits>,
}

/// The growth part of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrowthReport {
    pub params: GrowthSpec,
    pub steps: Vec<GrowthStep>,
    pub fit: Vec<DesignFit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<FillBaseline>,
    /// Free space on the server's filesystem (or the run's disk budget) as the steps began:
    /// what the data could grow into. None when the server's filesystem is not visible here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// Each combination's version-write COMMITs at each measured step: their times,
    /// percentiles, rows per second of the write phases, stalls, the standbys after, and a
    /// standby fault's doing (absent in records before they were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<super::commits::StepCommits>,
    pub summary: GrowthSummary,
}

impl GrowthReport {
    pub fn new(spec: &GrowthSpec) -> Self {
        GrowthReport {
            params: spec.clone(),
            steps: vec![],
            fit: vec![],
            baseline: None,
            free_bytes: None,
            commits: Vec::new(),
            summary: GrowthSummary::default(),
        }
    }

    /// A projected step's figures along its design's fits (None for a measured step).
    pub(crate) fn projection(&self, s: &GrowthStep) -> Option<StepProjection> {
        if !s.projected {
            return None;
        }
        let fit = self.fit.iter().find(|f| f.design == s.design);
        let at = |t: Option<&Trend>| t.map(|t| t.at(s.rows as f64));
        Some(StepProjection {
            reach: s.reach.unwrap_or(f64::INFINITY),
            table: at(fit.and_then(|f| f.table.as_ref())),
            index: at(fit.and_then(|f| f.index.as_ref())),
            write: at(fit.and_then(|f| f.write.as_ref())),
            read: at(fit.and_then(|f| f.read.as_ref())),
        })
    }

    pub fn measured(&self, design: Design) -> impl Iterator<Item = &GrowthStep> {
        self.steps
            .iter()
            .filter(move |s| s.design == design && !s.projected)
    }

    /// Do both designs agree on the content of every version both read?
    pub(crate) fn same_content(&self) -> Option<bool> {
        let mut by_versions: BTreeMap<u64, Vec<&GrowthStep>> = BTreeMap::new();
        for s in self.steps.iter().filter(|s| !s.projected) {
            by_versions.entry(s.versions).or_default().push(s);
        }
        let mut compared = false;
        for steps in by_versions.values() {
            if steps.len() < 2 {
                continue;
            }
            let first = steps[0];
            for s in &steps[1..] {
                if s.read_versions.first() != first.read_versions.first() {
                    continue;
                }
                compared = true;
                if s.content_digest != first.content_digest || s.read_rows != first.read_rows {
                    return Some(false);
                }
            }
        }
        compared.then_some(true)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
