//! Per setting of a run: the median of its trials with its interval, and how it stands (★ the
//! core's answer, ≈ shown as good as the best). All of it comes from the statistics core
//! (`measure::finding::decide`). While a run is going the pane decides each series from the
//! samples so far; once the run is over it shows the findings the report decided
//! ([`from_decided`]), so the marks and sentences are the report's, the recommendation's and
//! the JSON's.
//!
//! A setting is one `(series, x)` of the measured samples (projected points and warm-ups are
//! not measurements). Within a series the settings are ranked by cost in ascending `x` (less
//! memory, smaller batch), which is how the core picks the cheapest of a tie.

use crate::experiment::{ResultLayout, Sample};
use crate::measure::finding::{Finding, SettingTrials, decide};
use crate::measure::interval::Estimate;
use crate::measure::rules::Rules;
use crate::measure::verdict::Verdict;
use crate::tui::text::with_unit;

/// How a setting stands in its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Not in the best group, or nothing is decided yet.
    None,
    /// The winner, or the cheapest member of the best group: the one to use.
    Best,
    /// Shown as good as the best: within the smallest effect of every setting that could be
    /// the best.
    Tied,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::None => " ",
            Mark::Best => "★",
            Mark::Tied => "≈",
        }
    }
}

/// One setting: its label, the estimate of its trials and its mark.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingRow {
    pub series: String,
    pub x: f64,
    /// `x` in its unit: "16 MB", "1k".
    pub label: String,
    pub estimate: Option<Estimate>,
    pub mark: Mark,
}

/// One series: its settings in ascending `x` and the core's finding as a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    pub series: String,
    pub settings: Vec<SettingRow>,
    pub sentence: String,
}

/// The settings of every series, in the order the series first appeared.
pub fn summarize(layout: &ResultLayout, samples: &[Sample], rules: &Rules) -> Vec<SeriesSummary> {
    let mut names: Vec<&str> = Vec::new();
    for s in samples.iter().filter(|s| !s.projected) {
        if !names.contains(&s.series.as_str()) {
            names.push(&s.series);
        }
    }
    names
        .into_iter()
        .map(|name| series(layout, samples, name, rules))
        .collect()
}

fn series(layout: &ResultLayout, samples: &[Sample], name: &str, rules: &Rules) -> SeriesSummary {
    let measured: Vec<&Sample> = samples
        .iter()
        .filter(|s| !s.projected && s.series == name && s.x.is_finite())
        .collect();
    let mut xs: Vec<f64> = measured.iter().map(|s| s.x).collect();
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.dedup();
    let mut labels: Vec<String> = Vec::new();
    for x in &xs {
        let mut l = super::axis::x_text(layout, *x);
        // Two values that print alike stay two settings.
        if labels.contains(&l) {
            l = format!("{l} #{}", labels.len() + 1);
        }
        labels.push(l);
    }
    let trials: Vec<SettingTrials> = xs
        .iter()
        .zip(&labels)
        .enumerate()
        .map(|(rank, (x, label))| SettingTrials {
            label: label.clone(),
            cost_rank: rank,
            values: measured.iter().filter(|s| s.x == *x).map(|s| s.y).collect(),
            ..SettingTrials::default()
        })
        .collect();
    let finding = decide(&trials, layout.y_better, rules);
    let unit = layout.y_unit.clone();
    let sentence = finding.sentence_with(&|v| with_unit(v, &unit));
    let settings = finding
        .settings
        .iter()
        .zip(&xs)
        .map(|(r, x)| SettingRow {
            series: name.to_string(),
            x: *x,
            label: r.label.clone(),
            estimate: r.estimate,
            mark: mark(&finding, &r.label),
        })
        .collect();
    SeriesSummary {
        series: name.to_string(),
        settings,
        sentence,
    }
}

/// The findings a finished run decided, as the summary lists them: one block per question,
/// its settings in the finding's order (cheapest first), each with its estimate and mark.
pub fn from_decided(
    layout: &ResultLayout,
    decided: &[crate::experiment::findings::Decided],
) -> Vec<SeriesSummary> {
    let unit = layout.y_unit.clone();
    decided
        .iter()
        .map(|d| {
            let f = &d.finding;
            SeriesSummary {
                series: d.question.clone(),
                settings: f
                    .settings
                    .iter()
                    .enumerate()
                    .map(|(i, s)| SettingRow {
                        series: d.question.clone(),
                        x: i as f64,
                        label: s.label.clone(),
                        estimate: s.estimate,
                        mark: mark(f, &s.label),
                    })
                    .collect(),
                sentence: f.sentence_with(&|v| with_unit(v, &unit)),
            }
        })
        .collect()
}

