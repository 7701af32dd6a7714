//! A sampled index-build on an existing table projects each setting's build time to the
//! whole table: the builds at the three sample sizes are fitted with
//! [`crate::measure::projection::project_nlogn`] and the time at the table's row count is
//! given with its prediction interval, widened by the model's error (the smaller samples'
//! fit predicting the largest). Every sentence that shows a projected figure says it is
//! projected, from what, and how far.
//!
//! A sample of fraction f sorts f of the rows: built at `maintenance_work_mem` M·f it sorts as
//! the whole table would at M (in memory, or on disk in as many runs). So each sample builds
//! the setting M at M·f ([`sample_memory`]), and the projection for the table at M is fitted
//! to builds in the table's own regime. PostgreSQL's least `maintenance_work_mem` is 1MB: a
//! sample whose M·f falls below it sorts with more memory than the table would, stands for
//! the table at 1MB ÷ f, and is left out of M's fit. What the samples could not show (sizes
//! that sorted in different ways, a table whose sort would not fit where the samples' did,
//! copies narrower than the table) is said as a confounder.

use super::own_table::ProjectionLine;
use super::report::{IndexBuildReport, IndexTrial};
use super::spec::{MWM_MIN, Order};
use super::summary::{setting_label, settings};
use crate::experiment::lab::decision::format_percent;
use crate::measure::projection::{Projection, project_nlogn};
use crate::measure::units::{Size, format_bytes, format_count, format_seconds};

/// What the projection says: the lines, the findings that show them, the confounders.
#[derive(Default)]
pub(crate) struct Projected {
    pub lines: Vec<ProjectionLine>,
    pub findings: Vec<String>,
    pub confounders: Vec<String>,
}

/// The memory a sample of `fraction` builds the setting `m` at: m × fraction to the kB, and
/// never below PostgreSQL's least (1MB).
pub(crate) fn sample_memory(m: &Size, fraction: f64) -> Size {
    let kb = ((m.bytes as f64 * fraction) / 1024.0).round() as u64;
    Size::from_bytes((kb * 1024).max(MWM_MIN))
}

/// Whether a sample of `fraction` built at `built` bytes sorts as the table at `m` bytes:
/// its memory was scaled, not raised to the 1MB floor.
pub(crate) fn stands_for(m: u64, built: u64, fraction: f64) -> bool {
    built as f64 <= m as f64 * fraction + 1024.0
}

/// The first line a sampled run's report, chart, JSON and TUI show: a projection, from which
/// sample, of which table and how many rows; for an unsampled run on a table, that table.
pub(crate) fn headline(r: &IndexBuildReport) -> Option<String> {
    let (what, how) = headline_parts(r)?;
    Some(format!("{what}: {how}"))
}

/// The headline in two parts: what was measured ("projection from a 10% sample of s.t (k),
/// 1M rows", short enough for a chart's title) and how.
pub(crate) fn headline_parts(r: &IndexBuildReport) -> Option<(String, String)> {
    let own = r.own.as_ref()?;
    let cols = own.columns.join(", ");
    let rows = own
        .target_rows(&r.datasets)
        .map(|n| {
            let approx = if own.rows_counted { "" } else { "≈" };
            format!("{approx}{} rows", format_count(n))
        })
        .unwrap_or_else(|| "rows unknown".into());
    let Some(pct) = r.params.table.as_ref().and_then(|t| t.sample) else {
        return Some((
            format!("measured on {} ({cols}), {rows}", own.table),
            format!("built on {}", own.built_on),
        ));
    };
    let sizes: Vec<String> = r
        .params
        .orders
        .iter()
        .filter_map(|o| Some(format_percent(o.fraction()?)))
        .collect();
    // Runs since memory scaling build every sample at M × fraction; older records did not.
    let scaled = if r.trials.is_empty() || r.trials.iter().any(|t| t.built_at_bytes.is_some()) {
        ", maintenance_work_mem scaled by each sample's fraction"
    } else {
        ""
    };
    Some((
        format!(
            "projection from a {} sample of {} ({cols}), {rows}",
            format_percent(pct / 100.0),
            own.table
        ),
        format!(
            "built on samples of {}{scaled}; the whole table was not built",
            sizes.join(", ")
        ),
    ))
}

