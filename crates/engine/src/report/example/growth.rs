//! The example growth run: a `pulp-quick` sweep as a sandbox measured it, with the index
//! sizes under the names real runs write.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use crate::experiment::growth::{
    Design, GrowMode, GrowStats, GrowthReport, GrowthSpec, GrowthStep,
};
use crate::experiment::{ExperimentSpec, ReportBody, RunReport};

/// A step of [`growth`]: design, versions, rows, the writes, warm and cold reads (seconds),
/// table and index bytes, projected.
type Step<'a> = (
    &'a str,
    u64,
    u64,
    &'a [f64],
    &'a [f64],
    &'a [f64],
    u64,
    u64,
    bool,
);

/// A finished `pulp-quick` growth run (1k units, steps 0/10/100, projected to 1G pairs),
/// with the numbers a sandbox measured, its summary computed.
pub fn growth(run_id: &str) -> RunReport {
    let spec = growth_spec();
    let mut body = GrowthReport::new(&spec);
    body.steps
        .extend(GROWTH_STEPS.into_iter().map(|s| growth_step(&spec, s)));
    body.summarize(&[], true);
    growth_report(run_id, spec, body)
}

/// The `pulp-quick` growth parameters over the kind's defaults, parsed.
fn growth_spec() -> GrowthSpec {
    let mut p = crate::experiment::ExperimentKind::Growth.defaults();
    for (k, v) in [
        ("units", "1k"),
        ("steps", "0,10,100"),
        ("design", "snapshot,ranges"),
        ("key-shape", "uuid"),
        ("repeat", "4"),
        ("target-rows", "1e9"),
    ] {
        p.insert(k.into(), v.into());
    }
    let Ok(ExperimentSpec::Growth(spec)) = crate::experiment::ExperimentKind::Growth.parse_spec(&p)
    else {
        unreachable!("the example's parameters parse")
    };
    spec
}

/// A mebibyte, for the step sizes below.
const MB: u64 = 1 << 20;

/// The steps of [`growth`], as a sandbox measured them (the 1M-version ones projected).
const GROWTH_STEPS: [Step<'static>; 8] = [
    (
        "snapshot",
        0,
        0,
        &[0.045, 0.040, 0.050, 0.046],
        &[0.00035, 0.00034, 0.0035, 0.00036],
        &[0.00073, 0.00064, 0.00088, 0.00075],
        0,
        32 << 10,
        false,
    ),
    (
        "snapshot",
        10,
        10_000,
        &[0.118, 0.048, 0.180, 0.120],
        &[0.00037, 0.00034, 0.00040, 0.00038],
        &[0.00073, 0.00061, 0.0019, 0.00074],
        784 << 10,
        MB,
        false,
    ),
    (
        "snapshot",
        100,
        100_000,
        &[0.058, 0.036, 0.078, 0.060],
        &[0.00037, 0.00033, 0.00040, 0.00038],
        &[0.0012, 0.00080, 0.0036, 0.0013],
        7_654_604,
        9_646_899,
        false,
    ),
    (
        "snapshot",
        1_000_000,
        1_000_000_000,
        &[],
        &[],
        &[],
        76_772_802_560,
        95_998_101_504,
        true,
    ),
    (
        "ranges",
        0,
        0,
        &[0.0035, 0.0034, 0.046, 0.0036],
        &[0.00033, 0.00031, 0.00058, 0.00034],
        &[0.00069, 0.00056, 0.0043, 0.00070],
        0,
        24 << 10,
        false,
    ),
    (
        "ranges",
        10,
        1090,
        &[0.0051, 0.0037, 0.0100, 0.0052],
        &[0.00033, 0.00032, 0.00035, 0.00034],
        &[0.00061, 0.00053, 0.00072, 0.00062],
        112 << 10,
        128 << 10,
        false,
    ),
    (
        "ranges",
        100,
        1990,
        &[0.0027, 0.0012, 0.0037, 0.0028],
        &[0.00039, 0.00035, 0.00056, 0.00040],
        &[0.00073, 0.00057, 0.00092, 0.00074],
        216 << 10,
        208 << 10,
        false,
    ),
    (
        "ranges",
        1_000_000,
        10_000_000,
        &[],
        &[],
        &[],
        1_846_835_200,
        1_534_304_256,
        true,
    ),
];

