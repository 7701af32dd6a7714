//! Two settings: the ratio of their measures with an interval, and the verdict in fixed words.
//!
//! **The ratio.** Timings compare as ratios ("12% slower"), so pglab works on logarithms: the
//! ratio `a/b` is `exp` of the difference of the mean logarithms of A's and B's trials (the
//! ratio of their geometric means), and its interval is Welch's t interval on those
//! logarithms ([`super::welch`]; why not a rank test: there). The result is deterministic:
//! no resampling, no randomness.
//!
//! **The verdict**, always one of five exact words, read from that one interval with the
//! smallest effect `δ` (`min_effect`, default 5%):
//!
//! - `faster` / `slower`: the interval excludes 1 **and** the estimate differs from 1 by more
//!   than `δ` (`a/b > 1.05` or `b/a > 1.05`). Which one is which depends on [`Better`]: for
//!   seconds lower is better, for rows/s higher is better; `faster` always means "A is better
//!   than B".
//! - `no significant difference`: equivalence is *shown* — the whole interval lies within
//!   `[1/(1+δ), 1+δ]`. This is the two-one-sided-tests (TOST) reading of the same interval:
//!   each end excludes a difference of `δ` or more at half the error, so the claim "they
//!   differ by less than 5%" is as sure as the interval.
//! - `too few trials`: anything else — the interval is too wide to tell (it holds 1 and also a
//!   difference beyond `δ`), or either side has fewer than 3 trials (the interval is Welch's
//!   t on the logarithms, [`super::welch`], at the stated level at any count). "Not shown different" is not "the
//!   same": the comparison says about how many trials per side would decide
//!   ([`Comparison::trials_needed`], estimated from the spread so far, see
//!   [`super::needed`]).
//! - `not comparable`: the runs differ in something besides the setting (server version,
//!   dataset, host); the caller names the differences.
//!
//! Two settings are a family of one pair (see [`super::family`]): with `--repeat auto` the
//! interval is widened for the looks taken; a sweep of more settings reads its pairs in
//! [`super::finding`].

use serde::{Deserialize, Serialize};

use super::family::Family;
use super::interval::{Estimate, estimate};
use super::needed::trials_to_decide;
use super::rules::Rules;

/// Fewer trials than this on either side are never compared.
pub const MIN_TRIALS: usize = 3;

/// Which direction of the measure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Seconds, bytes: less is better.
    Lower,
    /// Rows/s, transactions/s: more is better.
    Higher,
}

/// The verdict of a comparison, serialised as the exact words people read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "faster")]
    Faster,
    #[serde(rename = "slower")]
    Slower,
    #[serde(rename = "no significant difference")]
    NoSignificantDifference,
    #[serde(rename = "too few trials")]
    TooFewTrials,
    #[serde(rename = "not comparable")]
    NotComparable,
}

impl Verdict {
    /// The exact words: `faster`, `slower`, `no significant difference`, `too few trials`,
    /// `not comparable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoSignificantDifference => "no significant difference",
            Verdict::TooFewTrials => "too few trials",
            Verdict::NotComparable => "not comparable",
        }
    }

    /// The same verdict seen from the other side (faster ↔ slower).
    #[cfg(test)]
    pub(crate) fn flipped(self) -> Verdict {
        match self {
            Verdict::Faster => Verdict::Slower,
            Verdict::Slower => Verdict::Faster,
            other => other,
        }
    }

    /// True for the verdicts that answer the question: `faster`, `slower`, and `no
    /// significant difference` (shown equivalent).
    pub(crate) fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Faster | Verdict::Slower | Verdict::NoSignificantDifference
        )
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A against B: both estimates, the ratio `a/b` with its interval, and the verdict for A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub a: Estimate,
    pub b: Estimate,
    /// Ratio of the geometric means, `a/b`.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// Coverage actually reached by `[ratio_low, ratio_high]` on its own. In a sweep it is
    /// the pairwise level that makes all of the sweep's intervals hold together (e.g. 98.3%
    /// for three settings at 95%); below what was asked only when the verdict is `too few
    /// trials`.
    pub level: f64,
    /// The verdict for A: `faster` means A is better than B.
    pub verdict: Verdict,
    /// For `too few trials`: about how many trials per setting would decide, if the spread
    /// and the difference stayed as observed (an estimate; never below the count that can
    /// reach the level at all). None with `too few trials` when no count up to
    /// [`super::needed::LIMIT`] would (the difference sits at the smallest effect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    /// For `not comparable`: what differs between the two runs, in the caller's words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
}

