//! `history compare`: a baseline run and a candidate of the same experiment, setting by
//! setting, on the statistics core ([`crate::measure::verdict`]).
//!
//! Each setting both runs measured ([`settings`]) gets both medians with their intervals,
//! the ratio candidate/baseline with its interval, and a verdict for the candidate in the
//! fixed words: `faster`, `slower`, `no significant difference`, `too few trials` (fewer than
//! 3 on either side, with how many would decide), or `not comparable` when the runs differ
//! in a condition besides the settings compared ([`conditions`]: rows, payload, server
//! settings, host…). The rules (confidence, smallest effect) are the candidate run's own
//! `decision` unless the caller gives others. One line counts the verdicts ([`sentence`]).

pub(crate) mod conditions;
mod host_load;
pub(crate) mod sentence;
pub(crate) mod settings;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::experiment::lab::decision::DecisionParams;
use crate::experiment::{ExperimentKind, Outcome, RunReport};
use crate::measure::interval::Estimate;
use crate::measure::rules::Rules;
use crate::measure::verdict::{self, Better, Verdict};

pub use conditions::{Difference, Role};

/// Which run is which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: String,
    pub started_at: DateTime<Utc>,
    pub preset: Option<String>,
    pub target: String,
    pub outcome: Outcome,
}

impl RunRef {
    fn of(r: &RunReport) -> RunRef {
        RunRef {
            run_id: r.run_id.clone(),
            started_at: r.started_at,
            preset: r.preset.clone(),
            target: r.target.clone(),
            outcome: r.outcome,
        }
    }
}

/// Which run a setting ran in, when only one did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Baseline,
    Candidate,
}

/// One setting compared. The ratio and verdict are there when both runs measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingComparison {
    /// e.g. "random · 0 workers · 16MB", "copy · batch 256 · 1 client · sync on".
    pub setting: String,
    /// What was measured: "seconds", "rows/s", "write seconds", "read seconds".
    pub metric: String,
    pub better: Better,
    /// Median, interval and n of each side (None: not run there).
    pub baseline: Option<Estimate>,
    pub candidate: Option<Estimate>,
    /// Candidate / baseline (ratio of geometric means, Welch on logs) with its interval.
    pub ratio: Option<f64>,
    pub ratio_low: Option<f64>,
    pub ratio_high: Option<f64>,
    /// Coverage actually reached by `[ratio_low, ratio_high]` (below the rules' confidence
    /// only with too few trials).
    pub level: Option<f64>,
    /// The verdict for the candidate: `faster` means the candidate is better. None when the
    /// setting ran in one run only.
    pub verdict: Option<Verdict>,
    /// For `too few trials`: about how many trials per side would decide (estimated from the
    /// spread so far; see `measure::needed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    /// For a setting run in one run only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_in: Option<Side>,
}

impl SettingComparison {
    /// How many times better or worse the candidate is, as people say it (2.0 for "2.0×
    /// faster" and for "2.0× slower").
    pub(crate) fn factor(&self) -> Option<f64> {
        let r = self.ratio.filter(|r| *r > 0.0 && r.is_finite())?;
        Some(if r >= 1.0 { r } else { 1.0 / r })
    }
}

/// How many settings got each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub faster: usize,
    pub slower: usize,
    pub no_significant_difference: usize,
    pub too_few_trials: usize,
    pub not_comparable: usize,
    /// Settings run in one of the runs only.
    pub unmatched: usize,
}

impl Counts {
    fn of(settings: &[SettingComparison]) -> Counts {
        let mut c = Counts::default();
        for s in settings {
            match s.verdict {
                Some(Verdict::Faster) => c.faster += 1,
                Some(Verdict::Slower) => c.slower += 1,
                Some(Verdict::NoSignificantDifference) => c.no_significant_difference += 1,
                Some(Verdict::TooFewTrials) => c.too_few_trials += 1,
                Some(Verdict::NotComparable) => c.not_comparable += 1,
                None => c.unmatched += 1,
            }
        }
        c
    }

    /// Settings both runs measured.
    pub fn matched(&self) -> usize {
        self.faster
            + self.slower
            + self.no_significant_difference
            + self.too_few_trials
            + self.not_comparable
    }
}

/// A baseline and a candidate run, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub experiment: ExperimentKind,
    pub baseline: RunRef,
    pub candidate: RunRef,
    /// The rules every verdict used.
    pub rules: Rules,
    /// Where they came from: "the candidate run" or "the command line".
    pub rules_from: String,
    /// Everything that differs between the runs, each with its role.
    pub differences: Vec<Difference>,
    /// The differing conditions ("rows 200k vs 2M"); when any, every verdict is
    /// `not comparable`.
    pub not_comparable: Vec<String>,
    pub settings: Vec<SettingComparison>,
    pub counts: Counts,
    /// Things to know when reading the numbers (partial runs, reads kept as medians…).
    pub notes: Vec<String>,
    /// One line: what the comparison says.
    pub verdict: String,
}

/// How to compare: rules other than the candidate's, and differences that are the point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// None: the candidate run's `confidence` and `min-effect`.
    pub rules: Option<Rules>,
    /// Differences (a parameter, server setting or host field by name) that are what is
    /// being compared, so they do not make the runs `not comparable`.
    pub vary: Vec<String>,
}

/// The decision parameters a run was made with.
pub fn decision(r: &RunReport) -> DecisionParams {
    r.body.facts().decision()
}

