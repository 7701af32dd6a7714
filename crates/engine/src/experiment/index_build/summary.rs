//! The index-build summary: per order, every (settings combination, workers,
//! maintenance_work_mem) setting that ran is one setting of a sweep on a grid, ranked cheapest
//! first (the swept server settings as listed, then fewer workers, then less memory), and the
//! statistics core decides it once ([`crate::measure::finding::decide`]): each setting's median
//! with its interval, each against the best, the winner or the cheapest setting shown as good
//! as the best, which swept dimensions made the difference, or too few trials. The findings
//! are the core's sentences prefixed with the order; the recommendation, tables, TUI and JSON
//! read the same [`crate::measure::finding::Finding`].

use std::collections::BTreeSet;

use super::report::{
    GroupSummary, IndexBuildReport, IndexSummary, MwmStat, OrderSummary, SettingRef,
};
use super::spec::{IndexBuildSpec, Order};
use crate::experiment::lab::whatif::{Combo, combo_label, with_combo};
use crate::measure::finding::{Finding, SettingTrials, decide};
use crate::measure::rules::Rules;
use crate::measure::short::{nice_up, too_short};
use crate::measure::stats::{Summary, median};
use crate::measure::units::{Size, format_count, format_seconds};
use crate::measure::verdict::Better;

/// The settings of one order, cheapest first: the swept server settings in the order they
/// were listed (the first value counts as the cheapest: the one to keep on a tie), then fewer
/// workers, then less memory.
pub(crate) fn settings(spec: &IndexBuildSpec) -> Vec<(usize, u32, Size)> {
    let mut knobs: Vec<(u32, Size)> = Vec::new();
    for &w in &spec.workers {
        for m in &spec.mwm {
            if !knobs.iter().any(|(ow, om)| *ow == w && om.bytes == m.bytes) {
                knobs.push((w, m.clone()));
            }
        }
    }
    knobs.sort_by_key(|(w, m)| (*w, m.bytes));
    (0..spec.set.combo_count())
        .flat_map(|c| knobs.iter().map(move |(w, m)| (c, *w, m.clone())))
        .collect()
}

/// Whether labels and lines name the worker count (more than one, or a parallel one).
pub(crate) fn shows_workers(spec: &IndexBuildSpec) -> bool {
    spec.workers.len() > 1 || spec.workers.iter().any(|&w| w > 0)
}

/// A setting's name in findings: `64MB`, or `64MB ×2w` when workers vary, with the swept
/// server settings after it (`64MB · wal_compression=pglz`).
pub(crate) fn setting_label(
    spec: &IndexBuildSpec,
    combo: usize,
    workers: u32,
    mwm: &str,
) -> String {
    let knobs = if shows_workers(spec) {
        format!("{mwm} ×{workers}w")
    } else {
        mwm.to_string()
    };
    // With one memory and one worker setting, the swept server settings alone name it.
    if !spec.set.is_empty() && spec.mwm.len() == 1 && spec.workers.len() == 1 {
        return combo_label(&combo_of(spec, combo));
    }
    with_combo(&knobs, &combo_of(spec, combo))
}

/// Where combination `i` sits among the swept server settings: the index of each setting's
/// value, first setting first (the combinations are their product, first setting outermost).
pub(crate) fn combo_coords(spec: &IndexBuildSpec, i: usize) -> Vec<usize> {
    let sizes: Vec<usize> = spec.set.items.iter().map(|s| s.values.len()).collect();
    let mut rest = i;
    let mut out = vec![0; sizes.len()];
    for (d, &size) in sizes.iter().enumerate().rev() {
        out[d] = rest % size.max(1);
        rest /= size.max(1);
    }
    out
}

/// The grid dimensions of an index-build sweep, in `coords` order: each swept server
/// setting by name, then `max_parallel_maintenance_workers`, then `maintenance_work_mem`.
pub(crate) fn dimension_names(spec: &IndexBuildSpec) -> Vec<String> {
    let mut names = spec.set.names();
    names.push("max_parallel_maintenance_workers".into());
    names.push("maintenance_work_mem".into());
    names
}

/// The swept server settings of combination `i` (empty when nothing is swept).
pub(crate) fn combo_of(spec: &IndexBuildSpec, i: usize) -> Combo {
    spec.set.combos().get(i).cloned().unwrap_or_default()
}

