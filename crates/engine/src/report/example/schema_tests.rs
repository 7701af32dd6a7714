//! The example reports against their kinds' schemas: what tests, the TUI's snapshots and the
//! history's tests read must be a record a real run could have written.

use crate::experiment::ReportBody;
use crate::experiment::lab::record_schema::violations;

const INDEX_BUILD: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../assets/schema/index-build.schema.json"
));
const GROWTH: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../assets/schema/growth.schema.json"
));

#[test]
fn every_example_report_is_in_its_kinds_schema() {
    let examples = [
        super::cybertec_10m("a"),
        super::decided_10m("b"),
        super::growth("c"),
    ];
    for r in &examples {
        let schema = match &r.body {
            ReportBody::IndexBuild(_) => INDEX_BUILD,
            ReportBody::Growth(_) => GROWTH,
            other => panic!("no example of this kind was expected: {other:?}"),
        };
        let errors = violations(schema, r);
        assert!(errors.is_empty(), "{}: {errors:#?}", r.run_id);
    }
}

#[test]
fn the_growth_example_names_each_index_of_its_designs() {
    // Real runs write one size per index of the design's table, never a total of their own.
    let r = super::growth("g");
    let ReportBody::Growth(g) = &r.body else {
        unreachable!()
    };
    for s in &g.steps {
        let names: Vec<&str> = s.index_bytes.keys().map(String::as_str).collect();
        let mut want = g.params.index_names(s.design);
        want.sort_unstable();
        assert_eq!(names, want, "{:?} at {} versions", s.design, s.versions);
    }
}
