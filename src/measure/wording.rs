//! The finding of a sweep as one plain line, in the fixed vocabulary:
//!
//! - `4MB faster than every other setting (6.69 [6.61, 6.80] vs next 7.30)`
//! - `16MB..1GB are within noise of each other (no significant difference); 16MB is enough`
//! - `no significant difference between 1MB and 64MB`
//! - `too few trials to decide: 3 per setting, 4 needed at 95%`
//! - `one setting run: nothing to compare`

use super::finding::Finding;
use super::verdict::{Better, MIN_TRIALS, Verdict};

impl Finding {
    /// One plain line in the vocabulary, numbers with three significant digits.
    pub fn sentence(&self) -> String {
        self.sentence_with(&format_number)
    }

    /// One plain line, numbers formatted by `fmt` (e.g. `format_seconds`).
    pub fn sentence_with(&self, fmt: &dyn Fn(f64) -> String) -> String {
        let labels: Vec<&str> = self.settings.iter().map(|s| s.label.as_str()).collect();
        match self.verdict {
            None if self.settings.is_empty() => "no setting run: nothing to compare".into(),
            None => "one setting run: nothing to compare".into(),
            Some(Verdict::TooFewTrials) => {
                let ns: Vec<usize> = self
                    .settings
                    .iter()
                    .map(|s| s.estimate.map_or(0, |e| e.n))
                    .collect();
                let (lo, hi) = (ns.iter().min(), ns.iter().max());
                let counts = match (lo, hi) {
                    (Some(lo), Some(hi)) if lo != hi => format!("{lo} to {hi}"),
                    (Some(lo), _) => lo.to_string(),
                    _ => "0".into(),
                };
                let needed = self.more_repeats_needed.unwrap_or(MIN_TRIALS);
                let level = format_level(self.rules.confidence);
                format!(
                    "too few trials to decide: {counts} per setting, {needed} needed at {level}"
                )
            }
            Some(Verdict::Faster) => {
                let best = self
                    .settings
                    .iter()
                    .find(|s| Some(&s.label) == self.winner.as_ref());
                let next = self
                    .settings
                    .iter()
                    .filter(|s| s.vs_best.is_some())
                    .filter_map(|s| s.estimate.map(|e| e.median))
                    .reduce(|p, q| match self.better {
                        Better::Lower => p.min(q),
                        Better::Higher => p.max(q),
                    });
                match (best.and_then(|b| b.estimate), next) {
                    (Some(e), Some(next)) => format!(
                        "{} faster than every other setting ({} [{}, {}] vs next {})",
                        best.map_or("", |b| b.label.as_str()),
                        fmt(e.median),
                        fmt(e.ci_low),
                        fmt(e.ci_high),
                        fmt(next)
                    ),
                    _ => format!(
                        "{} faster than every other setting",
                        self.best.as_deref().unwrap_or("")
                    ),
                }
            }
            Some(_) => {
                let group = describe_group(&self.tie_group, &labels);
                match &self.recommendation {
                    Some(rec) => format!(
                        "{group} are within noise of each other (no significant difference); {rec} is enough"
                    ),
                    None => format!("no significant difference between {group}"),
                }
            }
        }
    }
}

/// "A and B", "A..D" for a run of three or more in the given order, else "A, B and D".
fn describe_group(group: &[String], order: &[&str]) -> String {
    let pos: Vec<Option<usize>> = group
        .iter()
        .map(|g| order.iter().position(|l| l == g))
        .collect();
    let contiguous = pos
        .windows(2)
        .all(|w| matches!(w, [Some(a), Some(b)] if b == &(a + 1)));
    match group {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [first, .., last] if contiguous => format!("{first}..{last}"),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A confidence as a percentage: `95%`, `99.9%`.
fn format_level(confidence: f64) -> String {
    let p = confidence * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Three significant digits: 6.69, 6.80, 12.3, 1234.
pub fn format_number(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let decimals = (2 - x.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{x:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_numbers_read_plainly() {
        let order = ["a", "b", "c", "d"];
        let g = |v: &[&str]| {
            describe_group(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &order)
        };
        assert_eq!(g(&["a", "b", "c"]), "a..c");
        assert_eq!(g(&["a", "b", "d"]), "a, b and d");
        assert_eq!(g(&["b", "d"]), "b and d");
        assert_eq!(format_number(6.8), "6.80");
        assert_eq!(format_number(12.34), "12.3");
        assert_eq!(format_number(1234.4), "1234");
        assert_eq!(format_number(0.01234), "0.0123");
    }
}
