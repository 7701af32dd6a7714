//! The finding of a sweep as one plain line, in the fixed vocabulary:
//!
//! - `4MB faster than every other setting (6.69 [6.61, 6.80] vs next 7.30)`
//! - `16MB..256MB are within 5% of the best (no significant difference); 16MB is enough, more
//!   bought nothing measurable`
//! - `no significant difference between 1MB and 64MB: all within 5% of the best`
//! - `too few trials to decide: 1MB undecided against the best (16MB); about 9 trials each
//!   would decide (estimated from the spread so far)`
//! - `the best is among 1MB..256MB at 95%; 1GB (×1.12 [×1.03, ×1.22]) and 4GB (×1.37 [×1.02,
//!   ×1.63]) are slower than the best (64MB; ratios to its time, above ×1 slower); use 1MB,
//!   the cheapest of them: ×1.04 [×0.94, ×1.15] against the best; about 14 trials each would
//!   narrow the set (estimated from the spread so far)`
//! - `one setting run: nothing to compare`

use super::finding::{Finding, TOO_WIDE};
use super::verdict::{Better, Verdict};

impl Finding {
    /// One plain line in the vocabulary, numbers with three significant digits.
    pub fn sentence(&self) -> String {
        self.sentence_with(&format_number)
    }

    /// One plain line, numbers formatted by `fmt` (e.g. `format_seconds`).
    pub fn sentence_with(&self, fmt: &dyn Fn(f64) -> String) -> String {
        let labels = self.order_for_groups();
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        let effect = format_level(self.rules.min_effect);
        match self.verdict {
            None if self.settings.is_empty() => "no setting run: nothing to compare".into(),
            None => "one setting run: nothing to compare".into(),
            Some(Verdict::TooFewTrials) if self.pick.is_some() => self.set_sentence(&labels),
            Some(Verdict::TooFewTrials) => format!(
                "too few trials to decide: {}",
                self.what_is_open(&self.blocking, &labels)
            ),
            Some(Verdict::Faster) => self.winner_sentence(fmt),
            Some(_) => {
                let group = describe_group(&self.equivalent, &labels);
                let Some(rec) = &self.recommendation else {
                    return format!(
                        "no significant difference between {group}: all within {effect} of the best"
                    );
                };
                let mut s = if self.equivalent.len() > 1 {
                    format!(
                        "{group} are within {effect} of the best (no significant difference); {rec} is enough"
                    )
                } else {
                    format!("{rec} is enough: no setting is shown better by more than {effect}")
                };
                let pricier = self.pricier_than(rec);
                let open: Vec<String> = pricier
                    .iter()
                    .filter(|l| self.undecided.contains(l))
                    .cloned()
                    .collect();
                let same: Vec<&String> = pricier.iter().filter(|l| self.is_equivalent(l)).collect();
                if open.is_empty() && !same.is_empty() {
                    s.push_str(", more bought nothing measurable");
                } else if !same.is_empty() {
                    let same: Vec<String> = same.into_iter().cloned().collect();
                    s.push_str(&format!(
                        ", {} bought nothing measurable over it",
                        describe_group(&same, &labels)
                    ));
                }
                if !open.is_empty() {
                    s.push_str(&format!("; {}", self.what_is_open(&open, &labels)));
                }
                s
            }
        }
    }

    /// The best median picked because every cheaper member's interval against it is too wide
    /// to say anything: `use 1000, the best median: the cheaper 100 may be as good, but its
    /// interval against the best is too wide to say (×0.0129 to ×5.52)`.
    fn too_wide_to_pick(&self, pick: &str, cheaper: &[&String]) -> String {
        format!(
            "; use {pick}, the best median{}",
            self.too_wide_cheaper(cheaper)
        )
    }

    /// `: the cheaper 100 may be as good, but its interval against the best is too wide to say
    /// (×0.0129 to ×5.52)`.
    fn too_wide_cheaper(&self, cheaper: &[&String]) -> String {
        let x = |r: f64| format!("×{}", format_number(r));
        let spans: Vec<String> = cheaper
            .iter()
            .filter_map(|l| self.setting(l).and_then(|s| s.vs_best.as_ref()))
            .map(|c| format!("{} to {}", x(c.ratio_low), x(c.ratio_high)))
            .collect();
        let names: Vec<String> = cheaper.iter().map(|l| l.to_string()).collect();
        let (its, is) = if names.len() == 1 {
            ("its interval", "is")
        } else {
            ("their intervals", "are")
        };
        format!(
            ": the cheaper {} may be as good, but {its} against the best {is} too wide to say ({})",
            describe_list(&names),
            spans.join("; ")
        )
    }