/// The shift `ln(a) − ln(b)` between two sets of log-trials: the difference of their means
/// and its Welch t interval at a confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shift {
    pub n: usize,
    pub m: usize,
    /// Median of the pairwise differences.
    pub point: f64,
    pub low: f64,
    pub high: f64,
    /// Coverage reached (the widest interval's when the confidence is out of reach).
    pub level: f64,
    /// Enough trials on both sides, and the confidence within reach: the interval may
    /// decide something.
    pub decisive: bool,
}

impl Shift {
    /// The shift of B against A.
    pub(crate) fn flipped(self) -> Shift {
        Shift {
            n: self.m,
            m: self.n,
            point: -self.point,
            low: -self.high,
            high: -self.low,
            ..self
        }
    }

    /// The same shift as a cost, lower is better: unchanged for [`Better::Lower`], negated
    /// for [`Better::Higher`] (so a positive shift always means A is worse).
    pub(crate) fn as_cost(self, better: Better) -> Shift {
        match better {
            Better::Lower => self,
            Better::Higher => Shift {
                point: -self.point,
                low: -self.high,
                high: -self.low,
                ..self
            },
        }
    }

    /// Shown worse than B (as a cost): the interval lies above 0.
    pub fn shown_worse(&self) -> bool {
        self.decisive && self.low > 0.0
    }

    /// Shown worse than B by a practical amount: [`Self::shown_worse`] and the estimate
    /// beyond the margin (`ln(1 + min_effect)`).
    pub(crate) fn slower_by_more_than(&self, margin: f64) -> bool {
        self.shown_worse() && self.point > margin
    }

    /// Shown no more than the margin worse than B (as a cost): the upper end within it.
    pub(crate) fn not_worse_by(&self, margin: f64) -> bool {
        self.decisive && self.high <= margin
    }

    /// Shown within the margin both ways (equivalence, TOST).
    pub fn within(&self, margin: f64) -> bool {
        self.not_worse_by(margin) && self.low >= -margin
    }
}

/// The shift of `la` against `lb` (logarithms, both non-empty) at `confidence`: the
/// difference of the mean logarithms and its Welch t interval ([`super::welch`]). Decisive
/// with at least [`MIN_TRIALS`] a side (the caller also holds back rounds before a planned
/// first look).
pub(crate) fn shift(la: &[f64], lb: &[f64], confidence: f64) -> Shift {
    let (n, m) = (la.len(), lb.len());
    let (point, low, high) = super::welch::interval(la, lb, confidence);
    Shift {
        n,
        m,
        point,
        low,
        high,
        level: confidence,
        decisive: n >= MIN_TRIALS && m >= MIN_TRIALS,
    }
}

/// The verdict for A from the shift of A against B (as read by [`Better`]).
pub(crate) fn verdict_of(s: &Shift, better: Better, margin: f64) -> Verdict {
    let cost = s.as_cost(better);
    if cost.slower_by_more_than(margin) {
        Verdict::Slower
    } else if cost.flipped().slower_by_more_than(margin) {
        Verdict::Faster
    } else if cost.within(margin) {
        Verdict::NoSignificantDifference
    } else {
        Verdict::TooFewTrials
    }
}

/// The positive, finite values: a ratio needs them.
pub(crate) fn usable(values: &[f64]) -> Vec<f64> {
    values.iter().copied().filter(|x| is_usable(*x)).collect()
}

impl Comparison {
    /// A against B from their usable trials and the shift at the family's level.
    pub(crate) fn from_shift(
        a: Estimate,
        b: Estimate,
        s: &Shift,
        verdict: Verdict,
        confidence: f64,
        margin: f64,
    ) -> Comparison {
        Comparison {
            a,
            b,
            ratio: s.point.exp(),
            ratio_low: s.low.exp(),
            ratio_high: s.high.exp(),
            level: s.level,
            verdict,
            trials_needed: if verdict == Verdict::TooFewTrials {
                trials_to_decide(s, confidence, margin)
            } else {
                None
            },
            differences: Vec::new(),
        }
    }
}

