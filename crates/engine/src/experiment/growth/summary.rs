//! The summary a reader wants first: what each design measured at its largest step, the
//! designs against each other, the swept settings, content agreement, projections, disk,
//! growth and fill rate, and the confounders — each a named step of [`GrowthReport::summarize`].

use super::kinds::{Design, GrowMode};
use super::report::{
    DesignFit, GrowStats, GrowthReport, GrowthStep, GrowthSummary, StepProjection,
};
use super::verdicts::{self, DesignComparison, ms};
use crate::measure::units::{format_bytes_short, format_count};

impl GrowthReport {
    /// Recompute the summary from the steps so far (also for partial runs).
    pub(crate) fn summarize(&mut self, extra_confounders: &[String], cold_reads: bool) {
        let p = &self.params;
        let mut findings: Vec<String> = p
            .designs
            .iter()
            .filter_map(|&d| self.largest_step_finding(d))
            .collect();
        findings.extend(self.size_comparison());
        // Times are compared per step by the statistics core.
        let rules = p.decision.rules_for(p.repeat);
        let estimates = verdicts::estimates(&self.steps, &rules);
        let labels = super::combo_labels(p);
        let comparisons = verdicts::comparisons(&self.steps, &labels, &rules);
        let settings = verdicts::settings_findings(&self.steps, &labels, &rules);
        // The swept settings at the largest step each design measured under all of them.
        if let Some(top) = settings.iter().map(|f| f.versions).max() {
            findings.extend(
                settings
                    .iter()
                    .filter(|f| f.versions == top)
                    .map(|f| f.sentence.clone()),
            );
        }
        // The largest step first; within a step write, read, cold read.
        let mut ordered: Vec<&DesignComparison> = comparisons.iter().collect();
        ordered.sort_by_key(|c| std::cmp::Reverse(c.versions));
        findings.extend(ordered.iter().map(|c| c.finding.clone()));
        let distributed = super::sharding::against_plain(&self.steps, &rules);
        findings.extend(distributed.iter().map(|c| c.finding.clone()));
        findings.extend(super::sharding::findings(&self.steps, &rules));
        findings.extend(super::sync_levels::findings(self, rules.confidence));
        findings.extend(super::sync_levels::fault_findings(self));
        let same = self.same_content();
        findings.extend(content_finding(same));
        findings.extend(self.projection_findings());
        findings.extend(self.disk_finding());
        findings.extend(self.grow_finding());
        findings.extend(self.baseline_finding());
        let mut confounders: Vec<String> = extra_confounders.to_vec();
        confounders.extend(self.noisy_writes());
        let hosts: Vec<_> = self.steps.iter().filter_map(|s| s.host).collect();
        confounders.extend(crate::host::load::confounded(&hosts));
        confounders.dedup();
        self.summary = GrowthSummary {
            findings,
            estimates,
            comparisons,
            distributed,
            settings,
            confounders,
            same_content: same,
            cold_reads,
            commits: super::commits::per_combo(&self.commits, &labels),
        };
    }

    /// "snapshot at 1k versions (10M rows): writing one version took …, reading one …;
    /// table …, indexes …": the largest step `design` measured, or None before its first.
    fn largest_step_finding(&self, design: Design) -> Option<String> {
        let last = self.measured(design).last()?;
        let mut f = format!(
            "{} at {} versions ({} rows): ",
            design.as_str(),
            format_count(last.versions as f64),
            format_count(last.rows as f64)
        );
        let n = |v: &[f64]| match v.len() {
            0 | 1 => String::new(),
            n => format!(", median of {n}"),
        };
        if let Some(w) = last.write_seconds {
            f.push_str(&format!(
                "writing one version took {} ({}{}), ",
                ms(w),
                self.params.write_method.describe(),
                n(&last.write_repeats)
            ));
        }
        if let Some(r) = last.read_seconds {
            f.push_str(&format!(
                "reading one {} warm{}",
                ms(r),
                n(&last.read_repeats)
            ));
            if let Some(c) = last.read_cold_seconds {
                f.push_str(&format!(" ({} cold)", ms(c)));
            }
            f.push_str("; ");
        }
        f.push_str(&format!(
            "table {}, indexes {}",
            format_bytes_short(last.table_bytes as f64),
            format_bytes_short(last.index_total() as f64)
        ));
        if let Some(b) = last.bytes_per_row {
            f.push_str(&format!(" ({b:.0} B/row)"));
        }
        if !last.node_bytes.is_empty() {
            f.push_str(&format!("; per node {}", super::sharding::per_node(last)));
        }
        Some(f)
    }

    /// The original question, snapshot or differences, in bytes: sizes are exact, stated at
    /// the largest step both designs measured.
    fn size_comparison(&self) -> Option<String> {
        let (s, r) = self
            .measured(Design::Snapshot)
            .filter_map(|s| {
                self.measured(Design::Ranges)
                    .find(|r| r.versions == s.versions && s.versions > 0)
                    .map(|r| (s, r))
            })
            .last()?;
        Some(format!(
            "at {} versions ranges holds the same content in {} against {} ({:.1}%)",
            format_count(s.versions as f64),
            format_bytes_short(r.total_bytes() as f64),
            format_bytes_short(s.total_bytes() as f64),
            100.0 * r.total_bytes() as f64 / s.total_bytes().max(1) as f64
        ))
    }