/// One setting of the sweep: (combination, workers, memory).
type Key<'a> = (usize, u32, &'a Size);

/// The timed builds of one setting on one dataset.
fn trials_of<'a>(
    r: &'a IndexBuildReport,
    order: Order,
    (c, w, m): Key<'a>,
) -> impl Iterator<Item = &'a IndexTrial> + 'a {
    r.trials.iter().filter(move |t| {
        !t.warmup
            && t.order == order
            && t.combo == c
            && t.workers_requested == w
            && t.maintenance_work_mem_bytes == m.bytes
    })
}

/// The sample datasets of a sampled run, smallest first.
fn samples(r: &IndexBuildReport) -> Vec<(Order, u64)> {
    let mut out: Vec<(Order, u64)> = r
        .datasets
        .iter()
        .filter(|d| matches!(d.order, Order::Copy(ppm) if ppm < 1_000_000))
        .map(|d| (d.order, d.rows))
        .collect();
    out.sort_by_key(|d| d.1);
    out
}

/// Project every setting that ran at two sample sizes or more (in its own regime).
pub(crate) fn project(r: &IndexBuildReport) -> Projected {
    let mut out = Projected::default();
    let Some(own) = &r.own else {
        return out;
    };
    let samples = samples(r);
    if samples.len() < 2 {
        return out;
    }
    let Some(n) = own.target_rows(&r.datasets) else {
        return out;
    };
    let how_many = if own.rows_counted {
        format!("{} rows", format_count(n))
    } else {
        format!("≈{} rows by the planner's estimate", format_count(n))
    };
    for (c, w, m) in settings(&r.params) {
        let label = setting_label(&r.params, c, w, &m.text);
        let at = Target {
            label: &label,
            n,
            how_many: &how_many,
        };
        if let Some(p) = project_setting(r, &samples, (c, w, &m), &at, &mut out) {
            out.lines.push(ProjectionLine {
                setting: label.clone(),
                workers: w,
                maintenance_work_mem: m.text.clone(),
                maintenance_work_mem_bytes: m.bytes,
                combo: c,
                projection: p,
            });
        }
    }
    if let Some(why) = narrower_copies(r) {
        out.confounders.push(why);
    }
    out
}

/// What a setting is projected to: its label, the table's rows and how they are known.
struct Target<'a> {
    label: &'a str,
    n: f64,
    how_many: &'a str,
}

/// The sample sizes whose builds of setting `key` stand for the table at its memory (the
/// others were raised to the 1MB floor), and the fractions left out.
fn usable(
    r: &IndexBuildReport,
    samples: &[(Order, u64)],
    key: Key<'_>,
) -> (Vec<(Order, u64)>, Vec<f64>) {
    let mut used = Vec::new();
    let mut floored = Vec::new();
    for &(order, rows) in samples {
        let f = order.fraction().unwrap_or(1.0);
        let mut ts = trials_of(r, order, key).peekable();
        if ts.peek().is_none() {
            continue;
        }
        if ts.any(|t| {
            t.built_at_bytes
                .is_some_and(|b| !stands_for(key.2.bytes, b, f))
        }) {
            floored.push(f);
        } else {
            used.push((order, rows));
        }
    }
    (used, floored)
}

