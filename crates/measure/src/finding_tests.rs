//! The sweep rules against hand-computed cases: equivalence shown before "enough", the
//! issue's C-against-B case, settings that block a recommendation, what made the difference,
//! and which settings `--repeat auto` runs again.

use super::*;

const NOISE: [f64; 5] = [0.99, 1.0, 1.01, 0.995, 1.005];
/// Seven trials: enough for the first look of `--repeat auto` (at most 10) with up to four
/// settings.
const NOISE7: [f64; 7] = [0.99, 1.0, 1.01, 0.995, 1.005, 0.998, 1.002];

fn setting(label: &str, cost_rank: usize, base: f64, noise: &[f64]) -> SettingTrials {
    SettingTrials {
        label: label.into(),
        cost_rank,
        values: noise.iter().map(|x| base * x).collect(),
        coords: Vec::new(),
    }
}

fn sweep(bases: &[(&str, f64)], noise: &[f64]) -> Vec<SettingTrials> {
    let s = bases.iter().enumerate();
    s.map(|(i, (l, b))| setting(l, i, *b, noise)).collect()
}

fn vs(f: &Finding, i: usize) -> Option<Verdict> {
    f.settings[i].vs_best.as_ref().map(|c| c.verdict)
}

#[test]
fn the_issues_c_is_not_recommended_against_b() {
    // C = [11.0, 9.9, 11.8, 10.4, 12.0] (cheaper) against the best B = [10.0, 10.3, 9.7,
    // 10.5, 9.6]: the 25 ratios c/b sorted start 0.943, 0.961, 0.990 and end 1.229, 1.237,
    // 1.250; 5 against 5 at 95% take the 3rd from each end: 1.10× [0.99, 1.23]. The interval
    // holds 1 and also 23% slower: not shown equivalent, so not "enough".
    let s = vec![
        SettingTrials {
            label: "C".into(),
            cost_rank: 0,
            values: vec![11.0, 9.9, 11.8, 10.4, 12.0],
            coords: vec![],
        },
        SettingTrials {
            label: "B".into(),
            cost_rank: 1,
            values: vec![10.0, 10.3, 9.7, 10.5, 9.6],
            coords: vec![],
        },
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.best.as_deref(), Some("B"));
    let c = f.settings[0].vs_best.as_ref().unwrap();
    // Welch's t on the logarithms: the interval holds 1 and a difference past 5%.
    assert!(c.ratio_low < 1.0 && c.ratio_high > 1.05, "{c:?}");
    assert!((c.ratio - 1.10).abs() < 0.01, "{c:?}");
    assert_eq!(c.verdict, Verdict::TooFewTrials);
    assert!(c.trials_needed.is_some_and(|n| n > 5), "{c:?}");
    assert_eq!(f.recommendation, None);
    assert_eq!(f.winner, None);
    assert_eq!(f.verdict, Some(Verdict::TooFewTrials));
    // B is shown as good as the best (at most 1% worse than C, by 1/0.99), but C is cheaper
    // and undecided: it blocks.
    assert_eq!(f.equivalent, ["B"]);
    assert_eq!(f.blocking, ["C"]);
    assert!(
        f.sentence()
            .starts_with("too few trials to decide: C undecided against the best (B); about "),
        "{}",
        f.sentence()
    );
    assert!(
        f.sentence()
            .ends_with("trials each would decide (estimated from the spread so far)")
    );
    // repeat auto keeps both running.
    assert_eq!(
        needs_more(&s, Better::Lower, &Rules::default().with_auto(10)),
        [0, 1]
    );
}

