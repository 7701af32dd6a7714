//! The seed's question at cluster scale: first the one a DBA asks — the plain table against
//! the same table distributed by version and by content, each judged by the statistics core
//! for writing and for reading one version — then the two distributions against each other:
//! what each does to writing one version (one shard against every shard), to reading one
//! version (a single-shard read against a fan-out) and to the size on each node.

use serde::{Deserialize, Serialize};

use super::kinds::Design;
use super::report::GrowthStep;
use super::verdicts::{Timed, ms};
use crate::measure::rules::Rules;
use crate::measure::units::{format_bytes_short, format_count};
use crate::measure::verdict::{Better, Verdict, compare};

/// A distributed snapshot table against the plain one at one step, for one timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardComparison {
    /// The distributed design (`snapshot-by-version` or `snapshot-by-content`).
    pub design: Design,
    pub versions: u64,
    pub timed: Timed,
    /// The verdict for the distributed table: `slower` means it took longer than the plain one.
    pub verdict: Verdict,
    /// distributed ÷ plain seconds (ratio of geometric means, Welch on logs) with its interval.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub median: f64,
    pub plain_median: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    pub finding: String,
}

/// Why a distributed table writes or reads differently from the plain one.
fn why(design: Design, timed: Timed) -> &'static str {
    match (design, timed) {
        (Design::SnapshotByVersion, Timed::Write) => {
            "the coordinator routes a version's rows to the one shard that holds it and commits on its worker"
        }
        (Design::SnapshotByVersion, _) => {
            "the coordinator routes the read to the one shard that holds the version"
        }
        (_, Timed::Write) => {
            "a version's rows go to every shard, and the commit reaches every worker (two-phase)"
        }
        _ => "every read fans out to every shard and the coordinator gathers the rows",
    }
}

/// Each distributed table against the plain one at the largest step both measured (under the
/// first combination of swept settings), for writing and for reading one version.
pub(crate) fn against_plain(steps: &[GrowthStep], rules: &Rules) -> Vec<ShardComparison> {
    let measured = |d: Design| {
        steps
            .iter()
            .filter(move |s| s.design == d && !s.projected && s.versions > 0 && s.combo == 0)
    };
    let mut out = Vec::new();
    for design in [Design::SnapshotByVersion, Design::SnapshotByContent] {
        let Some((d, p)) = measured(design)
            .filter_map(|d| {
                measured(Design::Snapshot)
                    .find(|p| p.versions == d.versions)
                    .map(|p| (d, p))
            })
            .next_back()
        else {
            continue;
        };
        for timed in [Timed::Write, Timed::Read] {
            let (a, b) = match timed {
                Timed::Write => (&d.write_repeats, &p.write_repeats),
                _ => (&d.read_repeats, &p.read_repeats),
            };
            let Some(c) = compare(a, b, Better::Lower, rules) else {
                continue;
            };
            let at = format!(
                "at {} versions, {} one version",
                format_count(d.versions as f64),
                if timed == Timed::Write {
                    "writing"
                } else {
                    "reading"
                }
            );
            let finding = match c.verdict {
                Verdict::Faster | Verdict::Slower => format!(
                    "{at}: {} is {} than the plain table ({} vs {}; ratio {:.2} [{:.2}, {:.2}]): {}",
                    design.as_str(),
                    c.verdict,
                    ms(c.a.median),
                    ms(c.b.median),
                    c.ratio,
                    c.ratio_low,
                    c.ratio_high,
                    why(design, timed)
                ),
                Verdict::NoSignificantDifference => format!(
                    "{at}: no significant difference between {} ({}) and the plain table ({})",
                    design.as_str(),
                    ms(c.a.median),
                    ms(c.b.median)
                ),
                _ => format!(
                    "{at}: too few trials to compare {} ({}, n={}) with the plain table ({}, n={}); {} each needed",
                    design.as_str(),
                    ms(c.a.median),
                    c.a.n,
                    ms(c.b.median),
                    c.b.n,
                    c.trials_needed.unwrap_or(3)
                ),
            };
            out.push(ShardComparison {
                design,
                versions: d.versions,
                timed,
                verdict: c.verdict,
                ratio: c.ratio,
                ratio_low: c.ratio_low,
                ratio_high: c.ratio_high,
                median: c.a.median,
                plain_median: c.b.median,
                trials_needed: c.trials_needed,
                finding,
            });
        }
    }
    out
}

/// "127.0.0.1:9701 3.1 MB, 127.0.0.1:9702 2.4 MB".
pub(crate) fn per_node(s: &GrowthStep) -> String {
    s.node_bytes
        .iter()
        .map(|n| format!("{} {}", n.node, format_bytes_short(n.bytes as f64)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Findings at the largest step both distributions measured (none when the run did not
/// distribute the table both ways).
pub(crate) fn findings(steps: &[GrowthStep], rules: &Rules) -> Vec<String> {
    let measured = |d: Design| {
        steps
            .iter()
            .filter(move |s| s.design == d && !s.projected && s.versions > 0)
    };
    let Some((v, c)) = measured(Design::SnapshotByVersion)
        .filter_map(|v| {
            measured(Design::SnapshotByContent)
                .find(|c| c.versions == v.versions)
                .map(|c| (v, c))
        })
        .next_back()
    else {
        return Vec::new();
    };
    let at = format!("at {} versions", format_count(v.versions as f64));
    let mut out = Vec::new();
    let timings: [(&str, &[f64], &[f64], &str); 2] = [
        (
            "writing one version",
            &c.write_repeats,
            &v.write_repeats,
            "by version a version's rows go to one shard, by content to every shard",
        ),
        (
            "reading one version",
            &c.read_repeats,
            &v.read_repeats,
            "by version the read is routed to one shard, by content it fans out to every shard",
        ),
    ];
    for (what, by_content, by_version, why) in timings {
        let Some(cmp) = compare(by_content, by_version, Better::Lower, rules) else {
            continue;
        };
        let sentence = match cmp.verdict {
            Verdict::Faster | Verdict::Slower => format!(
                "{at}, {what}: distributed by content is {} than by version ({} vs {}; ratio {:.2} [{:.2}, {:.2}]): {why}",
                cmp.verdict,
                ms(cmp.a.median),
                ms(cmp.b.median),
                cmp.ratio,
                cmp.ratio_low,
                cmp.ratio_high
            ),
            Verdict::NoSignificantDifference => format!(
                "{at}, {what}: no significant difference between by content ({}) and by version ({}); {why}",
                ms(cmp.a.median),
                ms(cmp.b.median)
            ),
            _ => format!(
                "{at}, {what}: too few trials to compare by content ({}, n={}) with by version ({}, n={}); {}",
                ms(cmp.a.median),
                cmp.a.n,
                ms(cmp.b.median),
                cmp.b.n,
                match cmp.trials_needed {
                    Some(n) =>
                        format!("about {n} each would decide (estimated from the spread so far)"),
                    None => "more than 100 each would be needed at the spread so far".into(),
                }
            ),
        };
        out.push(sentence);
    }
    out.push(format!(
        "{at}, size per node: by version {}; by content {} (by version a node holds whole versions, so the split follows which versions hash where; by content every node holds a share of every version)",
        per_node(v),
        per_node(c)
    ));
    out
}
