//! A sweep: which of several settings is best, which are as good, and which one to use.
//!
//! The setting with the best median is the reference; every other setting is compared with
//! it by the two-sample rule (see [`super::verdict`]). Settings that are not significantly
//! and practically worse than the best form the **tie group**: within the noise of these
//! trials they are all "the best". From it pglab recommends the **cheapest** member (least
//! memory, fewest workers, smallest batch — the caller ranks the costs), because paying for
//! more buys nothing measurable. There is a recommendation only when the group leaves some
//! setting out; when every setting ties, nothing differs and the finding says so. A
//! **winner** is named only when the best beats every other setting by the rule.
//!
//! When any comparison is `too few trials`, the finding is `too few trials`: no winner, no
//! recommendation, and the number of trials per setting that could decide. [`needs_more`]
//! lists the settings that should get another trial (for `--repeat auto`).
//!
//! Only finite, positive trial values count (the comparison is a ratio). The finding reads
//! as one line through [`Finding::sentence`] (see [`super::wording`]).

use serde::{Deserialize, Serialize};

use super::interval::{Estimate, estimate};
use super::ranks::trials_needed;
use super::rules::Rules;
use super::verdict::{Better, Comparison, MIN_TRIALS, Verdict, compare};

/// The trials of one setting of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingTrials {
    pub label: String,
    /// Lower is cheaper: less memory, fewer workers, smaller batch.
    pub cost_rank: usize,
    pub values: Vec<f64>,
}

/// One setting's estimate and its comparison with the best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingResult {
    pub label: String,
    pub cost_rank: usize,
    /// None when the setting has no usable trial.
    pub estimate: Option<Estimate>,
    /// This setting (A) against the best (B): `slower` means worse than the best. None for
    /// the best itself and for a setting without usable trials.
    pub vs_best: Option<Comparison>,
}

/// What a sweep found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub better: Better,
    pub rules: Rules,
    /// In the order given.
    pub settings: Vec<SettingResult>,
    /// The setting with the best median (the first one on equal medians).
    pub best: Option<String>,
    /// The best and every setting not significantly and practically worse, in the order given.
    pub tie_group: Vec<String>,
    /// The best, when it beats every other setting by the rule.
    pub winner: Option<String>,
    /// The cheapest member of the tie group, when the group is not every setting and every
    /// comparison was decided.
    pub recommendation: Option<String>,
    /// `faster` (a winner), `no significant difference`, `too few trials`; None when there is
    /// nothing to compare.
    pub verdict: Option<Verdict>,
    /// Settings whose comparison with the best is `too few trials` (or that have no usable
    /// trial).
    pub undecided: Vec<String>,
    /// When too few: how many trials per setting could decide.
    pub more_repeats_needed: Option<usize>,
}

/// Decide a sweep: estimates, comparisons with the best, tie group, winner, recommendation.
pub fn decide(settings: &[SettingTrials], better: Better, rules: &Rules) -> Finding {
    decide_indexed(settings, better, rules).0
}

/// [`decide`], also returning the position of the best (labels need not be unique).
fn decide_indexed(
    settings: &[SettingTrials],
    better: Better,
    rules: &Rules,
) -> (Finding, Option<usize>) {
    let rules = rules.effective();
    let usable: Vec<Vec<f64>> = settings
        .iter()
        .map(|s| {
            let v = s.values.iter().copied();
            v.filter(|x| x.is_finite() && *x > 0.0).collect()
        })
        .collect();
    let estimates: Vec<Option<Estimate>> = usable
        .iter()
        .map(|v| estimate(v, rules.confidence))
        .collect();
    let best = best_index(&estimates, better);
    let comparisons: Vec<Option<Comparison>> = (0..settings.len())
        .map(|i| match best {
            Some(b) if b != i => compare(&usable[i], &usable[b], better, &rules),
            _ => None,
        })
        .collect();
    let verdict_of = |i: usize| comparisons[i].as_ref().map(|c| c.verdict);

    let label = |i: usize| settings[i].label.clone();
    let others: Vec<usize> = (0..settings.len()).filter(|&i| Some(i) != best).collect();
    let undecided: Vec<usize> = others
        .iter()
        .copied()
        .filter(|&i| matches!(verdict_of(i), None | Some(Verdict::TooFewTrials)))
        .collect();
    let tie: Vec<usize> = (0..settings.len())
        .filter(|&i| {
            Some(i) == best || (estimates[i].is_some() && verdict_of(i) != Some(Verdict::Slower))
        })
        .collect();

    let (verdict, winner, recommendation) = if settings.len() < 2 {
        (None, None, None)
    } else if !undecided.is_empty() {
        (Some(Verdict::TooFewTrials), None, None)
    } else if others
        .iter()
        .all(|&i| verdict_of(i) == Some(Verdict::Slower))
    {
        (Some(Verdict::Faster), best, best)
    } else {
        let cheapest = tie.iter().copied().min_by_key(|&i| settings[i].cost_rank);
        let rec = cheapest.filter(|_| tie.len() < settings.len());
        (Some(Verdict::NoSignificantDifference), None, rec)
    };

    let finding = Finding {
        better,
        rules,
        settings: (0..settings.len())
            .map(|i| SettingResult {
                label: label(i),
                cost_rank: settings[i].cost_rank,
                estimate: estimates[i],
                vs_best: comparisons[i].clone(),
            })
            .collect(),
        best: best.map(label),
        tie_group: tie.iter().map(|&i| label(i)).collect(),
        winner: winner.map(label),
        recommendation: recommendation.map(label),
        verdict,
        undecided: undecided.iter().map(|&i| label(i)).collect(),
        more_repeats_needed: (verdict == Some(Verdict::TooFewTrials))
            .then(|| trials_needed(rules.confidence)),
    };
    (finding, best)
}