/// The timed seconds of one setting of one order.
pub(crate) fn seconds_of(
    report: &IndexBuildReport,
    order: Order,
    (combo, workers, bytes): (usize, u32, u64),
) -> Vec<f64> {
    report
        .trials
        .iter()
        .filter(|t| {
            !t.warmup
                && t.order == order
                && t.combo == combo
                && t.workers_requested == workers
                && t.maintenance_work_mem_bytes == bytes
        })
        .map(|t| t.seconds)
        .collect()
}

/// The trials of every setting of `order` that ran at least once, cheapest first, with what
/// each stands for.
pub(crate) fn sweep_of(
    report: &IndexBuildReport,
    order: Order,
) -> (Vec<SettingTrials>, Vec<SettingRef>) {
    let spec = &report.params;
    let mut trials = Vec::new();
    let mut refs = Vec::new();
    for (rank, (c, w, m)) in settings(spec).into_iter().enumerate() {
        let values = seconds_of(report, order, (c, w, m.bytes));
        if values.is_empty() {
            continue;
        }
        let mut coords = combo_coords(spec, c);
        coords.push(spec.workers.iter().position(|&x| x == w).unwrap_or(0));
        coords.push(
            spec.mwm
                .iter()
                .position(|x| x.bytes == m.bytes)
                .unwrap_or(0),
        );
        trials.push(SettingTrials {
            label: setting_label(spec, c, w, &m.text),
            cost_rank: rank,
            values,
            coords,
        });
        refs.push(SettingRef {
            workers: w,
            maintenance_work_mem: m.text,
            maintenance_work_mem_bytes: m.bytes,
            combo: c,
            settings: combo_of(spec, c),
        });
    }
    (trials, refs)
}

impl IndexBuildReport {
    /// The confounder of builds too short to mean anything: the fastest setting's median
    /// under 100 ms, with the rows that would make it last that long.
    fn short_builds(&self, order: Order, trials: &[SettingTrials]) -> Option<String> {
        let fastest = trials
            .iter()
            .filter_map(|t| median(&t.values))
            .min_by(|a, b| a.total_cmp(b))?;
        let grow = too_short(fastest)?;
        Some(format!(
            "{}: builds as short as {} (median): under 100 ms, timer and scheduling noise weigh as much as the setting; about {} rows would make them last 100 ms",
            order.name(),
            format_seconds(fastest),
            format_count(nice_up(self.params.rows as f64 * grow))
        ))
    }

    /// Recompute the summary from the trials so far (also for partial, cancelled runs).
    pub(crate) fn summarize(&mut self, extra_confounders: &[String]) {
        let rules = self.params.decision.rules_for(self.params.repeat);
        let mut summary = IndexSummary {
            groups: Vec::new(),
            orders: Vec::new(),
            confounders: extra_confounders.to_vec(),
            findings: Vec::new(),
        };
        for &order in &self.params.orders {
            self.summarize_order(order, &rules, &mut summary);
        }
        if let Some(c) = self.fewer_workers() {
            summary.confounders.push(c);
        }
        let hosts: Vec<_> = self
            .trials
            .iter()
            .filter(|t| !t.warmup)
            .filter_map(|t| t.host)
            .collect();
        if let Some(c) = crate::host::load::confounded(&hosts) {
            summary.confounders.push(c);
        }
        let projected = super::projection::project(self);
        summary.findings.extend(projected.findings);
        summary.confounders.extend(projected.confounders);
        if let Some(own) = self.own.as_mut() {
            own.projections = projected.lines;
        }
        self.headline = super::projection::headline(self).unwrap_or_default();
        let mut seen = BTreeSet::new();
        summary.confounders.retain(|c| seen.insert(c.clone()));
        self.summary = summary;
    }

