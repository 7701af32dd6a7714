//! One number per run for a glance at past results (the TUI's history strip): the run's
//! result, not its duration. For a sweep that is the median of its best setting in the
//! experiment's own measure (build seconds, rows/s); for growth, the write of one version
//! at the largest step the first design measured, the number the original table grew by; for
//! a query, the best median of its first statement (or client count) — statements are not
//! comparable with each other.

use super::compare::settings::samples;
use crate::experiment::{ReportBody, RunReport};
use crate::measure::interval::estimate;
use crate::measure::stats::median;
use crate::measure::verdict::Better;

/// A run's result in one number.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub value: f64,
    /// The unit of `value`: "s", "rows/s" or "tx/s".
    pub unit: &'static str,
    /// What the number is: "best median", "snapshot write at 100 versions".
    pub what: String,
    pub better: Better,
    /// The interval of `value` (a median's, at the run's confidence), when there is one.
    pub interval: Option<(f64, f64)>,
    /// The run the number is from.
    pub run_id: String,
}

/// The interval of the median of `values`, when more than one.
fn interval_of(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let e = estimate(values, confidence)?;
    (e.n > 1).then_some((e.ci_low, e.ci_high))
}

pub fn headline(report: &RunReport) -> Option<Headline> {
    if let ReportBody::Query(b) = &report.body {
        let u = b.summary.units.first()?;
        let better = b.better();
        let best = u
            .finding
            .settings
            .iter()
            .filter_map(|s| s.estimate)
            .reduce(|a, x| match better {
                Better::Lower if x.median < a.median => x,
                Better::Higher if x.median > a.median => x,
                _ => a,
            })?;
        return Some(Headline {
            value: best.median,
            interval: (best.n > 1).then_some((best.ci_low, best.ci_high)),
            run_id: report.run_id.clone(),
            unit: if better == Better::Higher {
                "tx/s"
            } else {
                "s"
            },
            what: format!("best median of {}", u.name),
            better,
        });
    }
    if let ReportBody::Growth(b) = &report.body {
        let design = *b.params.designs.first()?;
        let step = b
            .measured(design)
            .filter(|s| s.write_seconds.is_some())
            .max_by_key(|s| s.versions)?;
        return Some(Headline {
            value: step.write_seconds?,
            interval: interval_of(&step.write_repeats, b.params.decision.confidence),
            run_id: report.run_id.clone(),
            unit: "s",
            what: format!(
                "{} write at {} versions",
                design.as_str(),
                crate::measure::units::format_count(step.versions as f64)
            ),
            better: Better::Lower,
        });
    }
    let all = samples(report);
    let metric = all.first()?.metric;
    let confidence = report.body.facts().decision().confidence;
    // The setting with the best median, and its values (for the interval).
    let (best, values) = all
        .iter()
        .filter(|s| s.metric == metric)
        .filter_map(|s| Some((median(&s.values)?, &s.values)))
        .reduce(|a, x| match metric.better {
            Better::Lower if x.0 < a.0 => x,
            Better::Higher if x.0 > a.0 => x,
            _ => a,
        })?;
    best.is_finite().then(|| Headline {
        value: best,
        interval: interval_of(values, confidence),
        run_id: report.run_id.clone(),
        unit: if metric.better == Better::Higher {
            "rows/s"
        } else {
            "s"
        },
        what: "best median".into(),
        better: metric.better,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::index_build::Order;

    #[test]
    fn a_sweep_is_its_best_median_not_its_duration() {
        let r = crate::report::example::index_build(
            "r",
            1000,
            &[
                (Order::Random, 0, "1MB", &[3.0, 3.2, 3.1]),
                (Order::Random, 0, "64MB", &[2.0, 2.4, 2.2]),
            ],
        );
        let h = headline(&r).unwrap();
        assert_eq!(h.value, 2.2);
        assert_eq!((h.unit, h.what.as_str()), ("s", "best median"));
        assert_ne!(h.value, r.seconds());
    }

    #[test]
    fn growth_is_the_first_designs_write_at_its_largest_step() {
        let r = crate::report::example::growth("g");
        let ReportBody::Growth(b) = &r.body else {
            unreachable!()
        };
        let h = headline(&r).unwrap();
        let d = b.params.designs[0];
        let top = b.measured(d).map(|s| s.versions).max().unwrap();
        assert!(h.what.starts_with(d.as_str()), "{h:?}");
        assert!(
            h.what.ends_with(&format!(
                "{} versions",
                crate::measure::units::format_count(top as f64)
            )),
            "{h:?}"
        );
    }
}