/// For `--repeat auto`: the indices of the settings that should get another trial — those
/// with fewer than 3 usable trials, those whose comparison with the best is not yet
/// conclusive ([`Comparison::conclusive`]: `too few trials`, or a tie whose interval still
/// allows a difference larger than the smallest effect), and the best itself while any
/// other is. Empty when the sweep is decided; the caller also stops at its maximum repeat
/// count.
pub fn needs_more(settings: &[SettingTrials], better: Better, rules: &Rules) -> Vec<usize> {
    let (finding, best) = decide_indexed(settings, better, rules);
    // A setting other than the best is open while its comparison is missing (no usable
    // trial) or not conclusive.
    let open = |i: usize| {
        Some(i) != best
            && finding.settings[i]
                .vs_best
                .as_ref()
                .is_none_or(|c| !c.conclusive(&finding.rules))
    };
    let any_open = (0..settings.len()).any(open);
    (0..settings.len())
        .filter(|&i| {
            let n = finding.settings[i].estimate.map_or(0, |e| e.n);
            n < MIN_TRIALS || open(i) || (Some(i) == best && any_open)
        })
        .collect()
}

fn best_index(estimates: &[Option<Estimate>], better: Better) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in estimates.iter().enumerate() {
        let Some(e) = e else { continue };
        let improves = match best {
            None => true,
            Some((_, m)) => match better {
                Better::Lower => e.median < m,
                Better::Higher => e.median > m,
            },
        };
        if improves {
            best = Some((i, e.median));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOISE: [f64; 5] = [0.99, 1.0, 1.01, 0.995, 1.005];

    fn setting(label: &str, cost_rank: usize, base: f64, noise: &[f64]) -> SettingTrials {
        SettingTrials {
            label: label.into(),
            cost_rank,
            values: noise.iter().map(|x| base * x).collect(),
        }
    }

    fn sweep(bases: &[(&str, f64)], noise: &[f64]) -> Vec<SettingTrials> {
        let s = bases.iter().enumerate();
        s.map(|(i, (l, b))| setting(l, i, *b, noise)).collect()
    }

    #[test]
    fn middle_settings_tie_and_the_cheapest_is_enough() {
        let s = sweep(
            &[
                ("1MB", 10.0),
                ("4MB", 8.0),
                ("16MB", 6.7),
                ("64MB", 6.65),
                ("256MB", 6.72),
                ("1GB", 7.5),
            ],
            &NOISE,
        );
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.best.as_deref(), Some("64MB"));
        assert_eq!(f.tie_group, ["16MB", "64MB", "256MB"]);
        assert_eq!(f.winner, None);
        assert_eq!(f.recommendation.as_deref(), Some("16MB"));
        assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
        assert!(f.undecided.is_empty() && f.more_repeats_needed.is_none());
        let vs = |i: usize| f.settings[i].vs_best.as_ref().map(|c| c.verdict);
        assert_eq!(vs(5), Some(Verdict::Slower));
        assert_eq!(vs(3), None);
        assert_eq!(
            f.sentence(),
            "16MB..256MB are within noise of each other (no significant difference); 16MB is enough"
        );
        assert!(needs_more(&s, Better::Lower, &Rules::default()).is_empty());
    }

    #[test]
    fn all_tie_recommends_nothing() {
        let s = sweep(&[("1MB", 6.7), ("4MB", 6.68), ("16MB", 6.71)], &NOISE);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.tie_group.len(), 3);
        assert_eq!((f.winner.clone(), f.recommendation.clone()), (None, None));
        assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
        assert_eq!(f.sentence(), "no significant difference between 1MB..16MB");
        let f = decide(&s[..2], Better::Lower, &Rules::default());
        assert_eq!(
            f.sentence(),
            "no significant difference between 1MB and 4MB"
        );
    }

    #[test]
    fn a_clear_winner_is_named() {
        let noise6 = [0.99, 1.0, 1.0, 1.01, 0.995, 1.005];
        let mut s = sweep(&[("1MB", 7.5), ("16MB", 7.3), ("64MB", 8.0)], &noise6);
        s.insert(
            1,
            SettingTrials {
                label: "4MB".into(),
                cost_rank: 1,
                values: vec![6.61, 6.65, 6.69, 6.69, 6.72, 6.80],
            },
        );
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.winner.as_deref(), Some("4MB"));
        assert_eq!(f.recommendation.as_deref(), Some("4MB"));
        assert_eq!(f.tie_group, ["4MB"]);
        assert_eq!(f.verdict, Some(Verdict::Faster));
        assert_eq!(
            f.sentence(),
            "4MB faster than every other setting (6.69 [6.61, 6.80] vs next 7.30)"
        );
        // The same numbers as a throughput: the highest one wins.
        let f = decide(&s, Better::Higher, &Rules::default());
        assert_eq!(f.winner.as_deref(), Some("64MB"));
        assert!(
            f.sentence()
                .starts_with("64MB faster than every other setting (8.00 [")
        );
        assert!(f.sentence().ends_with("vs next 7.50)"));
    }

    #[test]
    fn one_setting_has_nothing_to_compare() {
        let s = sweep(&[("16MB", 6.7)], &NOISE);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.verdict, None);
        assert_eq!(f.best.as_deref(), Some("16MB"));
        assert_eq!(f.sentence(), "one setting run: nothing to compare");
        assert!(needs_more(&s, Better::Lower, &Rules::default()).is_empty());
        assert_eq!(
            needs_more(&s[..0], Better::Lower, &Rules::default()),
            Vec::<usize>::new()
        );
        let one = [setting("16MB", 0, 6.7, &[1.0])];
        assert_eq!(needs_more(&one, Better::Lower, &Rules::default()), [0]);
        assert_eq!(
            decide(&[], Better::Lower, &Rules::default()).sentence(),
            "no setting run: nothing to compare"
        );
    }

    #[test]
    fn too_few_trials_asks_for_more() {
        let three = [0.99, 1.0, 1.01];
        let s = sweep(&[("1MB", 10.0), ("64MB", 6.7), ("1GB", 7.5)], &three);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.verdict, Some(Verdict::TooFewTrials));
        assert_eq!((f.winner.clone(), f.recommendation.clone()), (None, None));
        assert_eq!(f.undecided, ["1MB", "1GB"]);
        assert_eq!(f.more_repeats_needed, Some(4));
        assert_eq!(
            f.sentence(),
            "too few trials to decide: 3 per setting, 4 needed at 95%"
        );
        assert_eq!(needs_more(&s, Better::Lower, &Rules::default()), [0, 1, 2]);
        let strict = Rules::new(0.999, 0.05).unwrap();
        assert_eq!(
            decide(&s, Better::Lower, &strict).sentence(),
            "too few trials to decide: 3 per setting, 7 needed at 99.9%"
        );

        // One setting lost trials: it and the best get more, the decided one does not.
        let mut s = sweep(&[("1MB", 10.0), ("64MB", 6.7), ("1GB", 7.5)], &NOISE);
        s[2].values.truncate(2);
        s[2].values.push(f64::NAN);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.undecided, ["1GB"]);
        assert_eq!(
            f.sentence(),
            "too few trials to decide: 2 to 5 per setting, 4 needed at 95%"
        );
        assert_eq!(needs_more(&s, Better::Lower, &Rules::default()), [1, 2]);

        // No usable trial at all is undecided, not a crash.
        s[2].values = vec![0.0];
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.undecided, ["1GB"]);
        assert!(f.settings[2].estimate.is_none());
        assert_eq!(needs_more(&s, Better::Lower, &Rules::default()), [1, 2]);
    }

    #[test]
    fn a_wide_tie_is_not_an_answer_for_repeat_auto() {
        // 4 a side, 10% apart with ±8% noise: not significant, but the interval still allows
        // a difference well beyond 5%, so auto keeps going; tight noise settles it.
        let wide = [0.92, 1.0, 1.08, 0.96];
        let s = sweep(&[("1MB", 10.0), ("64MB", 10.5)], &wide);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
        let c = f.settings[1].vs_best.as_ref().unwrap();
        assert!(!c.conclusive(&f.rules), "{c:?}");
        assert_eq!(needs_more(&s, Better::Lower, &Rules::default()), [0, 1]);
        let tight = [0.999, 1.0, 1.001, 1.0005, 0.9995];
        let s = sweep(&[("1MB", 10.0), ("64MB", 10.05)], &tight);
        let f = decide(&s, Better::Lower, &Rules::default());
        assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
        assert!(needs_more(&s, Better::Lower, &Rules::default()).is_empty());
    }

    #[test]
    fn serialises_for_json_consumers() {
        let s = sweep(&[("1MB", 10.0), ("64MB", 6.7)], &NOISE);
        let f = decide(&s, Better::Lower, &Rules::default());
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["verdict"], "faster");
        assert_eq!(json["settings"][0]["vs_best"]["verdict"], "slower");
        assert!(json["settings"][1]["estimate"]["ci_low"].is_number());
        let back: Finding = serde_json::from_value(json).unwrap();
        assert_eq!(back, f);
    }
}