    /// One order's part of the summary (nothing when none of its settings ran): the core's
    /// finding over its settings, a group per (combination, workers) line with a confounder
    /// per noisy setting, and the confounder of builds too short.
    fn summarize_order(&self, order: Order, rules: &Rules, summary: &mut IndexSummary) {
        let (trials, refs) = sweep_of(self, order);
        if trials.is_empty() {
            return;
        }
        let finding = decide(&trials, Better::Lower, rules);
        summary.findings.push(format!(
            "{}: {}",
            order.name(),
            finding.sentence_with(&format_seconds)
        ));
        let mut lines: Vec<(usize, u32)> = refs.iter().map(|r| (r.combo, r.workers)).collect();
        lines.dedup();
        for (c, w) in lines {
            let by_mwm = mwm_stats(&refs, &finding, &trials, (c, w));
            let combo = combo_label(&combo_of(&self.params, c));
            let wtxt = line_suffix(&self.params, w, &combo);
            for m in by_mwm.iter().filter(|m| m.noisy) {
                summary.confounders.push(format!(
                    "{}{wtxt} at {}: repeats spread {:.0}% (noisy)",
                    order.name(),
                    m.maintenance_work_mem,
                    (m.max - m.min) / m.median * 100.0
                ));
            }
            summary.groups.push(GroupSummary {
                order,
                workers: w,
                settings: combo,
                by_mwm,
            });
        }
        if let Some(c) = self.short_builds(order, &trials) {
            summary.confounders.push(c);
        }
        summary.orders.push(OrderSummary {
            order,
            settings: refs,
            finding,
        });
    }

    /// The confounder of parallel builds that launched fewer workers than asked for.
    fn fewer_workers(&self) -> Option<String> {
        let fewer: BTreeSet<String> = self
            .trials
            .iter()
            .filter(|t| t.workers_launched < t.workers_requested)
            .map(|t| {
                format!(
                    "{} workers at {}",
                    t.workers_requested, t.maintenance_work_mem
                )
            })
            .collect();
        if fewer.is_empty() {
            return None;
        }
        Some(format!(
            "fewer parallel workers launched than asked for: {} (the server sizes the worker count from the table's size, gives each participant at least 32MB of maintenance_work_mem, and launches fewer when worker slots are busy)",
            fewer.into_iter().collect::<Vec<_>>().join(", ")
        ))
    }
}

/// The statistics of one line's settings (combination `c`, `w` workers), by memory: each
/// setting with an estimate, its verdict against the best, and whether its repeats are noisy.
fn mwm_stats(
    refs: &[SettingRef],
    finding: &Finding,
    trials: &[SettingTrials],
    (c, w): (usize, u32),
) -> Vec<MwmStat> {
    refs.iter()
        .zip(&finding.settings)
        .zip(trials)
        .filter(|((r, _), _)| r.workers == w && r.combo == c)
        .filter_map(|((r, s), t)| {
            let e = s.estimate?;
            let noisy = Summary::of(&t.values).is_some_and(|s| s.is_noisy());
            Some(MwmStat {
                maintenance_work_mem: r.maintenance_work_mem.clone(),
                maintenance_work_mem_bytes: r.maintenance_work_mem_bytes,
                n: e.n,
                median: e.median,
                min: e.min,
                max: e.max,
                ci_low: e.ci_low,
                ci_high: e.ci_high,
                level: e.level,
                vs_best: s.vs_best.as_ref().map(|c| c.verdict),
                equivalent: finding.is_equivalent(&s.label),
                noisy,
            })
        })
        .collect()
}