/// ★ for the core's answer (the winner or the recommendation), ≈ for a setting shown as
/// good as the best; nothing for the rest (slower, or undecided).
fn mark(f: &Finding, label: &str) -> Mark {
    let is = |o: &Option<String>| o.as_deref() == Some(label);
    match f.verdict {
        Some(Verdict::Faster) if is(&f.winner) => Mark::Best,
        Some(Verdict::NoSignificantDifference) if is(&f.recommendation) => Mark::Best,
        _ if f.is_equivalent(label) => Mark::Tied,
        _ => Mark::None,
    }
}

/// "5.60 s", "983.1k rows/s": a median in the layout's unit.
pub fn value(layout: &ResultLayout, v: f64) -> String {
    with_unit(v, &layout.y_unit)
}

/// The interval as "±2%", with the coverage reached when it falls short of the rules'
/// confidence ("±6% (75%)": three trials bracket the median only 75% of the time); "–" for a
/// single trial, which has no interval.
pub fn plus_minus(e: &Estimate, rules: &Rules) -> String {
    if e.n < 2 {
        return "–".into();
    }
    let pm = e.plus_minus();
    if e.reaches(rules.confidence) {
        pm
    } else {
        format!("{pm} ({})", crate::measure::wording::format_level(e.level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::verdict::Better;

    fn layout(better: Better) -> ResultLayout {
        ResultLayout {
            x_label: "maintenance_work_mem".into(),
            x_unit: "bytes".into(),
            x_log: true,
            y_label: "seconds".into(),
            y_unit: "s".into(),
            y_log: false,
            y_better: better,
            columns: vec![],
            x_names: Vec::new(),
        }
    }

    fn sample(series: &str, x: f64, y: f64) -> Sample {
        Sample {
            series: series.into(),
            x,
            y,
            projected: false,
            cells: vec![],
            settings: String::new(),
        }
    }

    /// `values` of each MB setting, interleaved as a sweep sends them.
    fn sweep(series: &str, settings: &[(u64, &[f64])]) -> Vec<Sample> {
        let mut out = Vec::new();
        let rounds = settings.iter().map(|s| s.1.len()).max().unwrap_or(0);
        for r in 0..rounds {
            for (mb, values) in settings {
                if let Some(v) = values.get(r) {
                    out.push(sample(series, (*mb << 20) as f64, *v));
                }
            }
        }
        out
    }

    const NOISE: [f64; 6] = [0.99, 1.0, 1.01, 0.995, 1.005, 1.002];

    fn times(base: f64) -> Vec<f64> {
        NOISE.iter().map(|n| base * n).collect()
    }

    #[test]
    fn the_best_group_is_marked_and_the_cheapest_of_it_is_best() {
        let (a, b, c, d) = (times(10.0), times(6.7), times(6.65), times(6.72));
        let samples = sweep("random", &[(1, &a), (16, &b), (64, &c), (256, &d)]);
        let s = summarize(&layout(Better::Lower), &samples, &Rules::default());
        assert_eq!(s.len(), 1);
        let marks: Vec<(&str, Mark)> = s[0]
            .settings
            .iter()
            .map(|r| (r.label.as_str(), r.mark))
            .collect();
        assert_eq!(
            marks,
            [
                ("1 MB", Mark::None),
                ("16 MB", Mark::Best),
                ("64 MB", Mark::Tied),
                ("256 MB", Mark::Tied)
            ]
        );
        assert_eq!(
            s[0].sentence,
            "16 MB..256 MB are within 5% of the best (no significant difference); 16 MB is enough, more bought nothing measurable"
        );
        // Six trials reach 95%: x(1)..x(6) is 0.99..1.01 of the base, ±1%.
        let e = s[0].settings[0].estimate.unwrap();
        assert_eq!(e.n, 6);
        assert!((e.median - 10.01).abs() < 1e-9, "{e:?}");
        assert_eq!(plus_minus(&e, &Rules::default()), "±1%");
    }

    #[test]
    fn a_clear_winner_is_the_only_mark_and_higher_can_be_better() {
        let (a, b) = (times(1000.0), times(5000.0));
        let mut l = layout(Better::Higher);
        l.y_unit = "rows/s".into();
        l.x_unit = "rows".into();
        let mut samples = sweep("copy", &[(1, &a), (2, &b)]);
        for s in &mut samples {
            s.x /= (1 << 20) as f64;
        }
        let s = summarize(&l, &samples, &Rules::default());
        let marks: Vec<Mark> = s[0].settings.iter().map(|r| r.mark).collect();
        assert_eq!(marks, [Mark::None, Mark::Best]);
        assert!(
            s[0].sentence
                .starts_with("2 faster than every other setting")
        );
    }

    #[test]
    fn too_few_trials_mark_nothing_and_say_so() {
        let samples = sweep("sorted", &[(1, &[5.2]), (16, &[5.6])]);
        let s = summarize(&layout(Better::Lower), &samples, &Rules::default());
        assert!(s[0].settings.iter().all(|r| r.mark == Mark::None));
        assert!(s[0].sentence.starts_with("too few trials to decide"));
        let e = s[0].settings[0].estimate.unwrap();
        assert_eq!(plus_minus(&e, &Rules::default()), "–");
        // Three trials bracket the median only 75% of the time: said beside the ±.
        let samples = sweep("sorted", &[(1, &[5.0, 5.2, 5.4])]);
        let s = summarize(&layout(Better::Lower), &samples, &Rules::default());
        let e = s[0].settings[0].estimate.unwrap();
        assert_eq!(plus_minus(&e, &Rules::default()), "±3.8% (75%)");
        assert_eq!(s[0].sentence, "one setting run: nothing to compare");
    }

    #[test]
    fn series_stay_apart_and_projected_points_are_not_settings() {
        let mut samples = sweep("sorted", &[(1, &times(5.0))]);
        samples.extend(sweep("random", &[(1, &times(9.0)), (16, &times(7.0))]));
        samples.push(Sample {
            projected: true,
            ..sample("random", (1u64 << 30) as f64, 1.0)
        });
        let s = summarize(&layout(Better::Lower), &samples, &Rules::default());
        let names: Vec<&str> = s.iter().map(|s| s.series.as_str()).collect();
        assert_eq!(names, ["sorted", "random"]);
        assert_eq!(s[1].settings.len(), 2);
        assert_eq!(s[1].settings[1].mark, Mark::Best);
    }

    #[test]
    fn a_finished_run_shows_the_findings_its_report_decided() {
        // Workers and memory swept: the live series split by workers, but the report decides
        // each order as one sweep. Once the run is over the summary shows that finding: its
        // labels, its marks, its sentence.
        use crate::experiment::index_build::Order;
        let six = |base: f64| times(base);
        let (a, b, c, d) = (six(7.0), six(5.5), six(6.9), six(5.51));
        let r = crate::report::example::index_build(
            "d",
            1_000_000,
            &[
                (Order::Random, 0, "1MB", &a),
                (Order::Random, 0, "64MB", &b),
                (Order::Random, 2, "1MB", &c),
                (Order::Random, 2, "64MB", &d),
            ],
        );
        let decided = crate::experiment::findings::decided(&r);
        assert_eq!(decided.len(), 1);
        let s = from_decided(&layout(Better::Lower), &decided);
        assert_eq!(s[0].series, "random");
        let marks: Vec<(&str, Mark)> = s[0]
            .settings
            .iter()
            .map(|r| (r.label.as_str(), r.mark))
            .collect();
        assert_eq!(
            marks,
            [
                ("1MB ×0w", Mark::None),
                ("64MB ×0w", Mark::Best),
                ("1MB ×2w", Mark::None),
                ("64MB ×2w", Mark::Tied)
            ]
        );
        assert_eq!(
            s[0].sentence,
            decided[0].finding.sentence_with(&|v| with_unit(v, "s"))
        );
        assert!(
            s[0].sentence.contains("64MB ×0w is enough"),
            "{}",
            s[0].sentence
        );
    }
}