    /// The set that may be best, what is shown worse (with its ratio and interval against the
    /// best), the member to use with its interval — the cheapest whose interval against the
    /// best is narrow enough to say something, else the best itself, with the cheaper members
    /// that may be as good — and what more trials would narrow.
    fn set_sentence(&self, labels: &[&str]) -> String {
        let level = format_level(self.rules.confidence);
        let best = self.best.clone().unwrap_or_default();
        let against = |l: &String| {
            self.setting(l)
                .and_then(|s| s.vs_best.as_ref())
                .map(|c| format_ratio_interval(c.ratio, c.ratio_low, c.ratio_high))
        };
        let worse: Vec<String> = self
            .shown_worse
            .iter()
            .map(|l| format!("{l} ({})", against(l).unwrap_or_default()))
            .collect();
        let verb = if worse.len() == 1 { "is" } else { "are" };
        let mut s = format!(
            "the best is among {} at {level}; {} {verb} slower than the best ({best}; {})",
            describe_group(&self.may_be_best, labels),
            describe_list(&worse),
            self.scale_words()
        );
        if let Some(pick) = &self.pick {
            let rank = self.setting(pick).map_or(0, |p| p.cost_rank);
            let cheaper: Vec<&String> = self
                .may_be_best
                .iter()
                .filter(|l| self.setting(l).is_some_and(|x| x.cost_rank < rank))
                .collect();
            match against(pick) {
                Some(i) if cheaper.is_empty() => s.push_str(&format!(
                    "; use {pick}, the cheapest of them: {i} against the best"
                )),
                Some(i) => s.push_str(&format!(
                    "; use {pick}, the cheapest of them whose interval says something: {i} against the best{}",
                    self.too_wide_cheaper(&cheaper)
                )),
                None if cheaper.is_empty() => {
                    s.push_str(&format!("; use {pick}, the best and the cheapest of them"))
                }
                None => s.push_str(&self.too_wide_to_pick(pick, &cheaper)),
            }
        }
        let open: Vec<String> = self
            .may_be_best
            .iter()
            .filter(|l| self.undecided.contains(l))
            .cloned()
            .collect();
        match self.trials_to_settle(&open) {
            Some(n) if !open.is_empty() => s.push_str(&format!(
                "; about {n} trials each would narrow the set (estimated from the spread so far)"
            )),
            _ if !open.is_empty() => s.push_str(&format!(
                "; more than {} trials each would be needed to narrow the set",
                super::needed::LIMIT
            )),
            _ => {}
        }
        s
    }

    /// The labels in the order given, for `A..D` runs; empty (so groups are listed, never
    /// shortened to a range) when the settings vary in more than one dimension, where a run
    /// "1MB ×0w..1MB ×2w" would read as a range of one knob.
    fn order_for_groups(&self) -> Vec<String> {
        let dims = self
            .settings
            .iter()
            .map(|s| s.coords.len())
            .max()
            .unwrap_or(0);
        let varying = (0..dims)
            .filter(|&d| {
                let mut v: Vec<usize> = self
                    .settings
                    .iter()
                    .filter_map(|s| s.coords.get(d).copied())
                    .collect();
                v.sort_unstable();
                v.dedup();
                v.len() > 1
            })
            .count();
        if varying > 1 {
            Vec::new()
        } else {
            self.settings.iter().map(|s| s.label.clone()).collect()
        }
    }

    /// The labels of the settings costlier than `label`, in the order given.
    fn pricier_than(&self, label: &str) -> Vec<String> {
        let Some(rank) = self.setting(label).map(|s| s.cost_rank) else {
            return Vec::new();
        };
        self.settings
            .iter()
            .filter(|s| s.cost_rank > rank)
            .map(|s| s.label.clone())
            .collect()
    }

    /// "1MB and 4MB undecided against the best (16MB); about 9 trials each would decide
    /// (estimated from the spread so far)".
    fn what_is_open(&self, open: &[String], labels: &[&str]) -> String {
        let least = self.family.first_look.max(super::verdict::MIN_TRIALS);
        let counts = self.counts();
        let level = format_level(self.rules.confidence);
        let who = match (&self.best, open.len()) {
            (_, 0) => String::new(),
            (Some(b), _) => format!(
                "{} undecided against the best ({b}); ",
                describe_group(open, labels)
            ),
            (None, _) => format!("{} undecided; ", describe_group(open, labels)),
        };
        let at_once = if self.family.settings > 2 {
            format!("{} settings at once ", self.family.settings)
        } else {
            String::new()
        };
        let reach = if counts.0 < least && self.family.settings >= 2 {
            format!(
                "{} per setting, and {least} each are the fewest that can decide {at_once}at {level}; ",
                counts.1
            )
        } else {
            String::new()
        };
        let more = match self.trials_to_settle(open) {
            Some(n) => {
                format!("about {n} trials each would decide (estimated from the spread so far)")
            }
            None => format!(
                "more than {} trials each would be needed at the spread so far",
                super::needed::LIMIT
            ),
        };
        format!("{who}{reach}{more}")
    }

