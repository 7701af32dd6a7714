//! The recommendation: evidence, not a formula. Per order it says what the statistics core
//! decided on this host and data — a setting faster than every other, the cheapest of the
//! settings that are within noise of the best, no significant difference, or too few trials —
//! and gives a `SET` line only when the finding recommends a setting. A tie never recommends
//! PostgreSQL's minimum (1MB is a poor value for every other maintenance operation, and a tie
//! says only that more memory bought nothing measurable here).

use crate::experiment::decision::format_percent;
use crate::experiment::index_build::summary::shows_workers;
use crate::experiment::index_build::{IndexBuildReport, MWM_MIN, OrderSummary, SettingRef};
use crate::experiment::{Outcome, RunReport};
use crate::measure::finding::{Finding, SettingResult};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use crate::measure::verdict::Verdict;

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

/// "1MB +12% [+8%, +15%], 1GB +9% [+6%, +13%]": the settings that are slower than the best.
fn slower_ones(f: &Finding) -> Vec<String> {
    f.settings
        .iter()
        .filter_map(|s| {
            let c = s.vs_best.as_ref()?;
            (c.verdict == Verdict::Slower).then(|| {
                let pct = crate::measure::units::format_change;
                format!(
                    "{} {} [{}, {}]",
                    s.label,
                    pct(c.ratio),
                    pct(c.ratio_low),
                    pct(c.ratio_high)
                )
            })
        })
        .collect()
}

fn set_lines(r: &SettingRef, with_workers: bool) -> Vec<String> {
    let mut sql = vec![format!(
        "SET maintenance_work_mem = '{}';",
        r.maintenance_work_mem
    )];
    if with_workers {
        sql.push(format!(
            "SET max_parallel_maintenance_workers = {};",
            r.workers
        ));
    }
    sql
}

/// The setting a tie recommends: the cheapest member of the best group that is not
/// PostgreSQL's minimum (the core's recommendation when it is not).
fn from_tie(o: &OrderSummary) -> Option<(&SettingResult, &SettingRef)> {
    let f = &o.finding;
    let members = f.settings.iter().zip(&o.settings);
    members
        .filter(|(s, r)| f.tie_group.contains(&s.label) && r.maintenance_work_mem_bytes > MWM_MIN)
        .min_by_key(|(s, _)| s.cost_rank)
}

/// One order's recommendation and the setting it applies, if any.
fn for_order(b: &IndexBuildReport, o: &OrderSummary) -> (Recommendation, Option<SettingRef>) {
    let f = &o.finding;
    let with_workers = shows_workers(&b.params);
    let order = o.order.name();
    let at = format!(
        "at {} confidence, {} smallest effect",
        format_percent(f.rules.confidence),
        format_percent(f.rules.min_effect)
    );
    let words = |text: String| Recommendation { text, sql: vec![] };
    let slower = slower_ones(f);
    let slower_txt = if slower.is_empty() {
        String::new()
    } else {
        format!(" Slower than the best: {}.", slower.join(", "))
    };
    match f.verdict {
        None => {
            let only = f.settings.first().map(median_of).unwrap_or_default();
            let what = f.settings.first().map_or("", |s| s.label.as_str());
            (
                words(format!(
                    "The {order} index: one setting run ({what}: {only}), nothing to compare, so no recommendation."
                )),
                None,
            )
        }
        Some(Verdict::TooFewTrials) => (
            words(format!(
                "The {order} index: {}. No setting is recommended; run again with repeat {} or more (or repeat auto).",
                f.sentence_with(&format_seconds),
                f.more_repeats_needed.unwrap_or(4)
            )),
            None,
        ),
        Some(Verdict::Faster) => {
            let best = f
                .settings
                .iter()
                .find(|s| f.winner.as_ref() == Some(&s.label));
            let r = f.winner.as_deref().and_then(|w| o.setting(w));
            match (best, r) {
                (Some(best), Some(r)) => {
                    let w = if with_workers {
                        format!(" with {} parallel workers", r.workers)
                    } else {
                        String::new()
                    };
                    let text = format!(
                        "On this host and data, `maintenance_work_mem = {}`{w} built the {order} index faster than every other setting tried ({}; {at}).{slower_txt}",
                        r.maintenance_work_mem,
                        median_of(best)
                    );
                    (
                        Recommendation {
                            text,
                            sql: set_lines(r, with_workers),
                        },
                        Some(r.clone()),
                    )
                }
                _ => (words(format!("The {order} index: {}.", f.sentence())), None),
            }
        }
        Some(_) => {
            let sentence = f.sentence_with(&format_seconds);
            if f.recommendation.is_none() {
                return (
                    words(format!(
                        "The {order} index: {sentence} ({at}): keep the current setting."
                    )),
                    None,
                );
            }
            match from_tie(o) {
                Some((s, r)) => {
                    let label = &s.label;
                    let minimum_too = f.recommendation.as_deref().is_some_and(|rec| rec != label);
                    let mut text = format!(
                        "The {order} index: {} are within noise of the best ({at}); {label} is enough, more bought nothing measurable.{slower_txt}",
                        group_words(f)
                    );
                    if minimum_too {
                        text.push_str(
                            " PostgreSQL's minimum (1MB) did as well here, but a tie is no reason to go down to it.",
                        );
                    }
                    (
                        Recommendation {
                            text,
                            sql: set_lines(r, with_workers),
                        },
                        Some(r.clone()),
                    )
                }
                None => (
                    words(format!(
                        "The {order} index: {} are within noise of the best ({at}), and only PostgreSQL's minimum among them: no setting is recommended from a tie.{slower_txt}",
                        group_words(f)
                    )),
                    None,
                ),
            }
        }
    }
}

/// For a run that did not finish: the sentence that goes before its caveat (empty otherwise).
pub fn partial_run(report: &RunReport) -> String {
    if report.outcome == Outcome::Finished {
        return String::new();
    }
    format!(
        "This run was {} before all trials finished; the figures cover what finished. ",
        report.outcome.as_str()
    )
}

/// The best group as "16MB, 64MB and 256MB".
fn group_words(f: &Finding) -> String {
    match f.tie_group.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

pub fn index_build_recommendations(
    report: &RunReport,
    b: &IndexBuildReport,
) -> Vec<Recommendation> {
    let mut out = Vec::new();
    let mut applied: Vec<(String, Option<SettingRef>)> = Vec::new();
    for o in &b.summary.orders {
        let (r, set) = for_order(b, o);
        out.push(r);
        applied.push((o.order.name(), set));
    }
    let differ = applied.windows(2).any(|w| w[0].1 != w[1].1);
    if applied.len() > 1 && differ {
        let each: Vec<String> = applied
            .iter()
            .map(|(order, set)| match set {
                Some(r) => format!("{order} → {}", r.maintenance_work_mem),
                None => format!("{order} → no change"),
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
        let mut caveat = format!(
            "Measured on {measured_on}; the best setting moves with table size, memory and disk, so measure at your table's size before changing a server default. `SET` lasts for the session: use it just before the `CREATE INDEX`."
        );
        caveat.insert_str(0, &partial_run(report));
        out.push(Recommendation {
            text: caveat,
            sql: Vec::new(),
        });
    }
    out
}
