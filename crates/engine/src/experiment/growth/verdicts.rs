//! The growth question in the statistics core's words: per measured step, each design's
//! write and read times as a median with its interval, and `ranges` against `snapshot` —
//! `faster`, `slower`, `no significant difference` or `too few trials` — for the write, the
//! warm read and (where measured) the cold read. Seconds: lower is better. Sizes are exact
//! (one reading of the catalog, no noise) and need no verdict; the summary states them.

use serde::{Deserialize, Serialize};

use super::kinds::Design;
use super::report::GrowthStep;
use crate::measure::finding::{Finding, SettingTrials, decide};
use crate::measure::interval::{Estimate, estimate};
use crate::measure::rules::Rules;
use crate::measure::units::{format_count, format_seconds};
use crate::measure::verdict::{Better, Verdict, compare};

/// What was timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timed {
    Write,
    Read,
    ReadCold,
}

impl Timed {
    pub(crate) const ALL: [Timed; 3] = [Timed::Write, Timed::Read, Timed::ReadCold];

    fn values(self, s: &GrowthStep) -> &[f64] {
        match self {
            Timed::Write => &s.write_repeats,
            Timed::Read => &s.read_repeats,
            Timed::ReadCold => &s.read_cold_repeats,
        }
    }
    /// "to write", "to read", "to read cold".
    fn verb(self) -> &'static str {
        match self {
            Timed::Write => "to write",
            Timed::Read => "to read",
            Timed::ReadCold => "to read cold",
        }
    }
    /// "write time", "read time", "cold read time".
    fn noun(self) -> &'static str {
        match self {
            Timed::Write => "write time",
            Timed::Read => "read time",
            Timed::ReadCold => "cold read time",
        }
    }
}

/// One design's timings at one measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepEstimate {
    pub design: Design,
    pub versions: u64,
    pub timed: Timed,
    /// The combination of swept server settings (`--set`; 0 when nothing is swept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    /// Seconds over the repeats: n, median, min, max and the median's interval (stored flat).
    #[serde(flatten)]
    pub seconds: Estimate,
}

/// `ranges` against `snapshot` at one step for one timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignComparison {
    pub versions: u64,
    pub timed: Timed,
    /// The combination of swept server settings both designs ran with.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub combo: usize,
    /// The verdict for `ranges`: `faster` means ranges took less time.
    pub verdict: Verdict,
    /// ranges ÷ snapshot seconds (ratio of geometric means, Welch on logs) with its interval.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub ranges_n: usize,
    pub ranges_median: f64,
    pub snapshot_n: usize,
    pub snapshot_median: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    pub finding: String,
}

/// Seconds for sentences, with sub-millisecond reads still readable.
pub(crate) fn ms(s: f64) -> String {
    if s < 0.001 {
        format!("{:.2} ms", s * 1000.0)
    } else if s < 0.01 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format_seconds(s)
    }
}

/// The estimates of every measured step (in step order, then design, then timing).
pub(crate) fn estimates(steps: &[GrowthStep], rules: &Rules) -> Vec<StepEstimate> {
    let mut out = Vec::new();
    for s in steps.iter().filter(|s| !s.projected) {
        for timed in Timed::ALL {
            if let Some(e) = estimate(timed.values(s), rules.confidence) {
                out.push(StepEstimate {
                    design: s.design,
                    versions: s.versions,
                    timed,
                    combo: s.combo,
                    seconds: e,
                });
            }
        }
    }
    out
}

/// `ranges` against `snapshot` at every step both measured, for every timing both have.
/// With swept server settings (`labels` non-empty), designs are compared within each
/// combination and the finding names it.
pub(crate) fn comparisons(
    steps: &[GrowthStep],
    labels: &[String],
    rules: &Rules,
) -> Vec<DesignComparison> {
    let measured = |d: Design| steps.iter().filter(move |s| s.design == d && !s.projected);
    let mut out = Vec::new();
    for r in measured(Design::Ranges) {
        let Some(s) =
            measured(Design::Snapshot).find(|s| s.versions == r.versions && s.combo == r.combo)
        else {
            continue;
        };
        for timed in Timed::ALL {
            let Some(c) = compare(timed.values(r), timed.values(s), Better::Lower, rules) else {
                continue;
            };
            let at = match labels.get(r.combo).filter(|l| !l.is_empty()) {
                Some(l) => format!("at {} versions with {l}", format_count(r.versions as f64)),
                None => format!("at {} versions", format_count(r.versions as f64)),
            };
            let finding = match c.verdict {
                Verdict::Faster | Verdict::Slower => format!(
                    "{at}: ranges {} {} ({} vs {}; ratio {:.2} [{:.2}, {:.2}])",
                    c.verdict,
                    timed.verb(),
                    ms(c.a.median),
                    ms(c.b.median),
                    c.ratio,
                    c.ratio_low,
                    c.ratio_high
                ),
                Verdict::NoSignificantDifference => format!(
                    "{at}: no significant difference in {} (ranges {} vs snapshot {})",
                    timed.noun(),
                    ms(c.a.median),
                    ms(c.b.median)
                ),
                _ => format!(
                    "{at}: too few trials to compare {}s ({} and {}; at {} {})",
                    timed.noun(),
                    c.a.n,
                    c.b.n,
                    crate::measure::wording::format_level(rules.confidence),
                    match c.trials_needed {
                        Some(n) =>
                            format!("about {n} each would decide, estimated from the spread so far"),
                        None => format!(
                            "more than {} each would be needed at the spread so far",
                            crate::measure::needed::LIMIT
                        ),
                    },
                ),
            };
            out.push(DesignComparison {
                versions: r.versions,
                timed,
                combo: r.combo,
                verdict: c.verdict,
                ratio: c.ratio,
                ratio_low: c.ratio_low,
                ratio_high: c.ratio_high,
                ranges_n: c.a.n,
                ranges_median: c.a.median,
                snapshot_n: c.b.n,
                snapshot_median: c.b.median,
                trials_needed: c.trials_needed,
                finding,
            });
        }
    }
    out
}

