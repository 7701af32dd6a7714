//! Comparing a baseline run with a candidate of the same experiment: what differed around
//! them (parameters, server settings, host) first, then each trial key's median side by side,
//! the ratio, and whether the difference is larger than the runs' own noise.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::experiment::index_build::IndexBuildReport;
use crate::experiment::spec::spec_params;
use crate::experiment::{ExperimentKind, Outcome, ReportBody, RunReport};
use crate::measure::units::format_seconds;

/// Relative noise assumed for a run without repeats (run-to-run noise on the machines pglab
/// was measured on is 5–15%).
pub const SINGLE_RUN_NOISE: f64 = 0.10;

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

/// Something that differs between the two runs (None: absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    pub name: String,
    pub baseline: Option<String>,
    pub candidate: Option<String>,
}

/// Median, min and max over the repeats of one trial key.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Stat {
    /// The run's own noise at this key: the spread of its repeats, or an assumed share of the
    /// median when there was only one.
    pub fn noise(&self) -> f64 {
        if self.n > 1 {
            self.max - self.min
        } else {
            self.median.abs() * SINGLE_RUN_NOISE
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// The candidate is better by more than both runs' noise.
    Better,
    Worse,
    /// Within noise.
    Same,
    OnlyBaseline,
    OnlyCandidate,
}

/// One trial key compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparedPoint {
    /// e.g. "random · 0 workers · 16MB".
    pub key: String,
    pub baseline: Option<Stat>,
    pub candidate: Option<Stat>,
    /// candidate median / baseline median.
    pub ratio: Option<f64>,
    pub judgement: Judgement,
}

impl ComparedPoint {
    /// How many times better (> 1) or worse the candidate is, as people say it ("2.0× faster").
    pub fn factor(&self, lower_is_better: bool) -> Option<f64> {
        let r = self.ratio?;
        if r <= 0.0 {
            return None;
        }
        let better_ratio = if lower_is_better { 1.0 / r } else { r };
        Some(if better_ratio >= 1.0 {
            better_ratio
        } else {
            1.0 / better_ratio
        })
    }
}

/// A baseline and a candidate run, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub experiment: ExperimentKind,
    pub baseline: RunRef,
    pub candidate: RunRef,
    /// What is compared, e.g. "CREATE INDEX time (median)".
    pub metric: String,
    pub unit: String,
    pub lower_is_better: bool,
    pub parameter_differences: Vec<Difference>,
    pub server_differences: Vec<Difference>,
    pub host_differences: Vec<Difference>,
    pub points: Vec<ComparedPoint>,
    pub better: usize,
    pub worse: usize,
    pub same: usize,
    pub unmatched: usize,
    /// True when a run had no repeats and its noise was assumed ([`SINGLE_RUN_NOISE`]).
    pub assumed_noise: bool,
    /// One line: what the comparison says.
    pub verdict: String,
}

/// One key's measurements in one run.
struct KeyedStat {
    key: String,
    stat: Stat,
}

fn index_build_points(b: &IndexBuildReport) -> Vec<KeyedStat> {
    let mut report = b.clone();
    if report.summary.groups.is_empty() && !report.trials.is_empty() {
        report.summarize(&[]);
    }
    let mut out = Vec::new();
    for g in &report.summary.groups {
        for m in &g.by_mwm {
            out.push(KeyedStat {
                key: format!(
                    "{} · {} workers · {}",
                    g.order.name(),
                    g.workers,
                    m.maintenance_work_mem
                ),
                stat: Stat {
                    median: m.median,
                    min: m.min,
                    max: m.max,
                    n: m.n,
                },
            });
        }
    }
    out
}

/// Flatten a JSON object's scalars to text (nested objects as `a.b`).
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        serde_json::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        serde_json::Value::Null => {}
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

fn differences(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    prefix: &str,
) -> Vec<Difference> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| Difference {
            name: format!("{prefix}{k}"),
            baseline: a.get(k).cloned(),
            candidate: b.get(k).cloned(),
        })
        .collect()
}

fn flat_of<T: Serialize>(v: &T) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(j) = serde_json::to_value(v) {
        flatten("", &j, &mut out);
    }
    out
}

