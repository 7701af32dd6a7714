//! The growth decision on a Citus cluster, the question a DBA asks first: the plain table or a
//! distributed one, and distributed by what? Each distributed snapshot table is judged against
//! the plain one by the statistics core (writing and reading one version at the largest step
//! both measured); the sentence names what the verdicts support, says what cannot be said
//! yet, and puts the size each node holds beside it (the reason to distribute at all).

use crate::experiment::RunReport;
use crate::experiment::growth::{Design, GrowthReport, GrowthStep, ShardComparison, Timed};
use crate::measure::units::{format_bytes_short, format_count};
use crate::measure::verdict::Verdict;

use super::recommend::Recommendation;

/// How one distributed table fared against the plain one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fared {
    /// Slower on some timing, faster on none.
    Worse,
    /// Faster on some timing, slower on none.
    Better,
    /// Shown equivalent on every timing.
    Same,
    /// Slower on one, faster on another.
    Mixed,
    /// A timing is undecided (too few trials).
    Open,
}

fn fared(cmps: &[&ShardComparison]) -> Fared {
    let has = |v: Verdict| cmps.iter().any(|c| c.verdict == v);
    match (has(Verdict::Slower), has(Verdict::Faster)) {
        (true, true) => Fared::Mixed,
        (true, false) => Fared::Worse,
        (false, true) if !has(Verdict::TooFewTrials) => Fared::Better,
        _ if cmps
            .iter()
            .any(|c| c.verdict != Verdict::NoSignificantDifference) =>
        {
            Fared::Open
        }
        _ => Fared::Same,
    }
}

