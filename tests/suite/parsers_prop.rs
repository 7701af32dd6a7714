//! Property tests over every parser a user reaches: any input either parses to a value in
//! range or returns a sentence — never a panic. (Case counts: PROPTEST_CASES, default 2000.)

use pglab::experiment::{ExperimentKind, ParamText};
use pglab::measure::units::*;
use pglab::server::conninfo;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(2000)
}

/// Strings that look like what users type: digits, units, separators, junk.
fn userish() -> impl Strategy<Value = String> {
    prop_oneof![
        ".*",
        "[0-9._eE+-]{0,12}[ ]?(B|kB|MB|GB|TB|mb|k|M|G|ms|s|min|h|x)?",
        "[0-9kMGBTmb.,_*x ]{0,30}",
        "([0-9]{1,6}(MB|GB|kB)?\\.\\.[0-9]{1,6}(MB|GB|kB)?\\*[0-9.]{1,4})",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn sizes(s in userish()) {
        if let Ok(v) = parse_size(&s) {
            prop_assert!(v.bytes < 10_000_000_000_000_000_000);
            prop_assert!(!v.text.is_empty());
        } else {
            prop_assert!(!parse_size(&s).unwrap_err().0.is_empty());
        }
    }

    #[test]
    fn counts(s in userish()) {
        match parse_count(&s) {
            Ok(n) => prop_assert!(n <= 1_000_000_000_000_000),
            Err(e) => prop_assert!(!e.0.is_empty()),
        }
    }

    #[test]
    fn durations(s in userish()) {
        match parse_duration(&s) {
            Ok(d) => prop_assert!(d.as_secs_f64() <= 1e9),
            Err(e) => prop_assert!(!e.0.is_empty()),
        }
    }

    #[test]
    fn lists_and_ranges(s in userish()) {
        if let Ok(v) = parse_size_list(&s) { prop_assert!(!v.is_empty() && v.len() <= 10_000); }
        if let Ok(v) = parse_count_list(&s) { prop_assert!(!v.is_empty() && v.len() <= 10_000); }
    }

    #[test]
    fn connection_strings(s in prop_oneof![
        ".*",
        "(postgres|postgresql)://[a-z%:@\\[\\]0-9.,/?=&_-]{0,40}",
        "([a-z_]{1,12} ?= ?('[^']{0,8}'?|[a-z0-9/._-]{0,10}) ){0,4}",
    ]) {
        let env: std::collections::BTreeMap<&str, &str> = Default::default();
        match conninfo::resolve(Some(&s), &env) {
            Ok(p) => { prop_assert!(p.port > 0); prop_assert!(!p.hosts.is_empty()); }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn experiment_parameters(
        kind in prop::sample::select(ExperimentKind::ALL.to_vec()),
        pairs in prop::collection::vec((prop::sample::select(vec!["rows", "mwm", "order", "workers", "repeat", "key", "seed", "warmup", "batch", "clients", "method", "units", "steps", "churn", "bogus"]), userish()), 0..5),
    ) {
        let p: ParamText = pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        match kind.parse_spec(&p) {
            Ok(spec) => {
                let _ = spec.estimate();
                let again = kind.parse_spec(&spec.to_text());
                prop_assert!(again.is_ok(), "to_text must parse back: {:?}", again);
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                for (field, sentence) in errors {
                    prop_assert!(!field.is_empty() && !sentence.is_empty());
                }
            }
        }
    }
}
