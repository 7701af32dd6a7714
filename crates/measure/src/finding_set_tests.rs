//! The set that may be best (multiple comparisons with the best read from the all-pairs
//! intervals) on synthetic trials: the 450× index case decided with the default six
//! repeats, identical settings naming nothing, and the cybertec-10m pattern (too much memory
//! slower on random input, too little on sorted) producing the set and "slower" sentences.

use super::*;

fn setting(label: &str, cost_rank: usize, values: Vec<f64>) -> SettingTrials {
    SettingTrials {
        label: label.into(),
        cost_rank,
        values,
        coords: Vec::new(),
    }
}

/// Six trials with about 8% spread (the host noise of the runs, smaller than its worst).
const NOISE6: [f64; 6] = [0.93, 1.05, 0.98, 1.09, 1.0, 0.95];

fn scaled(base: f64, rot: usize) -> Vec<f64> {
    (0..6).map(|i| base * NOISE6[(i + rot) % 6]).collect()
}

#[test]
fn a_450x_difference_is_decided_with_the_default_repeats() {
    // The item 1: no index ~22–28 ms, either index ~0.03–0.07 ms, six trials each.
    let s = vec![
        setting("no index", 0, vec![25.0, 22.0, 28.0, 24.0, 26.5, 23.0]),
        setting("index 1", 1, vec![0.031, 0.052, 0.044, 0.069, 0.035, 0.048]),
        setting("index 2", 2, vec![0.047, 0.033, 0.061, 0.039, 0.055, 0.042]),
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.shown_worse, vec!["no index".to_string()]);
    assert_eq!(
        f.may_be_best,
        vec!["index 1".to_string(), "index 2".to_string()]
    );
    let none = f.setting("no index").unwrap().vs_best.as_ref().unwrap();
    assert_eq!(none.verdict, Verdict::Slower);
    assert!(none.ratio_low > 100.0, "{none:?}");
    // The two indexes are not told apart with six trials at 40% spread: the cheaper is the
    // one to use, with its interval against the best.
    assert_eq!(f.pick.as_deref(), Some("index 1"));
    let text = f.sentence();
    assert!(
        text.starts_with("the best is among index 1 and index 2 at 95%; no index ("),
        "{text}"
    );
    assert!(
        text.contains("is slower than the best (index 2; "),
        "{text}"
    );
    assert!(
        text.contains("; use index 1, the cheapest of them: "),
        "{text}"
    );
    assert!(text.contains("to narrow the set"), "{text}");
}

#[test]
fn identical_settings_name_no_set_and_nothing_slower() {
    let s: Vec<SettingTrials> = (0..5)
        .map(|i| setting(&format!("s{i}"), i, scaled(10.0, i)))
        .collect();
    let f = decide(&s, Better::Lower, &Rules::default());
    assert!(f.shown_worse.is_empty() && f.pick.is_none() && f.winner.is_none());
    assert_eq!(f.may_be_best.len(), 5);
    assert!(
        f.sentence().starts_with("too few trials to decide"),
        "{}",
        f.sentence()
    );
}

/// The cybertec-10m ladder, 1MB..4GB, with the shape the table showed.
fn ladder(medians: [f64; 7]) -> Vec<SettingTrials> {
    let labels = ["1MB", "4MB", "16MB", "64MB", "256MB", "1GB", "4GB"];
    (0..7)
        .map(|i| setting(labels[i], i, scaled(medians[i], i)))
        .collect()
}

#[test]
fn the_cybertec_pattern_names_the_set_and_what_is_slower() {
    // Random input: 1GB and 4GB slower (+37% at 4GB), the rest within noise of each other.
    let f = decide(
        &ladder([10.0, 10.2, 10.1, 9.9, 10.3, 13.6, 13.7]),
        Better::Lower,
        &Rules::default(),
    );
    assert_eq!(f.shown_worse, vec!["1GB".to_string(), "4GB".to_string()]);
    assert_eq!(f.pick.as_deref(), Some("1MB"));
    let text = f.sentence();
    assert!(
        text.starts_with("the best is among 1MB..256MB at 95%; 1GB (×1.3"),
        "{text}"
    );
    assert!(text.contains(") and 4GB (×1.3"), "{text}");
    assert!(
        text.contains("are slower than the best (64MB; ratios to its time, above ×1 slower); use 1MB, the cheapest"),
        "{text}"
    );
    // Sorted input: 1MB +64% slower than 4GB, everything else undecided.
    let f = decide(
        &ladder([16.4, 10.6, 10.4, 10.2, 10.1, 10.0, 10.05]),
        Better::Lower,
        &Rules::default(),
    );
    assert_eq!(f.shown_worse, vec!["1MB".to_string()]);
    // 4MB's median is 6% behind the best's, yet nothing shows it worse: the cheapest member,
    // said with its interval (a rule on the point against the best's flattered median would
    // flip between runs of the same command).
    assert_eq!(f.pick.as_deref(), Some("4MB"));
    let text = f.sentence();
    assert!(
        text.starts_with("the best is among 4MB..4GB at 95%; 1MB (×1.6"),
        "{text}"
    );
    assert!(text.contains("is slower than the best (1GB; "), "{text}");
}

#[test]
fn a_cheaper_member_too_wide_to_say_is_passed_over_and_named() {
    // "a" is the cheapest that may be best, but its trials scatter tenfold: its interval
    // against the best says nothing, so the advice is the next cheapest ("b"), and the
    // sentence names "a" with its span instead of calling "b" the cheapest of them.
    let s = vec![
        setting("none", 0, scaled(40.0, 0)),
        setting("a", 1, vec![3.0, 30.0, 5.0, 40.0, 8.0, 25.0]),
        setting("b", 2, scaled(10.2, 2)),
        setting("c", 3, scaled(10.0, 3)),
    ];
    let f = decide(&s, Better::Lower, &Rules::default());
    assert_eq!(f.shown_worse, ["none"], "{}", f.sentence());
    assert!(f.may_be_best.contains(&"a".to_string()), "{}", f.sentence());
    assert_eq!(f.pick.as_deref(), Some("b"), "{}", f.sentence());
    let text = f.sentence();
    assert!(
        text.contains("; use b, the cheapest of them whose interval says something: ×"),
        "{text}"
    );
    assert!(
        text.contains(
            "the cheaper a may be as good, but its interval against the best is too wide to say (×"
        ),
        "{text}"
    );
}