/// One design at one step across the combinations of swept server settings (`--set`),
/// decided by the core: the first combination listed counts as the cheapest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingsFinding {
    pub design: Design,
    pub versions: u64,
    pub timed: Timed,
    pub finding: Finding,
    pub sentence: String,
}

/// Every design, step and timing measured under two or more combinations of swept settings.
pub(crate) fn settings_findings(
    steps: &[GrowthStep],
    labels: &[String],
    rules: &Rules,
) -> Vec<SettingsFinding> {
    let mut keys: Vec<(Design, u64)> = steps
        .iter()
        .filter(|s| !s.projected)
        .map(|s| (s.design, s.versions))
        .collect();
    keys.dedup();
    let mut out = Vec::new();
    for (design, versions) in keys {
        let of: Vec<&GrowthStep> = steps
            .iter()
            .filter(|s| !s.projected && s.design == design && s.versions == versions)
            .collect();
        if of.len() < 2 {
            continue;
        }
        for timed in Timed::ALL {
            let mut trials: Vec<SettingTrials> = of
                .iter()
                .filter(|s| !timed.values(s).is_empty())
                .map(|s| SettingTrials {
                    label: labels.get(s.combo).cloned().unwrap_or_default(),
                    cost_rank: s.combo,
                    values: timed.values(s).to_vec(),
                    ..SettingTrials::default()
                })
                .collect();
            trials.sort_by_key(|t| t.cost_rank);
            if trials.len() < 2 {
                continue;
            }
            let finding = decide(&trials, Better::Lower, rules);
            let sentence = format!(
                "{} {} at {} versions: {}",
                design.as_str(),
                timed.noun(),
                format_count(versions as f64),
                finding.sentence_with(&ms)
            );
            out.push(SettingsFinding {
                design,
                versions,
                timed,
                finding,
                sentence,
            });
        }
    }
    out
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(design: Design, versions: u64, writes: &[f64], reads: &[f64]) -> GrowthStep {
        GrowthStep {
            pairs: 0,
            write_repeats: writes.to_vec(),
            read_repeats: reads.to_vec(),
            ..GrowthStep::blank(design, versions, 0)
        }
    }

    const W: [f64; 5] = [2.0, 2.02, 1.98, 2.01, 1.99];

    #[test]
    fn designs_are_compared_per_step_in_the_vocabulary() {
        let reads_s: Vec<f64> = W.iter().map(|x| x * 0.003).collect();
        let reads_r: Vec<f64> = W.iter().map(|x| x * 0.0005).collect();
        let writes_r: Vec<f64> = W.iter().rev().map(|x| x * 1.01).collect();
        let steps = [
            step(Design::Snapshot, 10_000, &W, &reads_s),
            step(Design::Ranges, 10_000, &writes_r, &reads_r),
            step(Design::Snapshot, 0, &W[..3], &W[..3]),
            step(Design::Ranges, 0, &W[..3], &W[..3]),
        ];
        let rules = Rules::default();
        let c = comparisons(&steps, &[], &rules);
        assert_eq!(c.len(), 4, "write and read at two steps; no cold reads");
        assert_eq!(c[0].timed, Timed::Write);
        assert_eq!(c[0].verdict, Verdict::NoSignificantDifference);
        assert!(
            c[0].finding
                .starts_with("at 10k versions: no significant difference in write time"),
            "{}",
            c[0].finding
        );
        assert_eq!(c[1].verdict, Verdict::Faster);
        assert!(
            c[1].finding.starts_with(
                "at 10k versions: ranges faster to read (1.0 ms vs 6.0 ms; ratio 0.17 ["
            ),
            "{}",
            c[1].finding
        );
        // Three identical trials a side, 1% spread: shown within 5% from three each.
        assert_eq!(c[2].verdict, Verdict::NoSignificantDifference);
        assert!(
            c[2].finding
                .starts_with("at 0 versions: no significant difference in write time"),
            "{}",
            c[2].finding
        );
        let e = estimates(&steps, &rules);
        assert_eq!(e.len(), 8);
        assert_eq!((e[0].seconds.n, e[0].seconds.median), (5, 2.0));
        let json = serde_json::to_value(&c[1]).unwrap();
        assert_eq!(json["verdict"], "faster");
        assert_eq!(json["timed"], "read");
    }
}