/// One step of the table as the report records it: medians of the repeats, or for a projected
/// step the design's fixed estimates, the disk it would need and how far it reaches.
fn growth_step(spec: &GrowthSpec, step: Step<'static>) -> GrowthStep {
    let (design, versions, rows, w, r, c, table, index, projected) = step;
    let median = |v: &[f64]| crate::measure::stats::median(v);
    let design = if design == "snapshot" {
        Design::Snapshot
    } else {
        Design::Ranges
    };
    let (write, read) = if projected {
        (
            Some(if design == Design::Snapshot {
                0.073
            } else {
                0.0038
            }),
            Some(if design == Design::Snapshot {
                0.00036
            } else {
                0.616
            }),
        )
    } else {
        (median(w), median(r))
    };
    GrowthStep {
        design,
        versions,
        rows,
        pairs: versions * 1000,
        projected,
        write_seconds: write,
        write_repeats: w.to_vec(),
        read_seconds: read,
        read_repeats: r.to_vec(),
        read_cold_seconds: median(c),
        read_cold_repeats: c.to_vec(),
        read_rows: (!projected).then_some(1000),
        read_versions: Vec::new(),
        content_digest: None,
        table_bytes: table,
        index_bytes: index_split(index, &spec.index_names(design)),
        node_bytes: Vec::new(),
        bytes_per_row: (rows > 0).then(|| (table + index) as f64 / rows as f64),
        grow: (!projected && versions > 0).then(|| rebuild_stats(rows)),
        disk_needed_bytes: projected.then_some(215 << 30),
        fits_disk: projected.then_some(false),
        reach: projected.then_some(10_000.0),
        replicas: Vec::new(),
        combo: 0,
        settings: BTreeMap::new(),
        checkpoint: (!projected).then_some(true),
        host: None,
    }
}

/// `total` index bytes spread over the design's indexes by the names a run reports them
/// under (the first takes what does not divide evenly), so the sizes add up to the step's.
fn index_split(total: u64, names: &[&str]) -> BTreeMap<String, u64> {
    let each = total / names.len() as u64;
    let first = total - each * (names.len() as u64 - 1);
    let size = |i: usize| if i == 0 { first } else { each };
    names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), size(i)))
        .collect()
}

/// A rebuild of `rows` rows in 0.3 s (copy 0.1, index 0.15, vacuum 0.05).
fn rebuild_stats(rows: u64) -> GrowStats {
    GrowStats {
        mode: GrowMode::Rebuild,
        from_versions: 0,
        rows,
        seconds: 0.3,
        copy_seconds: 0.1,
        index_seconds: 0.15,
        vacuum_seconds: 0.05,
        copy_rows_per_second: rows as f64 / 0.1,
        rows_per_second: rows as f64 / 0.3,
    }
}

/// The run around a growth `body`: 3.8 s on 2026-12-03 on the example host and sandbox.
fn growth_report(run_id: &str, spec: GrowthSpec, body: GrowthReport) -> RunReport {
    let started_at = Utc
        .with_ymd_and_hms(2026, 12, 3, 15, 3, 41)
        .single()
        .expect("a date");
    let mut r = super::with_body(ReportBody::Growth(Box::new(body)));
    r.run_id = run_id.into();
    r.started_at = started_at;
    r.finished_at = started_at + chrono::Duration::milliseconds(3800);
    r.preset = Some("pulp-quick".into());
    r.target = "pglab@/tmp/pglab/sandbox/.s.PGSQL.54321 db=pglab".into();
    r.spec_key = ExperimentSpec::Growth(spec).spec_key();
    r
}
