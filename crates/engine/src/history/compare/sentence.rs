//! The one line a comparison ends with, counting the verdicts in the fixed words:
//!
//! - `candidate vs baseline: faster on 3, no significant difference on 2 of 5 settings; up
//!   to 1.52× faster at random · 0 workers · 16MB`
//! - `candidate vs baseline: too few trials on 2 of 2 settings (about 6 trials a side would
//!   decide, estimated from the spread so far)`
//! - with several settings, what chance alone gives: `…; 8 settings compared at 95% each:
//!   when nothing changed, chance alone calls about 0.4 of them faster or slower (at least one
//!   in up to 34% of such compares)`
//! - `not comparable: rows 200k vs 2M — both runs' numbers are shown, without a verdict`
//! - `nothing to compare: the two runs share no setting`

use super::{Counts, SettingComparison};
use crate::measure::rules::Rules;
use crate::measure::verdict::Verdict;

/// The overall line.
pub(crate) fn overall(
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
            let open = settings
                .iter()
                .filter(|s| s.verdict == Some(Verdict::TooFewTrials));
            let needed: Option<Vec<usize>> = open.map(|s| s.trials_needed).collect();
            match needed.and_then(|n| n.into_iter().max()) {
                Some(n) => s.push_str(&format!(
                    " (about {n} trials a side would decide, estimated from the spread so far)"
                )),
                None => s.push_str(
                    " (more than 100 trials a side would be needed for some, at the spread so far)",
                ),
            }
        }
        for v in [Verdict::Faster, Verdict::Slower] {
            if let Some(x) = strongest(settings, v) {
                s.push_str(&format!("; {x}"));
            }
        }
        if let Some(chance) = chance_alone(matched, rules) {
            s.push_str(&format!("; {chance}"));
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

/// What chance alone gives when many settings are compared, each at the rules' confidence:
/// "8 settings compared at 95% each: when nothing changed, chance alone calls about 0.4 of them
/// faster or slower (at least one in up to 34% of such compares)". None for one setting. The
/// expected count is `m·(1 − confidence)` at most (each verdict errs at most that often); the
/// chance of one or more, `1 − confidence^m`, is what independent settings would give.
pub(crate) fn chance_alone(matched: usize, rules: &Rules) -> Option<String> {
    if matched < 2 {
        return None;
    }
    let alpha = 1.0 - rules.confidence;
    let expected = matched as f64 * alpha;
    let any = 1.0 - rules.confidence.powi(matched as i32);
    Some(format!(
        "{matched} settings compared at {} each: when nothing changed, chance alone calls about {expected:.1} of them faster or slower (at least one in up to {:.0}% of such compares)",
        crate::experiment::lab::decision::format_percent(rules.confidence),
        any * 100.0
    ))
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
