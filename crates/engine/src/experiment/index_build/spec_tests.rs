//! The index-build spec read from its fields: defaults, values and the errors that name
//! their field.

use super::*;
use crate::experiment::lab::spec::ExperimentKind;

#[test]
fn defaults_parse() {
    let s = ExperimentKind::IndexBuild
        .parse_spec(&ParamText::new())
        .unwrap();
    let crate::experiment::lab::spec::ExperimentSpec::IndexBuild(s) = s else {
        panic!()
    };
    assert_eq!(s.rows, 1_000_000);
    assert_eq!(s.orders, [Order::Sorted, Order::Random]);
    // Five settings at once need 6 builds each to decide at 95%.
    assert_eq!(s.trials(), 2 * 5 * 6);
    assert_eq!(s.repeat, Repeat::Fixed(6));
    let again = IndexBuildSpec::parse(&s.to_text()).unwrap();
    assert_eq!(again, s);
}

#[test]
fn bad_values_name_their_field() {
    let p = ParamText::from([
        ("rows".to_string(), "0".to_string()),
        ("mwm".to_string(), "512kB".to_string()),
        ("order".to_string(), "sideways".to_string()),
        ("workers".to_string(), "".to_string()),
    ]);
    let e = ExperimentKind::IndexBuild.parse_spec(&p).unwrap_err();
    let keys: Vec<_> = e.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["rows", "order", "mwm", "workers"], "{e:?}");
    let p = ParamText::from([("mwm".to_string(), "64mb".to_string())]);
    let e = ExperimentKind::IndexBuild.parse_spec(&p).unwrap_err();
    assert!(e[0].1.contains("case-sensitive"), "{e:?}");
    let p = ParamText::from([("mwm".to_string(), "3TB".to_string())]);
    assert!(ExperimentKind::IndexBuild.parse_spec(&p).is_err());
    let p = ParamText::from([("colour".to_string(), "red".to_string())]);
    assert!(
        ExperimentKind::IndexBuild.parse_spec(&p).unwrap_err()[0]
            .1
            .contains("unknown parameter")
    );
}

#[test]
fn orders_parse() {
    assert_eq!(Order::parse("partial:5").unwrap(), Order::Partial(5));
    assert!(Order::parse("partial:0").is_err());
    assert!(Order::parse("partial:x").is_err());
}
