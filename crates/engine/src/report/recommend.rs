//! The index-build recommendation: evidence, not a formula. Per order it renders what the
//! statistics core decided on this host and data ([`crate::measure::finding::Finding`], decided
//! once): a setting faster than every other, the cheapest setting shown as good as the best,
//! every setting equivalent, or too few trials (with the settings still undecided and about how
//! many trials would settle them). It gives SQL only when the finding recommends a setting, and
//! then only for the swept settings the finding shows to matter ([`Finding::matters`]): `SET`
//! for session settings, `ALTER SYSTEM SET` with the reload or restart a server setting needs.
//! The worker count gets a `SET` only when the recommended setting's builds launched the
//! workers asked for. Nothing here changes the core's answer.

use crate::experiment::index_build::summary::dimension_names;
use crate::experiment::index_build::{IndexBuildReport, OrderSummary, SettingRef};
use crate::experiment::lab::decision::format_percent;
use crate::experiment::lab::whatif::Apply;
use crate::experiment::{Outcome, RunReport};
use crate::measure::finding::{Finding, SettingResult};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use crate::measure::verdict::Verdict;

use super::set_lines::{SweptValue, lines};

/// One recommendation: a sentence of evidence and the SQL that applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub text: String,
    pub sql: Vec<String>,
}

/// "11.6 s [11.5 s, 11.7 s], median of 5".
fn median_of(s: &SettingResult) -> String {
    match s.estimate {
        Some(e) if e.n > 1 => format!(
            "{} [{}, {}], median of {}",
            format_seconds(e.median),
            format_seconds(e.ci_low),
            format_seconds(e.ci_high),
            e.n
        ),
        Some(e) => format!("{}, one build", format_seconds(e.median)),
        None => "no usable build".into(),
    }
}

/// "1MB ×1.12 [×1.08, ×1.15], 1GB ×1.09 [×1.06, ×1.13]": the settings that are slower than the best.
fn slower_ones(f: &Finding) -> Vec<String> {
    f.settings
        .iter()
        .filter_map(|s| {
            let c = s.vs_best.as_ref()?;
            (c.verdict == Verdict::Slower).then(|| {
                format!(
                    "{} {}",
                    s.label,
                    crate::measure::wording::format_ratio_interval(
                        c.ratio,
                        c.ratio_low,
                        c.ratio_high
                    )
                )
            })
        })
        .collect()
}

/// After the set that may be best: how to narrow it.
fn again_to_narrow(f: &Finding) -> String {
    match f.more_repeats_needed {
        Some(n) => format!(
            " Run again with repeat {n} or more (an estimate), or repeat auto, to narrow the set."
        ),
        None => String::new(),
    }
}

/// The workers the builds of setting `r` of `order` launched: (fewest, most).
fn launched(b: &IndexBuildReport, o: &OrderSummary, r: &SettingRef) -> Option<(u32, u32)> {
    let got: Vec<u32> = b
        .trials
        .iter()
        .filter(|t| {
            !t.warmup
                && t.order == o.order
                && t.combo == r.combo
                && t.workers_requested == r.workers
                && t.maintenance_work_mem_bytes == r.maintenance_work_mem_bytes
        })
        .map(|t| t.workers_launched)
        .collect();
    Some((*got.iter().min()?, *got.iter().max()?))
}