#[test]
fn settings_shown_equivalent_make_the_cheapest_enough() {
    // Three settings at once: each pair at 1 − 0.05/3 = 98.33%, where 5 against 5 take the
    // 2nd difference from each end. 16MB against 64MB: 0.75% apart with ±1% noise, so every
    // difference lies within ±2.8%: inside ±5% both ways. 1MB is 50% slower.
    let s = sweep(&[("1MB", 10.0), ("16MB", 6.7), ("64MB", 6.65)], &NOISE);
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.family.pairs, 3);
    assert!((f.family.pair_confidence - (1.0 - 0.05 / 3.0)).abs() < 1e-12);
    assert_eq!(f.best.as_deref(), Some("64MB"));
    assert_eq!(vs(&f, 0), Some(Verdict::Slower));
    assert_eq!(vs(&f, 1), Some(Verdict::NoSignificantDifference));
    assert_eq!(f.equivalent, ["16MB", "64MB"]);
    assert_eq!(f.recommendation.as_deref(), Some("16MB"));
    assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
    assert!(f.blocking.is_empty() && f.undecided.is_empty());
    assert_eq!(
        f.sentence(),
        "16MB and 64MB are within 5% of the best (no significant difference); 16MB is enough, more bought nothing measurable"
    );
    assert_eq!(
        f.level_words(),
        "95% confidence for the 3 pairs together (each interval 98.33%)"
    );
    // With repeat auto (at most 10) the first look is planned at 5 trials each
    // (measure::spending): before that every setting runs; once the same picture holds at 7,
    // the sweep is decided.
    let auto = Rules::default().with_auto(10);
    assert_eq!(Family::of(3, &auto).first_look, 5);
    let four = sweep(&[("1MB", 10.0), ("16MB", 6.7), ("64MB", 6.65)], &NOISE[..4]);
    assert_eq!(needs_more(&four, Better::Lower, &auto), [0, 1, 2]);
    assert!(needs_more(&s, Better::Lower, &auto).is_empty());
    let s = sweep(&[("1MB", 10.0), ("16MB", 6.7), ("64MB", 6.65)], &NOISE7);
    assert!(needs_more(&s, Better::Lower, &auto).is_empty());
}

#[test]
fn a_cheaper_undecided_setting_blocks_the_recommendation() {
    // Four settings: six pairs, each at 1 − 0.05/6 = 99.17%, where 5 against 5 take the 2nd
    // difference from each end. 16MB is 4% behind the best: shown worse (1.019..1.061 lies
    // above 1), not by the 5% that makes it slower, and not shown within 5% either. It is
    // cheaper than the cheapest setting shown as good (64MB), so nothing is recommended yet.
    let s = sweep(
        &[
            ("1MB", 10.0),
            ("16MB", 6.65 * 1.04),
            ("64MB", 6.65),
            ("256MB", 6.66),
        ],
        &NOISE,
    );
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(vs(&f, 1), Some(Verdict::TooFewTrials));
    let c = f.settings[1].vs_best.as_ref().unwrap();
    assert!(
        c.ratio_low > 1.0 && c.ratio_high > 1.05 && c.ratio < 1.05,
        "{c:?}"
    );
    assert_eq!(f.equivalent, ["64MB", "256MB"]);
    assert_eq!(f.blocking, ["16MB"]);
    assert_eq!((f.recommendation.clone(), f.winner.clone()), (None, None));
    assert_eq!(f.verdict, Some(Verdict::TooFewTrials));
    assert!(f.more_repeats_needed.is_some());
    // Four settings under repeat auto (at most 10) first look at 7 each, where the picture
    // is the same: auto runs 16MB again, with the candidates; the slower 1MB is done.
    let s = sweep(
        &[
            ("1MB", 10.0),
            ("16MB", 6.65 * 1.04),
            ("64MB", 6.65),
            ("256MB", 6.66),
        ],
        &NOISE7,
    );
    let auto = Rules::default().with_auto(10);
    assert_eq!(decide(&s, Better::Lower, &auto).blocking, ["16MB"]);
    assert_eq!(needs_more(&s, Better::Lower, &auto), [1, 2, 3]);
}

