//! The summary of an ingest run, every claim backed by a verdict of the statistics core:
//! per configuration the median rows/s with its interval, per question (see `verdicts`) the
//! finding in the fixed vocabulary, per batch curve its knee, and the facts that need no
//! verdict (the fsync wall, decay within a trial).
//!
//! **The knee** of a batch curve is the core's recommendation for the curve: the smallest batch
//! shown as good as the best (within the smallest effect of every batch that could be the
//! best), with no smaller batch still undecided. When that is the largest batch tried (every
//! smaller one slower), the curve is still rising and there is no knee inside the tested
//! range; when the curve is undecided there is none either, and the note says why and about
//! how many trials would settle it.

use serde::{Deserialize, Serialize};

use super::client_cpu;
use super::kinds::{Method, SyncCommit};
use super::plan::TrialPlan;
use super::report::{IngestReport, IngestTrial};
use super::verdicts::{self, Group, Question};
use super::whatif;
use crate::experiment::lab::decision::format_percent;
use crate::experiment::lab::fault_report::{self, FaultTrial};
use crate::measure::finding::{Finding, decide};
use crate::measure::interval::{Estimate, estimate};
use crate::measure::rules::Rules;
use crate::measure::units::format_rate;
use crate::measure::verdict::{Better, Verdict};

/// One configuration over its trials: rows/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigStat {
    pub method: Method,
    pub batch: u64,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    /// The combination of swept server settings (`--set`) and its label.
    #[serde(default, skip_serializing_if = "super::report::is_zero")]
    pub combo: usize,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub settings: String,
    /// Rows/s over the trials: n, median, min, max and the median's interval (stored flat,
    /// as `n`, `median`, … beside the configuration).
    #[serde(flatten)]
    pub rows_per_s: Estimate,
}

/// One setting of a question, against the question's best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSetting {
    pub label: String,
    pub n: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// This setting against the best (`slower`: significantly and practically below it);
    /// None for the best itself.
    pub verdict: Option<Verdict>,
    /// rows/s of this setting ÷ the best's (ratio of geometric means, Welch on logs) with its interval, at the
    /// question's pairwise level (`level`).
    pub ratio: Option<f64>,
    pub ratio_low: Option<f64>,
    pub ratio_high: Option<f64>,
    /// Coverage of the ratio's interval (all of the question's intervals hold together at
    /// the run's confidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<f64>,
    /// For `too few trials`: about how many trials each would decide (an estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    /// Shown as good as the best (within the smallest effect of every setting that could be
    /// the best).
    #[serde(default)]
    pub equivalent: bool,
}

/// One question answered: the core's finding for a set of configurations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestGroup {
    /// What varies: `batch`, `method`, `clients`, `sync-commit`.
    pub question: Question,
    /// The parameters held fixed (null: the one that varies).
    pub method: Option<Method>,
    pub batch: Option<u64>,
    pub clients: Option<u32>,
    pub synchronous_commit: Option<SyncCommit>,
    /// The swept server settings held fixed (`--set`; empty when none or when they vary).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server_settings: String,
    /// `faster` (a winner), `no significant difference`, `too few trials`.
    pub verdict: Option<Verdict>,
    /// The setting with the highest median (not a claim: see `winner`).
    pub best: Option<String>,
    pub winner: Option<String>,
    /// The cheapest setting shown as good as the best (see `measure::finding`).
    pub recommendation: Option<String>,
    /// Every setting shown as good as the best.
    #[serde(default)]
    pub equivalent: Vec<String>,
    /// Undecided settings that stand between the trials and an answer.
    #[serde(default)]
    pub blocking: Vec<String>,
    /// About how many trials per setting would settle `blocking` (an estimate).
    pub more_repeats_needed: Option<usize>,
    /// All of this question's verdicts together, in words (`95% for the 3 pairs together
    /// (each interval 98.33%)`).
    #[serde(default)]
    pub level: String,
    pub finding: String,
    pub settings: Vec<GroupSetting>,
    /// The core's finding itself, which every field above is read from (what the TUI
    /// renders). Absent in records from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<Finding>,
}

/// The knee of one batch curve (one method at one client count and synchronous_commit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesKnee {
    pub series: String,
    pub method: Method,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    /// The batch with the highest median rows/s, and that median.
    pub best_batch: u64,
    pub best_rows_per_s: f64,
    /// The smallest batch not significantly below the best; None when there is no knee.
    pub knee_batch: Option<u64>,
    pub knee_rows_per_s: Option<f64>,
    /// Why this knee, or why none: "no knee inside the tested range", "too few trials …".
    #[serde(default)]
    pub knee_note: String,
}