/// The SQL of a recommended setting: one line per swept dimension the finding shows to
/// matter, and a note when the workers asked for did not all launch.
fn sql_for(
    report: &RunReport,
    b: &IndexBuildReport,
    o: &OrderSummary,
    r: &SettingRef,
) -> (Vec<String>, String) {
    let names = dimension_names(&b.params);
    let how = |name: &str| {
        report
            .whatif
            .as_ref()
            .and_then(|w| w.settings.iter().find(|s| s.name == name))
            .map_or(Apply::Session, |s| s.apply)
    };
    let mut values = Vec::new();
    let mut note = String::new();
    // The experiment's own knobs first (memory, then workers), then the swept settings.
    let mut matters = o.finding.matters.clone();
    matters.sort_by_key(|&d| match names.get(d).map(String::as_str) {
        Some("maintenance_work_mem") => (0, d),
        Some("max_parallel_maintenance_workers") => (1, d),
        _ => (2, d),
    });
    for d in matters {
        let Some(name) = names.get(d) else { continue };
        let value = match name.as_str() {
            "maintenance_work_mem" => r.maintenance_work_mem.clone(),
            "max_parallel_maintenance_workers" => match launched(b, o, r) {
                Some((lo, hi)) if lo < r.workers => {
                    let got = if lo == hi {
                        lo.to_string()
                    } else {
                        format!("{lo} to {hi}")
                    };
                    note = format!(
                        " The builds asked for {} parallel workers and the server launched {got}, so the worker count is not part of the recommendation.",
                        r.workers
                    );
                    continue;
                }
                _ => r.workers.to_string(),
            },
            other => match r.settings.iter().find(|(n, _)| n == other) {
                Some((_, v)) => v.clone(),
                None => continue,
            },
        };
        values.push(SweptValue {
            name: name.clone(),
            value,
            how: how(name),
        });
    }
    (lines(&values), note)
}

/// One order's recommendation and the setting it applies, if any.
fn for_order(
    report: &RunReport,
    b: &IndexBuildReport,
    o: &OrderSummary,
) -> (Recommendation, Option<SettingRef>) {
    let f = &o.finding;
    let order = o.order.name();
    let at = format!(
        "at {}, {} smallest effect",
        f.level_words(),
        format_percent(f.rules.min_effect)
    );
    let words = |text: String| Recommendation { text, sql: vec![] };
    let slower = slower_ones(f);
    let slower_txt = if slower.is_empty() {
        String::new()
    } else {
        format!(
            " Slower than the best: {} ({}).{}",
            slower.join(", "),
            f.scale_words(),
            super::recommend_facts::explain(b, o)
        )
    };
    let sentence = f.sentence_with(&format_seconds);
    match (f.verdict, f.recommendation.as_deref()) {
        (None, _) => {
            let only = f.settings.first().map(median_of).unwrap_or_default();
            let what = f.settings.first().map_or("", |s| s.label.as_str());
            (
                words(format!(
                    "The {order} index: one setting run ({what}: {only}), nothing to compare, so no recommendation."
                )),
                None,
            )
        }
        (Some(Verdict::TooFewTrials), _) if f.pick.is_some() => (
            words(format!(
                "The {order} index: {sentence} ({at}).{}{}",
                super::recommend_facts::explain(b, o),
                again_to_narrow(f)
            )),
            None,
        ),
        (Some(Verdict::TooFewTrials), _) => {
            let again = match f.more_repeats_needed {
                Some(n) => format!(
                    " No setting is recommended: run again with repeat {n} or more (an estimate), or repeat auto."
                ),
                None => " No setting is recommended.".to_string(),
            };
            (
                words(format!(
                    "The {order} index: {sentence} ({at}).{slower_txt}{again}"
                )),
                None,
            )
        }
        (Some(_), Some(rec)) => {
            let (Some(s), Some(r)) = (f.setting(rec), o.setting(rec)) else {
                return (words(format!("The {order} index: {sentence}.")), None);
            };
            let (sql, note) = sql_for(report, b, o, r);
            let mut text = if f.verdict == Some(Verdict::Faster) {
                format!(
                    "On this host and data, {rec} built the {order} index faster than every other setting tried ({}; {at}).{slower_txt}",
                    median_of(s)
                )
            } else {
                format!("The {order} index: {sentence} ({at}).{slower_txt}")
            };
            text.push_str(&note);
            if sql.is_empty() {
                text.push_str(" None of the swept settings needs changing for it.");
            }
            (Recommendation { text, sql }, Some(r.clone()))
        }
        (Some(_), None) => (
            words(format!(
                "The {order} index: {sentence} ({at}): keep the current setting."
            )),
            None,
        ),
    }
}