/// Compare the trials of A with those of B: a family of one pair (with `--repeat auto`
/// rules, widened for the looks). Only finite, positive values are used (a ratio needs
/// them); None when either side has none.
pub fn compare(a: &[f64], b: &[f64], better: Better, rules: &Rules) -> Option<Comparison> {
    let rules = rules.effective();
    let level = Family::of(2, &rules).pair_confidence;
    compare_at(a, b, better, rules.confidence, level, rules.margin())
}

/// A against B with the interval of the ratio held to `level` (a level a caller corrected for
/// its own family of comparisons, which may be above the 99.9% a run's rules allow), each
/// median's interval at `confidence`, and the smallest effect `margin` (log scale).
pub fn compare_at(
    a: &[f64],
    b: &[f64],
    better: Better,
    confidence: f64,
    level: f64,
    margin: f64,
) -> Option<Comparison> {
    let (pa, pb) = (usable(a), usable(b));
    let ea = estimate(&pa, confidence)?;
    let eb = estimate(&pb, confidence)?;
    let la: Vec<f64> = pa.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = pb.iter().map(|x| x.ln()).collect();
    let s = shift(&la, &lb, level);
    let verdict = verdict_of(&s, better, margin);
    Some(Comparison::from_shift(ea, eb, &s, verdict, level, margin))
}

/// A against B where round `i` of A and round `i` of B ran one after the other (the tune's
/// race and confirmation): the interval is on the within-round ratios ([`super::paired`]), so
/// drift between rounds cancels. Held at the level of a family of one pair, like [`compare`].
pub fn compare_paired(a: &[f64], b: &[f64], better: Better, rules: &Rules) -> Option<Comparison> {
    let rules = rules.effective();
    let level = Family::of(2, &rules).pair_confidence;
    compare_paired_at(a, b, better, rules.confidence, level, rules.margin())
}

/// [`compare_at`] for paired rounds: each median's interval at `confidence` from its own
/// trials, the ratio's interval at `level` from the within-round log ratios.
pub(crate) fn compare_paired_at(
    a: &[f64],
    b: &[f64],
    better: Better,
    confidence: f64,
    level: f64,
    margin: f64,
) -> Option<Comparison> {
    let d = super::paired::log_ratios(a, b);
    if d.is_empty() {
        return None;
    }
    let ea = estimate(&usable(a), confidence)?;
    let eb = estimate(&usable(b), confidence)?;
    let (point, low, high) = super::paired::interval(&d, level);
    let s = Shift {
        n: d.len(),
        m: d.len(),
        point,
        low,
        high,
        level,
        decisive: d.len() >= MIN_TRIALS,
    };
    let verdict = verdict_of(&s, better, margin);
    Some(Comparison::from_shift(ea, eb, &s, verdict, level, margin))
}

impl Comparison {
    /// Mark the comparison `not comparable` because of `differences` (e.g. "server 16.2 vs
    /// 17.0"); unchanged when the list is empty. The numbers stay, for the record.
    pub fn with_differences(mut self, differences: Vec<String>) -> Comparison {
        if !differences.is_empty() {
            self.verdict = Verdict::NotComparable;
            self.trials_needed = None;
            self.differences = differences;
        }
        self
    }

    /// Whether the comparison answers the question: `faster`, `slower`, or `no significant
    /// difference` (which now always means equivalence shown).
    pub fn conclusive(&self) -> bool {
        self.verdict.is_decided()
    }

    /// The change of A relative to B as a signed fraction: 0.12 for 12% more.
    pub fn change(&self) -> f64 {
        self.ratio - 1.0
    }
}