/// What a line's confounders say after the order: ` (2 workers)` when workers are shown,
/// ` with work_mem=64MB` when settings are swept.
fn line_suffix(spec: &IndexBuildSpec, workers: u32, combo: &str) -> String {
    let mut wtxt = if shows_workers(spec) {
        format!(" ({workers} workers)")
    } else {
        String::new()
    };
    if !combo.is_empty() {
        wtxt.push_str(&format!(" with {combo}"));
    }
    wtxt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentSpec;

    /// A spec from these fields and the defaults of the rest.
    fn parse(p: &ParamText) -> IndexBuildSpec {
        match crate::experiment::ExperimentKind::IndexBuild.parse_spec(p) {
            Ok(ExperimentSpec::IndexBuild(s)) => s,
            other => panic!("{other:?}"),
        }
    }
    use crate::experiment::index_build::IndexTrial;
    use crate::experiment::lab::field::ParamText;
    use crate::measure::verdict::Verdict;

    fn report(pairs: &[(&str, &str)], timings: &[(Order, u32, &str, &[f64])]) -> IndexBuildReport {
        let p: ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let spec = parse(&p);
        let mut r = IndexBuildReport::new(&spec);
        for (order, workers, mwm, secs) in timings {
            let m = spec.mwm.iter().find(|m| m.text == *mwm).unwrap();
            for (i, s) in secs.iter().enumerate() {
                r.trials.push(IndexTrial::example(
                    *order,
                    spec.rows,
                    m,
                    (*workers, *workers),
                    i as u32 + 1,
                    *s,
                ));
            }
        }
        r.summarize(&[]);
        r
    }

    const A: [f64; 5] = [1.00, 1.02, 0.99, 1.01, 0.98];
    const B: [f64; 5] = [1.01, 0.98, 1.00, 1.02, 0.99];

    /// Builds of ~30 ms are named as too short to mean anything, with the rows that would make
    /// them last 100 ms; builds of a second are not.
    #[test]
    fn builds_under_100_ms_are_a_confounder_with_the_rows_that_would_do() {
        let short: [f64; 5] = [0.031, 0.030, 0.032, 0.029, 0.030];
        let r = report(
            &[("order", "random"), ("mwm", "64MB,65MB"), ("rows", "100k")],
            &[
                (Order::Random, 0, "64MB", &short),
                (Order::Random, 0, "65MB", &short),
            ],
        );
        let c = r
            .summary
            .confounders
            .iter()
            .find(|c| c.contains("builds as short as"))
            .unwrap_or_else(|| panic!("{:?}", r.summary.confounders));
        assert!(
            c.contains("30 ms") && c.contains("rows would make them last 100 ms"),
            "{c}"
        );
        let r = report(
            &[("order", "random"), ("mwm", "64MB,65MB")],
            &[
                (Order::Random, 0, "64MB", &A),
                (Order::Random, 0, "65MB", &B),
            ],
        );
        assert!(
            r.summary
                .confounders
                .iter()
                .all(|c| !c.contains("as short as")),
            "{:?}",
            r.summary.confounders
        );
    }

    #[test]
    fn a_tie_names_no_winner_and_recommends_nothing() {
        let r = report(
            &[("order", "random"), ("mwm", "64MB,65MB")],
            &[
                (Order::Random, 0, "64MB", &A),
                (Order::Random, 0, "65MB", &B),
            ],
        );
        let o = &r.summary.orders[0];
        assert_eq!(o.finding.verdict, Some(Verdict::NoSignificantDifference));
        assert_eq!(
            (o.finding.winner.clone(), o.finding.recommendation.clone()),
            (None, None)
        );
        assert_eq!(
            r.summary.findings,
            ["random: no significant difference between 64MB and 65MB: all within 5% of the best"]
        );
        let g = &r.summary.groups[0];
        assert!(g.by_mwm.iter().all(|m| m.equivalent && m.n == 5));
        // n = 5 cannot reach 95% for one median: the interval is [min, max] at 93.75%.
        let m = &g.by_mwm[0];
        assert_eq!((m.ci_low, m.ci_high, m.level), (0.98, 1.02, 0.9375));
        assert_eq!(g.by_mwm[1].vs_best, Some(Verdict::NoSignificantDifference));
    }

    #[test]
    fn a_clear_winner_is_faster_and_the_others_slower() {
        let slow: Vec<f64> = A.iter().map(|x| x * 1.5).collect();
        let r = report(
            &[("order", "sorted,random"), ("mwm", "1MB,64MB")],
            &[
                (Order::Sorted, 0, "1MB", &slow),
                (Order::Sorted, 0, "64MB", &B),
            ],
        );
        // Random never ran: only sorted is summarized.
        assert_eq!(r.summary.orders.len(), 1);
        let f = &r.summary.orders[0].finding;
        assert_eq!(f.winner.as_deref(), Some("64MB"));
        assert_eq!(f.verdict, Some(Verdict::Faster));
        assert_eq!(
            r.summary.findings,
            ["sorted: 64MB faster than every other setting (1.0 s [980 ms, 1.0 s] vs next 1.5 s)"]
        );
        let by = &r.summary.groups[0].by_mwm;
        assert_eq!(by[0].vs_best, Some(Verdict::Slower));
        assert!(!by[0].equivalent && by[1].equivalent && by[1].vs_best.is_none());
        let json = serde_json::to_value(&r.summary).unwrap();
        assert_eq!(json["orders"][0]["finding"]["verdict"], "faster");
        assert_eq!(json["groups"][0]["by_mwm"][0]["vs_best"], "slower");
        for key in ["n", "median", "ci_low", "ci_high", "level"] {
            assert!(json["groups"][0]["by_mwm"][1][key].is_number(), "{key}");
        }
    }

    #[test]
    fn too_few_trials_say_how_many_would_decide() {
        // Twice as long, 5% spread: decided from three builds a side.
        let r = report(
            &[("order", "random"), ("mwm", "1MB,64MB"), ("repeat", "3")],
            &[
                (Order::Random, 0, "1MB", &[2.0, 2.1, 2.2]),
                (Order::Random, 0, "64MB", &[1.0, 1.1, 1.2]),
            ],
        );
        assert_eq!(r.summary.orders[0].finding.winner.as_deref(), Some("64MB"));
        // 10% apart in 15% spread: open, with the count that would decide.
        let r = report(
            &[("order", "random"), ("mwm", "1MB,64MB"), ("repeat", "3")],
            &[
                (Order::Random, 0, "1MB", &[1.25, 1.0, 1.45]),
                (Order::Random, 0, "64MB", &[1.0, 1.2, 1.1]),
            ],
        );
        let o = &r.summary.orders[0];
        assert_eq!(o.finding.winner, None);
        assert!(o.finding.more_repeats_needed.is_some_and(|n| n > 3));
    }

    #[test]
    fn one_setting_has_nothing_to_compare() {
        let r = report(
            &[("order", "random"), ("mwm", "64MB")],
            &[(Order::Random, 0, "64MB", &A)],
        );
        assert_eq!(
            r.summary.findings,
            ["random: one setting run: nothing to compare"]
        );
        assert!(!r.summary.findings[0].contains("fastest"));
        assert_eq!(r.summary.groups[0].by_mwm[0].vs_best, None);
    }

    #[test]
    fn workers_and_memory_are_one_sweep_cheapest_first() {
        let fast: Vec<f64> = A.iter().map(|x| x * 0.5).collect();
        let r = report(
            &[("order", "random"), ("mwm", "64MB,1MB"), ("workers", "2,0")],
            &[
                (Order::Random, 2, "64MB", &fast),
                (Order::Random, 2, "1MB", &A),
                (Order::Random, 0, "64MB", &B),
                (Order::Random, 0, "1MB", &A),
            ],
        );
        let o = &r.summary.orders[0];
        let labels: Vec<&str> = o
            .finding
            .settings
            .iter()
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(labels, ["1MB ×0w", "64MB ×0w", "1MB ×2w", "64MB ×2w"]);
        assert_eq!(o.finding.winner.as_deref(), Some("64MB ×2w"));
        assert_eq!(o.setting("64MB ×2w").map(|s| s.workers), Some(2));
        let groups: Vec<(u32, usize)> = r
            .summary
            .groups
            .iter()
            .map(|g| (g.workers, g.by_mwm.len()))
            .collect();
        assert_eq!(groups, [(0, 2), (2, 2)]);
        // 0 workers: 1MB and 64MB are both slower than the winner.
        assert!(r.summary.groups[0].by_mwm.iter().all(|m| !m.equivalent));
    }

    #[test]
    fn noisy_repeats_stay_a_confounder() {
        let r = report(
            &[("order", "random"), ("mwm", "1MB,64MB")],
            &[
                (Order::Random, 0, "1MB", &[1.0, 1.3, 1.0, 1.0, 1.0]),
                (Order::Random, 0, "64MB", &A),
            ],
        );
        assert_eq!(
            r.summary.confounders,
            ["random at 1MB: repeats spread 30% (noisy)"]
        );
        let again = {
            let mut r = r.clone();
            r.summarize(&r.summary.confounders.clone());
            r
        };
        assert_eq!(again.summary, r.summary);
    }

    #[test]
    fn records_from_before_verdicts_are_summarized_on_load() {
        let r = report(
            &[("order", "random"), ("mwm", "64MB,65MB")],
            &[
                (Order::Random, 0, "64MB", &A),
                (Order::Random, 0, "65MB", &B),
            ],
        );
        let mut old = serde_json::to_value(&r).unwrap();
        let summary = old["summary"].as_object_mut().unwrap();
        summary.remove("orders");
        summary.insert(
            "findings".into(),
            serde_json::json!(["random: 64MB fastest"]),
        );
        let back: IndexBuildReport = serde_json::from_value(old).unwrap();
        assert_eq!(back, r);
        let same: IndexBuildReport =
            serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(same, r);
    }
}