/// The SQL of order `o`'s recommendation (empty: none, or nothing to change).
pub(crate) fn order_sql(report: &RunReport, b: &IndexBuildReport, o: &OrderSummary) -> Vec<String> {
    for_order(report, b, o).0.sql
}

/// For a run that did not finish: the sentence that goes before its caveat (empty otherwise).
pub(crate) fn partial_run(report: &RunReport) -> String {
    if report.outcome == Outcome::Finished {
        return String::new();
    }
    format!(
        "This run was {} before all trials finished; the figures cover what finished. ",
        report.outcome.as_str()
    )
}

pub(crate) fn index_build_recommendations(
    report: &RunReport,
    b: &IndexBuildReport,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    let mut applied: Vec<(String, Option<SettingRef>, Vec<String>)> = Vec::new();
    for o in &b.summary.orders {
        let (r, set) = for_order(report, b, o);
        applied.push((o.order.name(), set, r.sql.clone()));
        out.push(r);
    }
    let differ = applied.windows(2).any(|w| w[0].2 != w[1].2);
    let table = super::recommend_sample::for_the_table(b, &mut out, &applied);
    if applied.len() > 1 && differ {
        let each: Vec<String> = applied
            .iter()
            .map(|(order, set, sql)| match set {
                Some(r) if !sql.is_empty() => format!("{order} → {}", label_of(b, r)),
                _ => format!("{order} → no change"),
            })
            .collect();
        let text = if b.own.is_some() {
            format!(
                "The sample sizes disagree ({}): what is best on a sample need not be on the whole table; trust the largest sample, or build on the whole table in the sandbox (pglab sandbox import) before changing a server default.",
                each.join(", ")
            )
        } else {
            format!(
                "The orders disagree ({}): choose by how the rows of your table are ordered relative to the key (pg_stats.correlation near 1 or −1 is sorted, near 0 random).",
                each.join(", ")
            )
        };
        out.push(Recommendation {
            text,
            sql: Vec::new(),
        });
    }
    out.extend(table);
    if !out.is_empty() {
        let heap = b
            .datasets
            .first()
            .map(|d| d.heap_bytes.max(0) as u64)
            .unwrap_or_else(|| b.params.heap_bytes());
        let measured_on = match &b.own {
            Some(o) => format!(
                "{} ({}) built on {}, {} heap",
                o.table,
                o.columns.join(", "),
                o.built_on,
                format_bytes(o.heap_bytes.max(0) as u64)
            ),
            None => format!(
                "{} {} rows ({} heap)",
                format_count(b.params.rows as f64),
                b.params.key.as_str(),
                format_bytes(heap)
            ),
        };
        // The SET advice only beside a SET line: with no answer there is nothing to set.
        let sets = out
            .iter()
            .any(|r| r.sql.iter().any(|l| l.starts_with("SET ")));
        let mut caveat = format!(
            "Measured on {measured_on}; the best setting moves with table size, memory and disk, so measure at your table's size before changing a server default.{}",
            if sets {
                " `SET` lasts for the session: use it just before the `CREATE INDEX`."
            } else {
                ""
            }
        );
        caveat.insert_str(0, &partial_run(report));
        out.push(Recommendation {
            text: caveat,
            sql: Vec::new(),
        });
    }
    out
}

/// A setting as the findings name it.
fn label_of(b: &IndexBuildReport, r: &SettingRef) -> String {
    crate::experiment::index_build::summary::setting_label(
        &b.params,
        r.combo,
        r.workers,
        &r.maintenance_work_mem,
    )
}

#[cfg(test)]
#[path = "recommend_tests.rs"]
mod tests;