    /// Each design's furthest projected step, with its intervals and how far it reaches.
    fn projection_findings(&self) -> Vec<String> {
        let mut findings = Vec::new();
        for fit in &self.fit {
            let last = self
                .steps
                .iter()
                .filter(|s| s.design == fit.design && s.projected)
                .max_by_key(|s| s.pairs);
            if let (Some(last), Some(pr)) = (last, last.and_then(|l| self.projection(l))) {
                findings.push(projection_finding(fit, last, &pr));
            }
        }
        findings
    }

    /// The disk the furthest projected step would need, against the free space.
    fn disk_finding(&self) -> Option<String> {
        let last = self
            .steps
            .iter()
            .filter(|s| s.projected)
            .max_by_key(|s| s.pairs)?;
        let need = last.disk_needed_bytes?;
        Some(format!(
            "{} versions would need about {} of disk for {} with WAL and sort space{}",
            format_count(last.versions as f64),
            format_bytes_short(need as f64),
            if self.params.designs.len() > 1 {
                "both designs"
            } else {
                "the table"
            },
            match last.fits_disk {
                Some(true) => ", which fits the free disk",
                Some(false) => ", more than the disk has free",
                None => " (free space unknown)",
            }
        ))
    }

    /// How fast the tables grew between the steps, COPY against everything else.
    fn grow_finding(&self) -> Option<String> {
        let grows: Vec<&GrowStats> = self
            .steps
            .iter()
            .filter_map(|s| s.grow.as_ref())
            .filter(|g| g.rows > 0)
            .collect();
        if grows.is_empty() {
            return None;
        }
        let rows: u64 = grows.iter().map(|g| g.rows).sum();
        let secs: f64 = grows.iter().map(|g| g.seconds).sum();
        let copy: f64 = grows.iter().map(|g| g.copy_seconds).sum();
        Some(format!(
            "growing took {} for {} rows ({} rows/s overall, COPY at {} rows/s; the rest is index {} and VACUUM)",
            ms(secs),
            format_count(rows as f64),
            format_count(rows as f64 / secs.max(1e-9)),
            format_count(rows as f64 / copy.max(1e-9)),
            match self.params.grow_mode {
                GrowMode::Rebuild => "rebuilds",
                GrowMode::Keep => "maintenance",
            }
        ))
    }

    /// The fill rate against a plain COPY into an unindexed table (`--baseline`).
    fn baseline_finding(&self) -> Option<String> {
        let b = self.baseline.as_ref()?;
        Some(format!(
            "fill rate against a plain COPY of the same {} rows into an unindexed table ({} rows/s): COPY phase {:.2}×, with index work and VACUUM {:.2}×",
            format_count(b.rows as f64),
            format_count(b.rows_per_second),
            b.copy_ratio,
            b.total_ratio
        ))
    }

    /// Steps whose write repeats spread more than 10%. Writes under 50 ms are at the mercy
    /// of the scheduler; only longer ones count.
    fn noisy_writes(&self) -> Option<String> {
        let noisy: Vec<String> = self
            .steps
            .iter()
            .filter(|s| !s.projected && s.write_repeats.len() > 1)
            .filter_map(|s| {
                let sum = crate::measure::stats::Summary::of(&s.write_repeats)?;
                (sum.median >= 0.05 && sum.is_noisy()).then(|| {
                    format!(
                        "{} at {} versions ({:.0}%)",
                        s.design.as_str(),
                        s.versions,
                        sum.spread() * 100.0
                    )
                })
            })
            .collect();
        (!noisy.is_empty()).then(|| {
            format!(
                "write repeats spread more than 10% (noisy): {}",
                noisy.join(", ")
            )
        })
    }
}

/// Whether both designs returned the same content for the same versions.
fn content_finding(same: Option<bool>) -> Option<String> {
    match same {
        Some(true) => Some(
            "both designs returned the same content for the same versions at every step".into(),
        ),
        Some(false) => Some(
            "MISMATCH: the designs returned different content for the same version (a bug in pglab; please report it)"
                .into(),
        ),
        None => None,
    }
}

/// "snapshot at 1M versions (1G rows), extrapolated ×10000 from 3 measured steps up to 100k
/// rows: table 71.5 GB [71.3 GB–74.5 GB] and indexes … (linear in rows), write 58 ms [49 ms–65
/// ms] (flat: no growth shown), read …".
fn projection_finding(fit: &DesignFit, last: &GrowthStep, pr: &StepProjection) -> String {
    let bytes = |b: f64| format_bytes_short(b);
    let mut f = format!(
        "{} at {} versions ({} rows), {} from {} measured step{} up to {} rows:",
        fit.design.as_str(),
        format_count(last.versions as f64),
        format_count(last.rows as f64),
        pr.words(),
        fit.measured_steps,
        if fit.measured_steps == 1 { "" } else { "s" },
        format_count(fit.from_rows as f64),
    );
    let mut parts = Vec::new();
    match (pr.table, pr.index) {
        (Some(t), Some(i)) => parts.push(format!(
            "table {} and indexes {} ({})",
            t.show(&bytes),
            i.show(&bytes),
            t.shape.describe()
        )),
        _ => parts.push(format!(
            "table {}, indexes {} (per-row sizes, no fit)",
            bytes(last.table_bytes as f64),
            bytes(last.index_total() as f64)
        )),
    }
    for (what, p) in [("write", pr.write), ("read", pr.read)] {
        if let Some(p) = p {
            parts.push(format!("{what} {} ({})", p.show(&ms), p.shape.describe()));
        }
    }
    f.push(' ');
    f.push_str(&parts.join(", "));
    f
}