/// Compare `baseline` with `candidate`. Fails when they are different experiments or the
/// experiment has no comparison yet.
pub fn compare(baseline: &RunReport, candidate: &RunReport) -> Result<Comparison, String> {
    if baseline.kind() != candidate.kind() {
        return Err(format!(
            "run {} is {} and run {} is {}: compare two runs of the same experiment",
            baseline.run_id,
            baseline.kind(),
            candidate.run_id,
            candidate.kind()
        ));
    }
    let (metric, unit, lower_is_better, base_points, cand_points) =
        match (&baseline.body, &candidate.body) {
            (ReportBody::IndexBuild(a), ReportBody::IndexBuild(b)) => (
                "CREATE INDEX time (median of the repeats)",
                "s",
                true,
                index_build_points(a),
                index_build_points(b),
            ),
            _ => {
                return Err(format!(
                    "comparing {} runs is not available in this build yet",
                    baseline.kind()
                ));
            }
        };

    let parameter_differences = differences(
        &spec_params(&baseline.spec_key),
        &spec_params(&candidate.spec_key),
        "",
    );
    let mut server_differences = Vec::new();
    match (&baseline.server, &candidate.server) {
        (Some(a), Some(b)) => {
            let mut fa = flat_of(a);
            let mut fb = flat_of(b);
            // Settings by their own names, the rest as they are.
            let sa: BTreeMap<String, String> = a.settings.clone();
            let sb: BTreeMap<String, String> = b.settings.clone();
            fa.retain(|k, _| !k.starts_with("settings."));
            fb.retain(|k, _| !k.starts_with("settings."));
            server_differences.extend(differences(&fa, &fb, "server "));
            server_differences.extend(differences(&sa, &sb, ""));
        }
        (a, b) if a.is_some() != b.is_some() => server_differences.push(Difference {
            name: "server".into(),
            baseline: a.as_ref().map(|s| s.version.clone()),
            candidate: b.as_ref().map(|s| s.version.clone()),
        }),
        _ => {}
    }
    if baseline.pglab_version != candidate.pglab_version {
        server_differences.push(Difference {
            name: "pglab version".into(),
            baseline: Some(baseline.pglab_version.clone()),
            candidate: Some(candidate.pglab_version.clone()),
        });
    }
    let host_differences = differences(&flat_of(&baseline.host), &flat_of(&candidate.host), "");

    let mut points: Vec<ComparedPoint> = Vec::new();
    let mut assumed_noise = false;
    for b in &base_points {
        let c = cand_points.iter().find(|c| c.key == b.key).map(|c| c.stat);
        if b.stat.n <= 1 || c.is_some_and(|c| c.n <= 1) {
            assumed_noise |= c.is_some();
        }
        points.push(judge(&b.key, Some(b.stat), c, lower_is_better));
    }
    for c in cand_points
        .iter()
        .filter(|c| !base_points.iter().any(|b| b.key == c.key))
    {
        points.push(judge(&c.key, None, Some(c.stat), lower_is_better));
    }
    let count = |j: Judgement| points.iter().filter(|p| p.judgement == j).count();
    let (better, worse, same) = (
        count(Judgement::Better),
        count(Judgement::Worse),
        count(Judgement::Same),
    );
    let unmatched = count(Judgement::OnlyBaseline) + count(Judgement::OnlyCandidate);
    let verdict = verdict(&points, lower_is_better, unit, assumed_noise);
    Ok(Comparison {
        experiment: baseline.kind(),
        baseline: RunRef::of(baseline),
        candidate: RunRef::of(candidate),
        metric: metric.into(),
        unit: unit.into(),
        lower_is_better,
        parameter_differences,
        server_differences,
        host_differences,
        points,
        better,
        worse,
        same,
        unmatched,
        assumed_noise,
        verdict,
    })
}

fn judge(
    key: &str,
    baseline: Option<Stat>,
    candidate: Option<Stat>,
    lower_is_better: bool,
) -> ComparedPoint {
    let (ratio, judgement) = match (baseline, candidate) {
        (Some(b), Some(c)) => {
            let ratio = (b.median != 0.0).then(|| c.median / b.median);
            let diff = c.median - b.median;
            // Beyond both runs' own noise, or it is not a difference.
            let j = if diff.abs() <= b.noise().max(c.noise()) {
                Judgement::Same
            } else if (diff < 0.0) == lower_is_better {
                Judgement::Better
            } else {
                Judgement::Worse
            };
            (ratio, j)
        }
        (Some(_), None) => (None, Judgement::OnlyBaseline),
        _ => (None, Judgement::OnlyCandidate),
    };
    ComparedPoint {
        key: key.to_string(),
        baseline,
        candidate,
        ratio,
        judgement,
    }
}

fn value(v: f64, unit: &str) -> String {
    if unit == "s" {
        format_seconds(v)
    } else {
        format!("{v:.3} {unit}")
    }
}

/// The strongest example of a judgement: "2.0× at random · 0 workers · 16MB (11.6 s → 5.8 s)".
fn strongest(points: &[ComparedPoint], j: Judgement, lower: bool, unit: &str) -> Option<String> {
    let p = points.iter().filter(|p| p.judgement == j).max_by(|a, b| {
        a.factor(lower)
            .unwrap_or(1.0)
            .total_cmp(&b.factor(lower).unwrap_or(1.0))
    })?;
    let (b, c) = (p.baseline?, p.candidate?);
    Some(format!(
        "up to {:.2}× at {} ({} → {})",
        p.factor(lower)?,
        p.key,
        value(b.median, unit),
        value(c.median, unit)
    ))
}

fn verdict(points: &[ComparedPoint], lower: bool, unit: &str, assumed: bool) -> String {
    let n = |j| points.iter().filter(|p| p.judgement == j).count();
    let (better, worse, same) = (
        n(Judgement::Better),
        n(Judgement::Worse),
        n(Judgement::Same),
    );
    let common = better + worse + same;
    let unmatched = points.len() - common;
    let (good, bad) = if lower {
        ("faster", "slower")
    } else {
        ("better", "worse")
    };
    let mut s = if common == 0 {
        "nothing to compare: the two runs share no trial settings".to_string()
    } else if better == 0 && worse == 0 {
        format!("no difference beyond noise: all {common} settings are within the runs' own spread")
    } else if worse == 0 {
        format!(
            "candidate {good} on {better} of {common} settings ({}), the rest within noise",
            strongest(points, Judgement::Better, lower, unit).unwrap_or_default()
        )
    } else if better == 0 {
        format!(
            "candidate {bad} on {worse} of {common} settings ({}), the rest within noise",
            strongest(points, Judgement::Worse, lower, unit).unwrap_or_default()
        )
    } else {
        format!(
            "mixed: candidate {good} on {better} ({}), {bad} on {worse} ({}), the same on {same} of {common} settings",
            strongest(points, Judgement::Better, lower, unit).unwrap_or_default(),
            strongest(points, Judgement::Worse, lower, unit).unwrap_or_default()
        )
    };
    if unmatched > 0 {
        s.push_str(&format!(
            "; {unmatched} settings ran in only one of the runs"
        ));
    }
    if assumed && common > 0 {
        s.push_str(&format!(
            "; runs without repeats were given {:.0}% noise",
            SINGLE_RUN_NOISE * 100.0
        ));
    }
    s
}