/// Per method: its configuration with the highest median rows/s, and the knee of that
/// configuration's batch curve (None when there is no knee or only one batch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodBest {
    pub method: Method,
    pub batch: u64,
    pub clients: u32,
    pub synchronous_commit: SyncCommit,
    /// Median rows/s.
    pub rows_per_s: f64,
    pub knee_batch: Option<u64>,
    pub knee_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestSummary {
    #[serde(default)]
    pub configs: Vec<ConfigStat>,
    #[serde(default)]
    pub groups: Vec<IngestGroup>,
    pub best: Vec<MethodBest>,
    pub knees: Vec<SeriesKnee>,
    pub findings: Vec<String>,
    /// What may have skewed the numbers (no CHECKPOINT, appending while repeating …).
    #[serde(default)]
    pub confounders: Vec<String>,
}

fn rate(v: f64) -> String {
    format_rate(v)
}

/// The knee of a batch curve from its finding (members in increasing batch): the core's
/// recommendation, or why there is none.
fn knee(g: &Group, f: &Finding) -> (Option<usize>, String) {
    let batches: Vec<u64> = g.members.iter().map(|c| c.batch).collect();
    let effect = format_percent(f.rules.min_effect);
    let position = |l: &String| f.settings.iter().position(|s| &s.label == l);
    match f.verdict {
        None => (None, "one batch: no curve".into()),
        Some(Verdict::TooFewTrials) => (
            None,
            format!(
                "the knee is not placed yet ({} undecided)",
                f.blocking.join(", ")
            ),
        ),
        Some(_) => {
            let last = batches.len() - 1;
            let Some(k) = f.recommendation.as_ref().and_then(position) else {
                // Every batch shown within the smallest effect of the best.
                return (
                    Some(0),
                    format!("every batch within {effect} of the best: the smallest is enough"),
                );
            };
            if k == last && last > 0 {
                return (
                    None,
                    format!(
                        "no knee inside the tested range: rows/s still rising significantly at batch {}, the largest tried",
                        batches[last]
                    ),
                );
            }
            let larger_open = f.undecided.iter().filter_map(position).any(|i| i > k);
            let note = if larger_open {
                format!(
                    "the smallest batch shown within {effect} of the best; some larger batches are still undecided"
                )
            } else {
                format!(
                    "the smallest batch shown within {effect} of the best; larger batches bought nothing measurable"
                )
            };
            (Some(k), note)
        }
    }
}

impl IngestReport {
    /// Recompute the summary from the trials so far (also for partial, cancelled runs);
    /// `confounders` are the run's own (CHECKPOINT skipped …).
    pub(crate) fn summarize(&mut self, confounders: &[String]) {
        let rules = self.params.decision.rules_for(self.params.repeat);
        let labels = self.params.combo_labels();
        let configs = verdicts::configurations(&self.trials);
        let mut s = IngestSummary {
            confounders: confounders.to_vec(),
            ..IngestSummary::default()
        };
        for c in &configs {
            if let Some(e) = estimate(&verdicts::rows_per_s(&self.trials, c), rules.confidence) {
                s.configs.push(ConfigStat {
                    method: c.method,
                    batch: c.batch,
                    clients: c.clients,
                    synchronous_commit: c.sync,
                    combo: c.combo,
                    settings: labels.get(c.combo).cloned().unwrap_or_default(),
                    rows_per_s: e,
                });
            }
        }
        for g in verdicts::groups(&configs, &labels) {
            let (group, knee) = answer(&g, &self.trials, &rules);
            if let Some(k) = knee {
                s.knees.push(k);
            }
            s.findings.push(group.finding.clone());
            s.groups.push(group);
        }
        s.findings
            .extend(super::sync_levels::findings(&self.trials, rules.confidence));
        let faulted: Vec<FaultTrial> = self.trials.iter().map(IngestTrial::fault_view).collect();
        s.findings
            .extend(fault_report::findings(&faulted, "rows/s", rules.confidence));
        if !self.params.set.is_empty() {
            s.findings
                .extend(whatif::wal_by_settings(&self.trials, &labels));
            s.findings
                .extend(whatif::checkpoints_by_settings(&self.trials, &labels));
        }
        s.best = method_bests(&s);
        s.confounders.extend(client_cpu::confounder(&self.trials));
        let hosts: Vec<_> = self.trials.iter().filter_map(|t| t.host).collect();
        s.confounders.extend(crate::host::load::confounded(&hosts));
        s.confounders.extend(self.short_trials(&configs));
        s.confounders.extend(super::citus_copy::confounder(
            &self.trials,
            self.citus_connections,
        ));
        self.fsync_wall(&mut s);
        self.decay(&mut s);
        self.summary = s;
    }