#[test]
fn a_costlier_setting_that_could_be_the_best_blocks_too() {
    // 64MB has a wide spread around a median 3% above 16MB's: it is not shown worse than
    // anything, so it could be the true best, and neither 16MB nor anything else is shown
    // within 5% of it.
    let s = vec![
        setting("1MB", 0, 10.0, &NOISE),
        setting("16MB", 1, 6.65, &NOISE),
        setting("64MB", 2, 6.85, &[0.85, 1.0, 1.15, 0.9, 1.1]),
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.best.as_deref(), Some("16MB"));
    assert_eq!(vs(&f, 2), Some(Verdict::TooFewTrials));
    assert!(f.equivalent.is_empty());
    assert_eq!(f.blocking, ["64MB"]);
    assert_eq!(f.recommendation, None);
    // What the trials do say: 1MB is slower, the best is 16MB or 64MB, and 16MB is the one
    // to use (the cheapest of that set).
    assert_eq!(f.shown_worse, ["1MB"]);
    assert_eq!(f.may_be_best, ["16MB", "64MB"]);
    assert_eq!(f.pick.as_deref(), Some("16MB"));
    assert!(
        f.sentence().starts_with(
            "the best is among 16MB and 64MB at 95%; 1MB (×1.50 [×1.48, ×1.53]) is slower than the best (16MB; ratios to its time, above ×1 slower); use 16MB, the best and the cheapest of them"
        ),
        "{}",
        f.sentence()
    );
}

#[test]
fn a_clear_winner_is_named_and_recommended() {
    let noise6 = [0.99, 1.0, 1.0, 1.01, 0.995, 1.005];
    let mut s = sweep(&[("1MB", 7.5), ("16MB", 7.3), ("64MB", 8.0)], &noise6);
    s.insert(
        1,
        SettingTrials {
            label: "4MB".into(),
            cost_rank: 1,
            values: vec![6.61, 6.65, 6.69, 6.69, 6.72, 6.80],
            coords: vec![],
        },
    );
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.winner.as_deref(), Some("4MB"));
    assert_eq!(f.recommendation.as_deref(), Some("4MB"));
    assert_eq!(f.equivalent, ["4MB"]);
    assert_eq!(f.verdict, Some(Verdict::Faster));
    assert_eq!(
        f.sentence(),
        "4MB faster than every other setting (6.69 [6.61, 6.80] vs next 7.30)"
    );
    let f = decide(&s, Better::Higher, &Rules::default());
    assert_eq!(f.winner.as_deref(), Some("64MB"));
}

#[test]
fn every_setting_equivalent_recommends_nothing() {
    let s = sweep(&[("1MB", 6.7), ("4MB", 6.68), ("16MB", 6.71)], &NOISE);
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.equivalent.len(), 3);
    assert_eq!((f.winner.clone(), f.recommendation.clone()), (None, None));
    assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
    assert_eq!(
        f.sentence(),
        "no significant difference between 1MB..16MB: all within 5% of the best"
    );
}

#[test]
fn only_the_dimensions_that_matter_are_named() {
    // A grid of workers × memory, cheapest first: (0w, 1MB), (0w, 64MB), (2w, 1MB),
    // (2w, 64MB). 64MB is much faster than 1MB at both worker counts; the workers change
    // nothing measurable. The recommendation is 64MB ×0w, and only the memory matters.
    let cell = |label: &str, rank, w, m, base| SettingTrials {
        coords: vec![w, m],
        ..setting(label, rank, base, &NOISE)
    };
    let s = vec![
        cell("1MB ×0w", 0, 0, 0, 10.0),
        cell("64MB ×0w", 1, 0, 1, 6.65),
        cell("1MB ×2w", 2, 1, 0, 10.1),
        cell("64MB ×2w", 3, 1, 1, 6.64),
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.recommendation.as_deref(), Some("64MB ×0w"));
    assert_eq!(f.matters, [1]);
    // When the workers do matter (2 workers 40% faster), both are named.
    let s = vec![
        cell("1MB ×0w", 0, 0, 0, 10.0),
        cell("64MB ×0w", 1, 0, 1, 6.65),
        cell("1MB ×2w", 2, 1, 0, 10.1),
        cell("64MB ×2w", 3, 1, 1, 4.0),
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.winner.as_deref(), Some("64MB ×2w"));
    assert_eq!(f.matters, [0, 1]);
}