/// Compare `baseline` with `candidate` under the candidate's own rules.
pub fn compare(baseline: &RunReport, candidate: &RunReport) -> Result<Comparison, String> {
    compare_with(baseline, candidate, &Options::default())
}

/// Compare `baseline` with `candidate`. Fails only when they are different experiments.
pub fn compare_with(
    baseline: &RunReport,
    candidate: &RunReport,
    options: &Options,
) -> Result<Comparison, String> {
    if baseline.kind() != candidate.kind() {
        return Err(format!(
            "run {} is {} and run {} is {}: compare two runs of the same experiment",
            baseline.run_id,
            baseline.kind(),
            candidate.run_id,
            candidate.kind()
        ));
    }
    // One look at two finished runs: the rules of a fixed count, whatever repeat the runs used.
    let (rules, rules_from) = match options.rules {
        Some(r) => (r.fixed(), "the command line"),
        None => (decision(candidate).rules(), "the candidate run"),
    };
    let differences = conditions::differences(baseline, candidate, &options.vary);
    let not_comparable = conditions::reasons(&differences);

    let base = settings::samples(baseline);
    let cand = settings::samples(candidate);
    let mut out = Vec::new();
    for b in &base {
        let c = cand.iter().find(|c| c.key == b.key);
        out.push(setting(b, c, &rules, &not_comparable));
    }
    for c in cand.iter().filter(|c| !base.iter().any(|b| b.key == c.key)) {
        out.push(only(c, Side::Candidate, &rules));
    }

    let mut notes = Vec::new();
    for (r, which) in [(baseline, "baseline"), (candidate, "candidate")] {
        if r.outcome != Outcome::Finished {
            notes.push(format!(
                "the {which} run {}: only the trials it finished are compared",
                r.outcome.as_str()
            ));
        }
    }
    let median_only_reads = |r: &RunReport| match &r.body {
        crate::experiment::ReportBody::Growth(g) => g
            .steps
            .iter()
            .any(|s| !s.projected && s.read_seconds.is_some() && s.read_repeats.is_empty()),
        _ => false,
    };
    if median_only_reads(baseline) || median_only_reads(candidate) {
        notes.push(
            "a growth record from before reads were kept one by one has only the median of a step's reads, so each such read counts as one trial"
                .into(),
        );
    }
    for v in &options.vary {
        if !differences.iter().any(|d| &d.name == v) {
            notes.push(format!("--vary {v}: the two runs do not differ in it"));
        }
    }

    let counts = Counts::of(&out);
    let mut verdict = sentence::overall(&out, &counts, &not_comparable, &rules);
    if let Some(h) = host_load::differed(baseline, candidate) {
        verdict = format!("{h}; {verdict}");
    }
    Ok(Comparison {
        experiment: baseline.kind(),
        baseline: RunRef::of(baseline),
        candidate: RunRef::of(candidate),
        rules,
        rules_from: rules_from.into(),
        differences,
        not_comparable,
        settings: out,
        counts,
        notes,
        verdict,
    })
}

fn estimate(values: &[f64], rules: &Rules) -> Option<Estimate> {
    let usable: Vec<f64> = values
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    crate::measure::interval::estimate(&usable, rules.confidence)
}

/// A setting measured in one run only.
fn only(s: &settings::Sample, side: Side, rules: &Rules) -> SettingComparison {
    let e = estimate(&s.values, rules);
    SettingComparison {
        setting: s.label.clone(),
        metric: s.metric.name.into(),
        better: s.metric.better,
        baseline: e.filter(|_| side == Side::Baseline),
        candidate: e.filter(|_| side == Side::Candidate),
        ratio: None,
        ratio_low: None,
        ratio_high: None,
        level: None,
        verdict: None,
        trials_needed: None,
        only_in: Some(side),
    }
}

/// A setting of the baseline against the same setting of the candidate, if it ran there.
fn setting(
    b: &settings::Sample,
    c: Option<&settings::Sample>,
    rules: &Rules,
    not_comparable: &[String],
) -> SettingComparison {
    let Some(c) = c else {
        return only(b, Side::Baseline, rules);
    };
    // A = candidate, B = baseline: the verdict and the ratio are the candidate's.
    match verdict::compare(&c.values, &b.values, b.metric.better, rules) {
        Some(v) => {
            let v = v.with_differences(not_comparable.to_vec());
            SettingComparison {
                setting: b.label.clone(),
                metric: b.metric.name.into(),
                better: b.metric.better,
                baseline: Some(v.b),
                candidate: Some(v.a),
                ratio: Some(v.ratio),
                ratio_low: Some(v.ratio_low),
                ratio_high: Some(v.ratio_high),
                level: Some(v.level),
                verdict: Some(v.verdict),
                trials_needed: v.trials_needed,
                only_in: None,
            }
        }
        // No usable trial on a side (all zero or failed): nothing to judge.
        None => {
            let verdict = if not_comparable.is_empty() {
                Verdict::TooFewTrials
            } else {
                Verdict::NotComparable
            };
            SettingComparison {
                setting: b.label.clone(),
                metric: b.metric.name.into(),
                better: b.metric.better,
                baseline: estimate(&b.values, rules),
                candidate: estimate(&c.values, rules),
                ratio: None,
                ratio_low: None,
                ratio_high: None,
                level: None,
                verdict: Some(verdict),
                trials_needed: (verdict == Verdict::TooFewTrials)
                    .then_some(crate::measure::verdict::MIN_TRIALS),
                only_in: None,
            }
        }
    }
}
