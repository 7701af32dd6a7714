//! The one line a comparison ends with, counting the verdicts in the fixed words:
//!
//! - `candidate vs baseline: faster on 3, no significant difference on 2 of 5 settings; up
//!   to 1.52× faster at random · 0 workers · 16MB`
//! - `candidate vs baseline: too few trials on 2 of 2 settings (4 a side could decide at 95%)`
//! - `not comparable: rows 200k vs 2M — both runs' numbers are shown, without a verdict`
//! - `nothing to compare: the two runs share no setting`

use super::{Counts, SettingComparison};
use crate::measure::rules::Rules;
use crate::measure::verdict::Verdict;

/// The overall line.
pub fn overall(
    settings: &[SettingComparison],
    counts: &Counts,
    not_comparable: &[String],
    rules: &Rules,
) -> String {
    let matched = counts.matched();
    let mut s = if matched == 0 {
        "nothing to compare: the two runs share no setting".to_string()
    } else if !not_comparable.is_empty() {
        format!(
            "not comparable: {} — both runs' numbers are shown, without a verdict",
            not_comparable.join(", ")
        )
    } else {
        let parts: Vec<String> = [
            (counts.faster, Verdict::Faster),
            (counts.slower, Verdict::Slower),
            (
                counts.no_significant_difference,
                Verdict::NoSignificantDifference,
            ),
            (counts.too_few_trials, Verdict::TooFewTrials),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, v)| format!("{v} on {n}"))
        .collect();
        let mut s = format!(
            "candidate vs baseline: {} of {matched} setting{}",
            parts.join(", "),
            if matched == 1 { "" } else { "s" }
        );
        if counts.too_few_trials > 0 {
            let needed = settings
                .iter()
                .filter_map(|s| s.trials_needed)
                .max()
                .unwrap_or(crate::measure::verdict::MIN_TRIALS);
            s.push_str(&format!(
                " ({needed} trials a side could decide at {})",
                crate::experiment::decision::format_percent(rules.confidence)
            ));
        }
        for v in [Verdict::Faster, Verdict::Slower] {
            if let Some(x) = strongest(settings, v) {
                s.push_str(&format!("; {x}"));
            }
        }
        s
    };
    if counts.unmatched > 0 {
        s.push_str(&format!(
            "; {} setting{} ran in only one of the runs",
            counts.unmatched,
            if counts.unmatched == 1 { "" } else { "s" }
        ));
    }
    s
}

/// "up to 1.52× faster at random · 0 workers · 16MB".
fn strongest(settings: &[SettingComparison], v: Verdict) -> Option<String> {
    let s = settings
        .iter()
        .filter(|s| s.verdict == Some(v))
        .max_by(|a, b| {
            a.factor()
                .unwrap_or(1.0)
                .total_cmp(&b.factor().unwrap_or(1.0))
        })?;
    Some(format!("up to {:.2}× {v} at {}", s.factor()?, s.setting))
}