    /// The confounder of trials too short to mean anything: the configuration whose median
    /// trial is shortest, under 100 ms, and the rows per trial that would make it last that
    /// long (a trial stopped by `duration` is never short).
    fn short_trials(&self, configs: &[TrialPlan]) -> Option<String> {
        let (c, secs) = configs
            .iter()
            .filter_map(|c| {
                let secs: Vec<f64> = self
                    .trials
                    .iter()
                    .filter(|t| t.config() == *c)
                    .map(|t| t.seconds)
                    .collect();
                Some((c, crate::measure::stats::median(&secs)?))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let grow = crate::measure::short::too_short(secs)?;
        let t = self.trials.iter().find(|t| t.config() == *c)?;
        Some(format!(
            "trials as short as {:.0} ms ({} batch {}, median): under 100 ms, timer and scheduling noise weigh as much as the setting; about {} rows per trial would make them last 100 ms (--rows)",
            secs * 1000.0,
            t.series_name(),
            c.batch,
            crate::measure::units::format_count(crate::measure::short::nice_up(
                self.params.rows as f64 * grow
            ))
        ))
    }

    /// The fsync wall: one commit per row, each waiting for the disk (a fact of the medians,
    /// no comparison).
    fn fsync_wall(&self, s: &mut IngestSummary) {
        let Some(fs) = &self.fsync else { return };
        let walled: Vec<&IngestTrial> = self
            .trials
            .iter()
            .filter(|t| t.method == Method::Insert && t.synchronous_commit.waits_for_flush())
            .collect();
        let Some(fewest) = walled.iter().map(|t| t.clients).min() else {
            return;
        };
        // One level only: `on` with a synchronous standby waits for it too, so a median over
        // levels would mix the disk's wall with the standby's round trip. The most local
        // level measured says most about the disk.
        let Some(level) = SyncCommit::BY_REACH.into_iter().find(|l| {
            walled
                .iter()
                .any(|t| t.clients == fewest && t.synchronous_commit == *l)
        }) else {
            return;
        };
        let of: Vec<&&IngestTrial> = walled
            .iter()
            .filter(|t| t.clients == fewest && t.synchronous_commit == level)
            .collect();
        let commits: Vec<f64> = of.iter().map(|t| t.commits_per_s).collect();
        let Some(e) = estimate(&commits, self.params.decision.confidence) else {
            return;
        };
        let t = of[0];
        // The batch latencies cluster at the disk's flush time (or a multiple when commits
        // queue behind each other): say so when the median batch latency matches it.
        let p50s: Vec<f64> = of.iter().map(|t| t.latency_ms.p50).collect();
        let flush_ms = 1000.0 / fs.ops_per_s;
        let latency = estimate(&p50s, self.params.decision.confidence)
            .and_then(|l| {
                let k = (l.median / flush_ms).round();
                ((1.0..=3.0).contains(&k) && (l.median / (k * flush_ms) - 1.0).abs() <= 0.2)
                    .then(|| {
                        format!(
                            "; a batch (one row and its commit) takes {:.2} ms at the median, {} the disk's {:.2} ms per fsync",
                            l.median,
                            if k == 1.0 { "about".to_string() } else { format!("about {k:.0}×") },
                            flush_ms
                        )
                    })
            })
            .unwrap_or_default();
        s.findings.push(format!(
            "insert, sync={}, {}: {} commits/s (median of {}) = {:.0}% of the disk's {} fsyncs/s ({}): every row waits for a WAL flush{latency}",
            t.synchronous_commit.as_str(),
            verdicts::clients(t.clients),
            rate(e.median),
            e.n,
            e.median / fs.ops_per_s * 100.0,
            rate(fs.ops_per_s),
            if fs.source == "probe" { "probed for 2 s" } else { "from the host probe" }
        ));
    }

    /// Decay over a trial: the CouchDB post's "falling after a while" (per trial).
    fn decay(&self, s: &mut IngestSummary) {
        let mut decayed: Vec<&IngestTrial> = self
            .trials
            .iter()
            .filter(|t| t.decay_pct.is_some_and(|d| d >= 20.0))
            .collect();
        decayed.sort_by(|a, b| {
            b.decay_pct
                .unwrap_or(0.0)
                .total_cmp(&a.decay_pct.unwrap_or(0.0))
        });
        for t in decayed.into_iter().take(3) {
            let q = (t.series.len() / 4).max(1);
            let first = t.series[..q].iter().sum::<f64>() / q as f64;
            let last = t.series[t.series.len() - q..].iter().sum::<f64>() / q as f64;
            s.findings.push(format!(
                "{} batch {} (repeat {}): rows/s fell {:.0}% during the trial (first quarter {}/s, last quarter {}/s)",
                t.series_name(),
                t.batch,
                t.repeat,
                t.decay_pct.unwrap_or(0.0),
                rate(first),
                rate(last)
            ));
        }
    }
}

/// Ask the core one question; a batch curve also gives its knee.
fn answer(g: &Group, trials: &[IngestTrial], rules: &Rules) -> (IngestGroup, Option<SeriesKnee>) {
    let f = decide(&g.settings(trials), Better::Higher, rules);
    let mut finding = format!("{}: {}", g.context(), f.sentence_with(&rate));
    let mut series_knee = None;
    if g.question == Question::Batch
        && let Some(best) = f.best.as_ref()
        && let Some(bi) = f.settings.iter().position(|s| &s.label == best)
        && let Some(be) = f.settings[bi].estimate
    {
        let (k, note) = knee(g, &f);
        let kc = k.map(|i| g.members[i]);
        let ke = k.and_then(|i| f.settings[i].estimate);
        match kc {
            Some(c) => finding.push_str(&format!("; knee at batch {}", c.batch)),
            None => finding.push_str(&format!("; {note}")),
        }
        let c = g.members[bi];
        series_knee = Some(SeriesKnee {
            series: c.series(),
            method: c.method,
            clients: c.clients,
            synchronous_commit: c.sync,
            best_batch: c.batch,
            best_rows_per_s: be.median,
            knee_batch: kc.map(|c| c.batch),
            knee_rows_per_s: ke.map(|e| e.median),
            knee_note: note,
        });
    }
    let settings = f
        .settings
        .iter()
        .map(|s| GroupSetting {
            label: s.label.clone(),
            n: s.estimate.map_or(0, |e| e.n),
            median: s.estimate.map(|e| e.median),
            ci_low: s.estimate.map(|e| e.ci_low),
            ci_high: s.estimate.map(|e| e.ci_high),
            verdict: s.vs_best.as_ref().map(|c| c.verdict),
            ratio: s.vs_best.as_ref().map(|c| c.ratio),
            ratio_low: s.vs_best.as_ref().map(|c| c.ratio_low),
            ratio_high: s.vs_best.as_ref().map(|c| c.ratio_high),
            level: s.vs_best.as_ref().map(|c| c.level),
            trials_needed: s.vs_best.as_ref().and_then(|c| c.trials_needed),
            equivalent: f.is_equivalent(&s.label),
        })
        .collect();
    let group = IngestGroup {
        question: g.question,
        method: g.method,
        batch: g.batch,
        clients: g.clients,
        synchronous_commit: g.sync,
        server_settings: g.fixed_combo_label(),
        verdict: f.verdict,
        best: f.best.clone(),
        winner: f.winner.clone(),
        recommendation: f.recommendation.clone(),
        equivalent: f.equivalent.clone(),
        blocking: f.blocking.clone(),
        more_repeats_needed: f.more_repeats_needed,
        level: f.level_words(),
        finding,
        settings,
        decided: Some(f),
    };
    (group, series_knee)
}

/// Per method, its configuration with the highest median and that curve's knee.
fn method_bests(s: &IngestSummary) -> Vec<MethodBest> {
    Method::ALL
        .into_iter()
        .filter_map(|m| {
            let best = s
                .configs
                .iter()
                .filter(|c| c.method == m)
                .max_by(|a, b| a.rows_per_s.median.total_cmp(&b.rows_per_s.median))?;
            let knee = s.knees.iter().find(|k| {
                k.method == m
                    && k.clients == best.clients
                    && k.synchronous_commit == best.synchronous_commit
            });
            Some(MethodBest {
                method: m,
                batch: best.batch,
                clients: best.clients,
                synchronous_commit: best.synchronous_commit,
                rows_per_s: best.rows_per_s.median,
                knee_batch: knee.and_then(|k| k.knee_batch),
                knee_rows_per_s: knee.and_then(|k| k.knee_rows_per_s),
            })
        })
        .collect()
}

impl ConfigStat {
    pub(crate) fn config(&self) -> TrialPlan {
        TrialPlan {
            method: self.method,
            batch: self.batch,
            clients: self.clients,
            sync: self.synchronous_commit,
            combo: self.combo,
        }
    }
}

#[cfg(test)]
#[path = "sync_levels_tests.rs"]
mod sync_levels_tests;
#[cfg(test)]
#[path = "summary_tests.rs"]
pub(crate) mod tests;