/// One setting's projection, its finding and confounders; None when it cannot be projected
/// (the finding says why).
fn project_setting(
    r: &IndexBuildReport,
    samples: &[(Order, u64)],
    key: Key<'_>,
    at: &Target<'_>,
    out: &mut Projected,
) -> Option<Projection> {
    let label = at.label;
    let (used, floored) = usable(r, samples, key);
    if used.len() < 2 && !floored.is_empty() {
        out.findings.push(floor_sentence(label, key.2, &floored));
        return None;
    }
    let points: Vec<(f64, f64)> = used
        .iter()
        .flat_map(|&(order, rows)| trials_of(r, order, key).map(move |t| (rows as f64, t.seconds)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let Some(p) = project_nlogn(&points, at.n, r.params.decision.confidence) else {
        out.findings.push(format!(
            "{label}: no projection to the whole table: the build time did not grow with the sample size (samples this small time mostly fixed costs: use a larger sample)"
        ));
        return None;
    };
    let scaled = r.trials.iter().any(|t| t.built_at_bytes.is_some());
    out.findings.push(projection_sentence(at, &p, scaled));
    out.confounders.extend(model_confounder(label, &p));
    if !floored.is_empty() {
        out.confounders.push(format!(
            "{label}: left out of the fit the {} sample(s), whose {} × fraction is below PostgreSQL's least maintenance_work_mem (1MB): they sorted with more memory than the table would",
            floored.iter().map(|f| format_percent(*f)).collect::<Vec<_>>().join(", "),
            key.2.text
        ));
    }
    out.confounders
        .extend(regime_confounders(r, &used, key, at, scaled));
    Some(p)
}

/// "projected for the whole table (…): 1.6 s [1.1 s, 2.1 s] (…)".
fn projection_sentence(at: &Target<'_>, p: &Projection, scaled: bool) -> String {
    let model_error = match p.model_miss {
        Some(miss) => format!(
            ", widened ±{:.1}% for the model's error (fitted to the smaller samples it missed the largest by {:+.1}%)",
            p.model_widening * 100.0,
            miss * 100.0
        ),
        None => {
            ", the fit's noise only (two sample sizes: the model's error is not measured)".into()
        }
    };
    format!(
        "{}: projected for the whole table ({}, ×{:.0} the largest sample): {} [{}, {}] ({} prediction interval of one build{model_error}; {} fitted to {} builds at {} sample sizes{}, r² {:.2})",
        at.label,
        at.how_many,
        p.reach,
        format_seconds(p.value),
        format_seconds(p.low),
        format_seconds(p.high),
        format_percent(p.confidence),
        p.model,
        p.trials,
        p.sizes,
        if scaled {
            " built at maintenance_work_mem × the sample's fraction"
        } else {
            ""
        },
        p.r2
    )
}

/// When the model bends (the leave-out missed by more than the flag), or its error could not
/// be measured (two sample sizes).
fn model_confounder(label: &str, p: &Projection) -> Option<String> {
    let Some(miss) = p.model_miss else {
        return Some(format!(
            "{label}: projected from two sample sizes, so the model's error is not measured and the interval holds the fit's noise alone; a larger sample gives three sizes that scale (and the check)"
        ));
    };
    p.model_bends().then(|| {
        format!(
            "{label}: the n·log n model fitted to the smaller samples {} the largest by {:.0}%: the build time grows {} than the model, so the projection is approximate (its interval is widened for it); a larger sample or a build of the whole table would tell",
            if miss < 0.0 { "under-predicted" } else { "over-predicted" },
            miss.abs() * 100.0,
            if miss < 0.0 { "faster" } else { "slower" }
        )
    })
}

/// Why a setting has no projection: too few samples could sort in its memory × fraction.
fn floor_sentence(label: &str, m: &Size, floored: &[f64]) -> String {
    let largest = floored.iter().copied().fold(0.0, f64::max);
    // Two sizes (the largest and the half of it) must reach M × fraction ≥ 1MB.
    let need = 2.0 * MWM_MIN as f64 / m.bytes as f64;
    let hint = if need < 1.0 {
        format!("a sample of at least {} projects it", format_percent(need))
    } else {
        "no sample can: build on the whole table (index-build without sample) to measure it".into()
    };
    format!(
        "{label}: no projection to the whole table: {} × the fraction of the {} sample(s) is below PostgreSQL's least maintenance_work_mem (1MB), so they sort as the table would at {} or more, not at {}; {hint}",
        m.text,
        floored
            .iter()
            .map(|f| format_percent(*f))
            .collect::<Vec<_>>()
            .join(", "),
        format_bytes((MWM_MIN as f64 / largest.max(1e-9)) as u64),
        m.text
    )
}

/// How the builds of one sample size sorted.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Regime {
    /// In memory, using at most this many kB.
    Memory(f64),
    Disk,
}

/// The regime of a setting's builds on one sample (None: `trace_sort` said nothing).
fn regime(r: &IndexBuildReport, order: Order, key: Key<'_>) -> Option<Regime> {
    let mut out = None;
    for t in trials_of(r, order, key) {
        let s = t.sort.as_deref()?;
        if s.starts_with("external") {
            return Some(Regime::Disk);
        }
        let kb = s
            .strip_prefix("in-memory sort, ")?
            .split(' ')
            .next()?
            .parse::<f64>()
            .ok()?;
        out = Some(Regime::Memory(match out {
            Some(Regime::Memory(k)) => kb.max(k),
            _ => kb,
        }));
    }
    out
}

/// The samples sorted in different ways, or in memory where the whole table's sort would not
/// fit: a regime the fit crosses or never saw.
fn regime_confounders(
    r: &IndexBuildReport,
    used: &[(Order, u64)],
    key: Key<'_>,
    at: &Target<'_>,
    scaled: bool,
) -> Vec<String> {
    let label = at.label;
    let seen: Vec<(Order, u64, Regime)> = used
        .iter()
        .filter_map(|&(o, rows)| Some((o, rows, regime(r, o, key)?)))
        .collect();
    let mut out = Vec::new();
    let on_disk = seen.iter().filter(|s| s.2 == Regime::Disk).count();
    if on_disk > 0 && on_disk < seen.len() {
        let each: Vec<String> = seen
            .iter()
            .map(|(o, _, g)| {
                let how = if *g == Regime::Disk {
                    "on disk"
                } else {
                    "in memory"
                };
                format!("{how} at {}", format_percent(o.fraction().unwrap_or(1.0)))
            })
            .collect();
        out.push(format!(
            "{label}: the samples sorted in different ways ({}): the fit spans a change of regime, so the projection is approximate",
            each.join(", ")
        ));
    }
    if let Some(&(_, rows, Regime::Memory(kb))) = seen.last() {
        let need = kb * 1024.0 * at.n / rows.max(1) as f64;
        if need > key.2.bytes as f64 {
            out.push(format!(
                "{label}: the largest sample sorted in memory, but the whole table's sort needs about {} and maintenance_work_mem is {}: its build will sort on disk, which {}, so expect it to differ from the projection",
                format_bytes(need as u64),
                key.2.text,
                if scaled {
                    "no sample showed"
                } else {
                    "no sample showed (the samples were built at the table's memory, not scaled by their fraction)"
                }
            ));
        }
    }
    out
}

/// Copies that hold only the indexed columns scan fewer bytes per row than the table.
fn narrower_copies(r: &IndexBuildReport) -> Option<String> {
    let own = r.own.as_ref()?;
    if own.on_sandbox {
        return None;
    }
    let table_rows = own.rows? as f64;
    let copy = r
        .datasets
        .iter()
        .filter(|d| matches!(d.order, Order::Copy(_)) && d.rows > 0)
        .max_by_key(|d| d.rows)?;
    let per_copy = copy.heap_bytes as f64 / copy.rows as f64;
    let per_table = own.heap_bytes as f64 / table_rows.max(1.0);
    let ratio = per_table / per_copy.max(1.0);
    (ratio > 1.2).then(|| {
        format!(
            "the copies hold only the indexed column(s) ({:.0} bytes of heap per row against the table's {:.0}): building on the table scans {ratio:.1}× more per row than the copies did, so it takes longer than measured or projected here",
            per_copy, per_table
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index_build::projection_example::{TABLE_ROWS, build_time, sampled_run};

    #[test]
    fn a_sample_builds_at_its_fraction_of_the_memory_never_below_1mb() {
        let m = |t: &str| crate::measure::units::parse_size(t).unwrap();
        assert_eq!(sample_memory(&m("64MB"), 0.1).bytes, 6554 * 1024);
        assert_eq!(sample_memory(&m("64MB"), 0.025).text, "1638kB");
        assert_eq!(sample_memory(&m("1MB"), 0.1).bytes, MWM_MIN);
        assert!(stands_for(m("64MB").bytes, 6554 * 1024, 0.1));
        assert!(!stands_for(m("1MB").bytes, MWM_MIN, 0.1));
    }

    /// The table at 64MB sorts on disk (100MB of tuples). Samples built at 64MB sort in
    /// memory: the old projection misses the table's time, and the run says why. Samples
    /// built at 64MB × their fraction sort on disk as the table does: the projection holds it.
    #[test]
    fn memory_scaled_by_the_fraction_projects_the_table_in_its_own_regime() {
        let truth = build_time(TABLE_ROWS as f64, 64.0 * 1024.0 * 1024.0).0;
        let old = sampled_run("64MB", false);
        let p = &old.own.as_ref().unwrap().projections[0].projection;
        assert!(
            p.high < truth,
            "the unscaled samples miss: {p:?} vs {truth}"
        );
        assert!(
            old.summary.confounders.iter().any(|c| c.contains("will sort on disk, which no sample showed (the samples were built at the table's memory")),
            "{:?}",
            old.summary.confounders
        );
        let new = sampled_run("64MB", true);
        let p = &new.own.as_ref().unwrap().projections[0].projection;
        assert!(p.low <= truth && truth <= p.high, "{p:?} vs {truth}");
        assert!(
            new.summary
                .confounders
                .iter()
                .all(|c| !c.contains("sort on disk")),
            "{:?}",
            new.summary.confounders
        );
        let line = new
            .summary
            .findings
            .iter()
            .find(|f| f.starts_with("64MB: projected for the whole table"))
            .unwrap();
        assert!(
            line.contains("built at maintenance_work_mem × the sample's fraction"),
            "{line}"
        );
        assert!(line.contains("for the model's error"), "{line}");
        assert!(
            headline(&new).unwrap().starts_with("projection from a 10% sample of s.t (k), 1M rows: built on samples of 2.5%, 5%, 10%, maintenance_work_mem scaled"),
            "{:?}",
            headline(&new)
        );
    }

    /// 1MB × 10% is below PostgreSQL's least: no sample stands for the table at 1MB, so 1MB
    /// gets no projection (and says which sample would do); 16MB keeps only the 10% sample,
    /// one size: none either, with the 12.5% that would project it.
    #[test]
    fn a_setting_no_sample_can_scale_to_gets_no_projection_and_says_what_would() {
        let r = sampled_run("1MB,16MB,64MB", true);
        let lines: Vec<&str> = r
            .own
            .as_ref()
            .unwrap()
            .projections
            .iter()
            .map(|l| l.maintenance_work_mem.as_str())
            .collect();
        assert_eq!(lines, ["64MB"]);
        let f = |m: &str| {
            r.summary
                .findings
                .iter()
                .find(|f| f.starts_with(&format!("{m}: no projection")))
                .unwrap_or_else(|| panic!("{m}: {:?}", r.summary.findings))
                .clone()
        };
        assert!(
            f("1MB").contains("no sample can: build on the whole table"),
            "{}",
            f("1MB")
        );
        assert!(
            f("16MB").contains("a sample of at least 12.5% projects it"),
            "{}",
            f("16MB")
        );
        assert!(
            f("16MB").contains("as the table would at 20 MB or more"),
            "{}",
            f("16MB")
        );
        // 32MB scales on the 5% and 10% samples only: projected, and flagged as unchecked.
        let r = sampled_run("32MB", true);
        assert_eq!(r.own.as_ref().unwrap().projections[0].projection.sizes, 2);
        assert!(
            r.summary
                .confounders
                .iter()
                .any(|c| c.starts_with("32MB: projected from two sample sizes")),
            "{:?}",
            r.summary.confounders
        );
    }
}