#[test]
fn too_few_trials_say_how_many_would_reach_the_level() {
    // Four trials each with about 1% spread decide three settings (Welch's t on logs)...
    let four = [0.99, 1.0, 1.01, 1.005];
    let s = sweep(&[("1MB", 10.0), ("64MB", 6.7), ("1GB", 7.5)], &four);
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.winner.as_deref(), Some("64MB"), "{}", f.sentence());
    // ...with about 10% they do not.
    let four = [0.9, 1.0, 1.12, 1.04];
    let s = sweep(&[("1MB", 10.0), ("64MB", 6.7), ("1GB", 7.5)], &four);
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.verdict, Some(Verdict::TooFewTrials));
    assert_eq!(f.undecided, ["1GB"]);
    assert_eq!(f.shown_worse, ["1MB"]);
    assert_eq!(f.more_repeats_needed, Some(15));
    assert_eq!(
        f.sentence(),
        "the best is among 64MB and 1GB at 95%; 1MB (×1.49 [×1.21, ×1.84]) is slower than the best (64MB; ratios to its time, above ×1 slower); use 64MB, the best and the cheapest of them; about 15 trials each would narrow the set (estimated from the spread so far)"
    );
    // The same trials as two settings reach 95% and decide.
    let f = decide(&s[..2], Better::Lower, &Rules::default());
    assert_eq!(f.winner.as_deref(), Some("64MB"));
}

#[test]
fn missing_trials_leave_a_setting_undecided_not_a_crash() {
    let mut s = sweep(&[("1MB", 10.0), ("64MB", 6.7), ("1GB", 7.5)], &NOISE);
    s[2].values = vec![0.0, f64::NAN];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.undecided, ["1GB"]);
    assert!(f.settings[2].estimate.is_none());
    assert_eq!(f.family.settings, 2);
    // 1GB was never measured: it could be the best, so nothing is recommended.
    assert_eq!(f.recommendation, None);
    assert_eq!(f.verdict, Some(Verdict::TooFewTrials));
    assert_eq!(
        needs_more(&s, Better::Lower, &Rules::default().with_auto(10)),
        [1, 2]
    );
}

#[test]
fn one_setting_has_nothing_to_compare() {
    let s = sweep(&[("16MB", 6.7)], &NOISE);
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.verdict, None);
    assert_eq!(f.sentence(), "one setting run: nothing to compare");
    assert!(needs_more(&s, Better::Lower, &Rules::default()).is_empty());
    let one = [setting("16MB", 0, 6.7, &[1.0])];
    assert_eq!(needs_more(&one, Better::Lower, &Rules::default()), [0]);
    assert_eq!(
        decide(&[], Better::Lower, &Rules::default()).sentence(),
        "no setting run: nothing to compare"
    );
}

#[test]
fn serialises_for_json_consumers() {
    let s = sweep(&[("1MB", 10.0), ("64MB", 6.7)], &NOISE);
    let f = decide(&s, Better::Lower, &Rules::default());
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(json["verdict"], "faster");
    assert_eq!(json["settings"][0]["vs_best"]["verdict"], "slower");
    assert_eq!(json["family"]["pairs"], 1);
    assert_eq!(json["recommendation"], "64MB");
    let back: Finding = serde_json::from_value(json).unwrap();
    assert_eq!(back, f);
}

#[test]
fn a_costlier_undecided_setting_is_named_beside_the_answer() {
    // 64MB is 4% behind the best 16MB: shown worse (so it cannot be the best), not by 5%,
    // and not shown within 5%. It is costlier, so it does not block the answer; the sentence
    // still says it is open and what would settle it.
    let s = sweep(
        &[("1MB", 10.0), ("16MB", 6.65), ("64MB", 6.65 * 1.04)],
        &NOISE,
    );
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.recommendation.as_deref(), Some("16MB"));
    assert_eq!(f.verdict, Some(Verdict::NoSignificantDifference));
    assert_eq!(f.undecided, ["64MB"]);
    assert!(f.blocking.is_empty() && f.more_repeats_needed.is_none());
    let n = f.trials_to_settle(&["64MB".to_string()]).unwrap();
    assert_eq!(
        f.sentence(),
        format!(
            "16MB is enough: no setting is shown better by more than 5%; 64MB undecided against the best (16MB); about {n} trials each would decide (estimated from the spread so far)"
        )
    );
}