pub(crate) fn is_usable(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NOISE: [f64; 5] = [0.98, 1.01, 1.0, 0.99, 1.02];
    const NOISE2: [f64; 5] = [1.01, 0.99, 1.02, 1.0, 0.98];

    fn scaled(base: f64, noise: &[f64]) -> Vec<f64> {
        noise.iter().map(|x| base * x).collect()
    }

    fn cmp(a: &[f64], b: &[f64], better: Better) -> Comparison {
        compare(a, b, better, &Rules::default()).unwrap()
    }

    #[test]
    fn welch_on_logarithms_by_hand() {
        // In powers of two A = 2^{1,2,3}, B = 2^{0,1,2}: the mean log2-difference is 1, ratio
        // 2. Each side's variance is (ln 2)², so se = ln 2·√(2/3) and Welch's df is 4; t(0.975,
        // 4) = 2.776 gives the half-width 2.267 in log2: 2^(1 ± 2.267) = 0.416 … 9.62, which
        // holds 1: too few trials, with how many would decide.
        let c = cmp(&[2.0, 4.0, 8.0], &[1.0, 2.0, 4.0], Better::Lower);
        assert!((c.ratio - 2.0).abs() < 1e-12);
        let h = 2.776_445 * (2.0f64 / 3.0).sqrt();
        assert!((c.ratio_low.log2() - (1.0 - h)).abs() < 1e-4, "{c:?}");
        assert!((c.ratio_high.log2() - (1.0 + h)).abs() < 1e-4, "{c:?}");
        assert!((c.level - 0.95).abs() < 1e-12);
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        assert!(c.trials_needed.is_some_and(|n| n > 3), "{c:?}");
    }

    #[test]
    fn equivalence_is_shown_not_assumed() {
        // The C against B: 1.10× [0.99, 1.23] holds 1 and 23%: open, not a tie.
        let c = cmp(
            &[11.0, 9.9, 11.8, 10.4, 12.0],
            &[10.0, 10.3, 9.7, 10.5, 9.6],
            Better::Lower,
        );
        assert!(c.ratio_low < 1.0 && c.ratio_high > 1.05, "{c:?}");
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        assert!(!c.conclusive());
        // Within ±1% noise, 0.5% apart: every difference inside ±5%, equivalence shown.
        let c = cmp(
            &scaled(10.05, &NOISE),
            &scaled(10.0, &NOISE2),
            Better::Lower,
        );
        assert!(c.ratio_low >= 1.0 / 1.05 && c.ratio_high <= 1.05, "{c:?}");
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!(c.conclusive());
        // With repeat auto the interval is widened for the looks: 5 against 5 reach
        // 1 − 0.05/6 only with their widest interval (tails 1/252), which still lies within 5%.
        let auto = Rules::default().with_auto(10);
        let c = compare(
            &scaled(10.05, &NOISE),
            &scaled(10.0, &NOISE2),
            Better::Lower,
            &auto,
        );
        let c = c.unwrap();
        assert!(c.level > 0.99);
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
    }

    #[test]
    fn identical_sets_do_not_differ() {
        let v = [10.0, 10.1, 9.9, 10.05, 9.95];
        let c = cmp(&v, &v, Better::Lower);
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        assert!((c.ratio - 1.0).abs() < 1e-12);
        assert!(c.ratio_low < 1.0 && c.ratio_high > 1.0);
    }

    #[test]
    fn clear_separation_has_the_right_direction() {
        // A takes 1.2× as long as B, with ±2% noise.
        let a = scaled(12.0, &NOISE);
        let b = scaled(10.0, &NOISE2);
        let c = cmp(&a, &b, Better::Lower);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!((c.ratio - 1.2).abs() < 0.01 && c.ratio_low > 1.0);
        assert!(c.level >= 0.95);
        assert_eq!(cmp(&b, &a, Better::Lower).verdict, Verdict::Faster);
        // As a throughput, more is better: A is now the faster one.
        assert_eq!(cmp(&a, &b, Better::Higher).verdict, Verdict::Faster);
        assert_eq!(cmp(&b, &a, Better::Higher).verdict, Verdict::Slower);
    }

    #[test]
    fn small_real_differences_are_not_called() {
        // 3% apart with ±0.2% noise: the interval excludes 1, but 3% < min_effect (5%).
        let tight = [0.998, 1.001, 1.0, 0.999, 1.002];
        let c = cmp(&scaled(10.3, &tight), &scaled(10.0, &tight), Better::Lower);
        assert!(c.ratio_low > 1.0);
        assert_eq!(c.verdict, Verdict::NoSignificantDifference);
        // With no practical threshold the same data is called.
        let exact = Rules::new(0.95, 0.0).unwrap();
        let c = compare(
            &scaled(10.3, &tight),
            &scaled(10.0, &tight),
            Better::Lower,
            &exact,
        );
        assert_eq!(c.unwrap().verdict, Verdict::Slower);
    }

    #[test]
    fn too_few_trials() {
        // 3 vs 3, twice as long with 5% spread: a large effect is decided from three a side.
        let c = cmp(&[20.0, 21.0, 22.0], &[10.0, 11.0, 12.0], Better::Lower);
        assert_eq!((c.verdict, c.trials_needed), (Verdict::Slower, None));
        // 3 vs 3, 10% apart in 10% spread: open, with the count that would decide.
        let c = cmp(&[11.0, 10.0, 12.1], &[10.0, 11.0, 9.1], Better::Lower);
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        assert!(c.trials_needed.is_some_and(|n| n > 3), "{c:?}");
        // n = 2, even against many trials.
        let many = scaled(10.0, &NOISE);
        let c = cmp(&[20.0, 21.0], &many, Better::Lower);
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        let c = cmp(&many, &[20.0], Better::Higher);
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        // Nothing usable on one side: no comparison at all.
        assert!(
            compare(
                &[0.0, -1.0, f64::NAN],
                &many,
                Better::Lower,
                &Rules::default()
            )
            .is_none()
        );
    }

    #[test]
    fn differences_make_it_not_comparable() {
        let c = cmp(&scaled(12.0, &NOISE), &scaled(10.0, &NOISE2), Better::Lower);
        let c = c.with_differences(vec!["server 16.2 vs 17.0".into()]);
        assert_eq!(c.verdict, Verdict::NotComparable);
        assert_eq!(c.differences, ["server 16.2 vs 17.0"]);
        // No differences: the verdict stands (identical trials: an interval of the point).
        let same = cmp(&[1.0; 3], &[1.0; 3], Better::Lower).with_differences(vec![]);
        assert_eq!(same.verdict, Verdict::NoSignificantDifference);
    }

    #[test]
    fn serialises_the_exact_words() {
        let words: Vec<String> = [
            Verdict::Faster,
            Verdict::Slower,
            Verdict::NoSignificantDifference,
            Verdict::TooFewTrials,
            Verdict::NotComparable,
        ]
        .iter()
        .map(|v| {
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(json, format!("\"{v}\""));
            assert_eq!(serde_json::from_str::<Verdict>(&json).unwrap(), *v);
            v.to_string()
        })
        .collect();
        assert_eq!(words[2], "no significant difference");
        let c = cmp(&scaled(12.0, &NOISE), &scaled(10.0, &NOISE2), Better::Lower);
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["verdict"], "slower");
        for key in ["n", "median", "ci_low", "ci_high", "level"] {
            assert!(json["a"].get(key).is_some(), "{key}");
        }
        assert!(json.get("trials_needed").is_none());
        let back: Comparison = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
        assert_eq!(
            serde_json::to_string(&Better::Higher).unwrap(),
            "\"higher\""
        );
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(0.1f64..100.0, 1..10)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn swapping_inverts_the_ratio(a in sample(), b in sample(), higher in any::<bool>()) {
            let better = if higher { Better::Higher } else { Better::Lower };
            let ab = cmp(&a, &b, better);
            let ba = cmp(&b, &a, better);
            prop_assert!((ab.ratio * ba.ratio - 1.0).abs() < 1e-9);
            prop_assert!((ab.ratio_low * ba.ratio_high - 1.0).abs() < 1e-9);
            prop_assert!((ab.ratio_high * ba.ratio_low - 1.0).abs() < 1e-9);
            prop_assert_eq!(ba.verdict, ab.verdict.flipped());
            prop_assert!(ab.ratio_low <= ab.ratio && ab.ratio <= ab.ratio_high);
        }

        #[test]
        fn scaling_leaves_the_verdict(a in sample(), b in sample(), c in 0.001f64..1000.0) {
            let scale = |v: &[f64]| v.iter().map(|x| x * c).collect::<Vec<_>>();
            for better in [Better::Lower, Better::Higher] {
                let plain = cmp(&a, &b, better);
                let scaled = cmp(&scale(&a), &scale(&b), better);
                prop_assert_eq!(plain.verdict, scaled.verdict);
                prop_assert!((plain.ratio / scaled.ratio - 1.0).abs() < 1e-9);
            }
        }

        #[test]
        fn a_half_again_shift_is_always_detected(
            base in 0.01f64..1000.0,
            na in prop::collection::vec(0.97f64..1.03, 8),
            nb in prop::collection::vec(0.97f64..1.03, 8),
        ) {
            let a: Vec<f64> = na.iter().map(|x| base * 1.5 * x).collect();
            let b: Vec<f64> = nb.iter().map(|x| base * x).collect();
            prop_assert_eq!(cmp(&a, &b, Better::Lower).verdict, Verdict::Slower);
            prop_assert_eq!(cmp(&a, &b, Better::Higher).verdict, Verdict::Faster);
            prop_assert_eq!(cmp(&b, &a, Better::Lower).verdict, Verdict::Faster);
        }
    }
}
