//! The seed's question at cluster scale: the snapshot table distributed by version against
//! the same table distributed by content — what each choice does to writing one version (one
//! shard against every shard), to reading one version (a single-shard read against a
//! fan-out) and to the size on each node. Times are judged by the statistics core only.

use super::kinds::Design;
use super::report::GrowthStep;
use super::verdicts::ms;
use crate::measure::rules::Rules;
use crate::measure::units::{format_bytes_short, format_count};
use crate::measure::verdict::{Better, Verdict, compare};

/// "127.0.0.1:9701 3.1 MB, 127.0.0.1:9702 2.4 MB".
pub fn per_node(s: &GrowthStep) -> String {
    s.node_bytes
        .iter()
        .map(|n| format!("{} {}", n.node, format_bytes_short(n.bytes as f64)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Findings at the largest step both distributions measured (none when the run did not
/// distribute the table both ways).
pub fn findings(steps: &[GrowthStep], rules: &Rules) -> Vec<String> {
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