/// "writing 4.52× [3.9, 5.2] the plain table's time (145 ms vs 32 ms), reading …".
fn timings(cmps: &[&ShardComparison]) -> String {
    cmps.iter()
        .map(|c| {
            let what = if c.timed == Timed::Write {
                "writing"
            } else {
                "reading"
            };
            match c.verdict {
                Verdict::Faster | Verdict::Slower => format!(
                    "{what} {} ({:.2}× the plain table's time [{:.2}, {:.2}], {} vs {})",
                    c.verdict,
                    c.ratio,
                    c.ratio_low,
                    c.ratio_high,
                    super::growth::time(c.median),
                    super::growth::time(c.plain_median)
                ),
                Verdict::NoSignificantDifference => {
                    format!("{what} no significant difference")
                }
                v => format!(
                    "{what} {v}{}",
                    c.trials_needed
                        .map(|n| format!(" ({n} each would decide)"))
                        .unwrap_or_default()
                ),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "on 2 nodes, at most 3.1 MB on one" for a distributed step.
fn spread(s: &GrowthStep) -> String {
    match s.node_bytes.iter().map(|n| n.bytes).max() {
        Some(most) => format!(
            "{} over {} node{}, at most {} on one",
            format_bytes_short(s.total_bytes() as f64),
            s.node_bytes.len(),
            if s.node_bytes.len() == 1 { "" } else { "s" },
            format_bytes_short(most as f64)
        ),
        None => format_bytes_short(s.total_bytes() as f64),
    }
}

pub(crate) fn recommendations(report: &RunReport, b: &GrowthReport) -> Vec<Recommendation> {
    let cmps = &b.summary.distributed;
    let Some(at) = cmps.iter().map(|c| c.versions).max() else {
        return Vec::new();
    };
    let step = |d: Design| {
        b.steps
            .iter()
            .find(|s| s.design == d && s.versions == at && !s.projected && s.combo == 0)
    };
    let designs: Vec<Design> = [Design::SnapshotByVersion, Design::SnapshotByContent]
        .into_iter()
        .filter(|d| cmps.iter().any(|c| c.design == *d && c.versions == at))
        .collect();
    let mut each = Vec::new();
    let mut verdicts = Vec::new();
    for &d in &designs {
        let of: Vec<&ShardComparison> = cmps
            .iter()
            .filter(|c| c.design == d && c.versions == at)
            .collect();
        verdicts.push((d, fared(&of)));
        each.push(format!(
            "{}: {}{}",
            d.as_str(),
            timings(&of),
            step(d)
                .map(|s| format!("; it holds {}", spread(s)))
                .unwrap_or_default()
        ));
    }
    let plain = step(Design::Snapshot)
        .map(|s| {
            format!(
                " The plain table holds {} on the coordinator.",
                format_bytes_short(s.total_bytes() as f64)
            )
        })
        .unwrap_or_default();
    let better: Vec<&str> = verdicts
        .iter()
        .filter(|(_, f)| *f == Fared::Better)
        .map(|(d, _)| d.as_str())
        .collect();
    let head = format!(
        "At {} versions, against the plain table",
        format_count(at as f64)
    );
    let verdict = if verdicts.iter().any(|(_, f)| *f == Fared::Open) {
        "Plain or distributed cannot be said yet for every table: more repeats (--repeat auto) would decide it.".to_string()
    } else if verdicts.iter().all(|(_, f)| *f == Fared::Worse) {
        "The evidence points to the **plain table** at this size: every distribution tried is slower on something measured and was shown faster on nothing. Distribute when one server can no longer hold or serve the table, and then by the column your hot path reads and writes by.".to_string()
    } else if better.len() == 1 {
        format!(
            "The evidence points to **{}**: it is faster than the plain table on some timing, slower on none, and decided on every one.",
            better[0]
        )
    } else if verdicts.iter().all(|(_, f)| *f == Fared::Same) {
        "No design is named on time: every distribution tried shows no significant difference from the plain table; distribution is then a question of capacity, not speed.".to_string()
    } else {
        "A trade-off, not a winner: the distributions differ from the plain table in opposite directions on different timings; choose by which of writing or reading a version is your hot path.".to_string()
    };
    let shared = match &report.server {
        Some(s) if s.sandbox => {
            " Every node of pglab's sandbox cluster runs on this machine and shares its cores and disk, so distribution cannot add capacity here: on separate machines each worker brings its own."
        }
        _ => "",
    };
    vec![Recommendation {
        text: format!("{head} — {}. {verdict}{plain}{shared}", each.join("; ")),
        sql: Vec::new(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(timed: Timed, verdict: Verdict) -> ShardComparison {
        ShardComparison {
            design: Design::SnapshotByVersion,
            versions: 100,
            timed,
            verdict,
            ratio: 4.5,
            ratio_low: 3.9,
            ratio_high: 5.2,
            median: 0.145,
            plain_median: 0.032,
            trials_needed: (verdict == Verdict::TooFewTrials).then_some(4),
            finding: String::new(),
        }
    }

    #[test]
    fn a_distribution_is_named_only_from_the_cores_verdicts() {
        use Verdict::*;
        let w = |a, b| fared(&[&c(Timed::Write, a), &c(Timed::Read, b)]);
        assert_eq!(w(Slower, NoSignificantDifference), Fared::Worse);
        assert_eq!(w(Slower, TooFewTrials), Fared::Worse);
        assert_eq!(w(Faster, NoSignificantDifference), Fared::Better);
        // Faster on one timing but undecided on the other is not "better".
        assert_eq!(w(Faster, TooFewTrials), Fared::Open);
        assert_eq!(w(Slower, Faster), Fared::Mixed);
        assert_eq!(
            w(NoSignificantDifference, NoSignificantDifference),
            Fared::Same
        );
        assert_eq!(w(NoSignificantDifference, TooFewTrials), Fared::Open);
        assert_eq!(
            timings(&[&c(Timed::Write, Slower)]),
            "writing slower (4.50× the plain table's time [3.90, 5.20], 145 ms vs 32 ms)"
        );
        assert_eq!(
            timings(&[&c(Timed::Read, TooFewTrials)]),
            "reading too few trials (4 each would decide)"
        );
    }
}