    /// The fewest trials of a setting, and the counts as text ("3", "2 to 5").
    fn counts(&self) -> (usize, String) {
        let ns: Vec<usize> = self
            .settings
            .iter()
            .map(|s| s.estimate.map_or(0, |e| e.n))
            .collect();
        let (lo, hi) = (
            ns.iter().min().copied().unwrap_or(0),
            ns.iter().max().copied().unwrap_or(0),
        );
        let text = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo} to {hi}")
        };
        (lo, text)
    }

    fn winner_sentence(&self, fmt: &dyn Fn(f64) -> String) -> String {
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

    /// The family in words, for headers and recommendations: `95% confidence` for one pair,
    /// `95% confidence for the 21 pairs together (each interval 99.76%)`, `… over 4 looks of
    /// repeat auto …`.
    pub fn level_words(&self) -> String {
        let level = format!("{} confidence", format_level(self.rules.confidence));
        let f = &self.family;
        if f.is_single() {
            return level;
        }
        let pairs = if f.pairs == 1 {
            "the pair".to_string()
        } else {
            format!("the {} pairs", f.pairs)
        };
        let looks = if f.looks > 1 {
            format!(" over {} looks of repeat auto", f.looks)
        } else {
            String::new()
        };
        format!(
            "{level} for {pairs} together{looks} (each interval {})",
            format_level(f.pair_confidence)
        )
    }
}

/// "A and B", "A..D" for a run of three or more in the given order, else "A, B and D".
pub(crate) fn describe_group(group: &[String], order: &[&str]) -> String {
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

/// "A", "A and B", "A, B and C" (items that are not labels of a run).
fn describe_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A ratio with its interval on one scale: `×1.24 [×1.10, ×1.40]`, `×0.261 [×0.198, ×0.344]`;
/// an interval that spans ×1 and is wider than [`TOO_WIDE`] from end to end says nothing and
/// reads `too wide to say (×0.0235 to ×2.90)`.
pub fn format_ratio_interval(ratio: f64, low: f64, high: f64) -> String {
    let x = |r: f64| format!("×{}", format_number(r));
    // Too wide only when it leaves the direction open: an interval wholly on one side of ×1
    // says which way, however wide.
    if low > 0.0 && low < 1.0 && high > 1.0 && high / low > TOO_WIDE {
        return format!("too wide to say ({} to {})", x(low), x(high));
    }
    format!("{} [{}, {}]", x(ratio), x(low), x(high))
}

impl Finding {
    /// Which way the ratios against the best read: "ratios to its time, above ×1 slower" or
    /// "ratios to its throughput, below ×1 slower".
    pub fn scale_words(&self) -> &'static str {
        match self.better {
            Better::Lower => "ratios to its time, above ×1 slower",
            Better::Higher => "ratios to its throughput, below ×1 slower",
        }
    }
}

/// A confidence or a share as a percentage with the digits it needs: `95%`, `99.9%`,
/// `99.76%`, `5%`; a level below 100% never reads as 100%.
pub fn format_level(confidence: f64) -> String {
    let p = confidence * 100.0;
    for decimals in 0..=4usize {
        let s = format!("{p:.decimals$}");
        let v = s.parse::<f64>().unwrap_or(p);
        if v >= 100.0 && p < 100.0 {
            continue;
        }
        if (v - p).abs() < 0.005 || decimals == 4 {
            return format!("{s}%");
        }
    }
    format!("{:.4}%", (p * 1e4).floor() / 1e4)
}

/// Three significant digits: 6.69, 6.80, 12.3, 1234.
pub(crate) fn format_number(x: f64) -> String {
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

    #[test]
    fn levels_keep_the_digits_that_matter() {
        assert_eq!(format_level(0.95), "95%");
        assert_eq!(format_level(0.999), "99.9%");
        assert_eq!(format_level(0.875), "87.5%");
        assert_eq!(format_level(1.0 - 0.05 / 21.0), "99.76%");
        assert_eq!(format_level(1.0 - 0.05 / 3.0), "98.33%");
        assert_eq!(format_level(0.05), "5%");
        // Close to 100% is never shown as 100%.
        assert_eq!(format_level(0.99999), "99.999%");
        assert_eq!(format_level(0.999999), "99.9999%");
    }
}
