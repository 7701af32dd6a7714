//! Per setting of a run: the median of its trials with its interval, and how it stands (★ the
//! core's answer, ≈ shown as good as the best). All of it comes from the statistics core
//! (`measure::finding::decide`). While a run is going the pane decides each series from the
//! samples so far; once the run is over it shows the findings the report decided
//! ([`from_decided`]), so the marks and sentences are the report's, the recommendation's and
//! the JSON's.
//!
//! A setting is one `(series, x)` of the measured samples (projected points and warm-ups are
//! not measurements); its trials are every sample's own (`Sample::trials`: a growth step
//! carries all its writes). Within a series the settings are ranked by cost in ascending `x`
//! (less memory, smaller batch), which is how the core picks the cheapest of a tie. Layouts
//! that compare the series at each x instead (growth's designs at a step) get no marks
//! here: their verdicts are the experiment's own findings, carried by the samples.

use crate::experiment::{Compare, ResultLayout, Sample};
use crate::measure::finding::{Finding, SettingTrials, decide};
use crate::measure::interval::{Estimate, estimate};
use crate::measure::rules::Rules;
use crate::measure::verdict::Verdict;
use crate::tui::text::with_unit;

/// How a setting stands in its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Not in the best group, or nothing is decided yet.
    None,
    /// The winner, or the cheapest member of the best group: the one to use.
    Best,
    /// Shown as good as the best: within the smallest effect of every setting that could be
    /// the best.
    Tied,
}

impl Mark {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Mark::None => " ",
            Mark::Best => "★",
            Mark::Tied => "≈",
        }
    }
}

/// One setting: its label, the estimate of its trials and its mark.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SettingRow {
    pub series: String,
    pub x: f64,
    /// `x` in its unit: "16 MB", "1k".
    pub label: String,
    pub estimate: Option<Estimate>,
    /// The estimate of each of the layout's further measures (growth: reads).
    pub measures: Vec<Option<Estimate>>,
    /// The layout's summary columns, from the setting's last sample (growth: rows, sizes).
    pub cells: Vec<String>,
    pub mark: Mark,
}

/// One series: its settings in ascending `x` and the core's finding as a sentence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SeriesSummary {
    pub series: String,
    pub settings: Vec<SettingRow>,
    pub sentence: String,
}

/// The settings of every series, in the order the series first appeared.
pub(crate) fn summarize(
    layout: &ResultLayout,
    samples: &[Sample],
    rules: &Rules,
) -> Vec<SeriesSummary> {
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
    let set = Settings::of(layout, samples, name, rules);
    let trials = set.trials();
    if layout.compare == Compare::Series {
        // The series are compared at each x by the experiment itself: no ranking of x here.
        let settings = set
            .xs
            .iter()
            .zip(trials)
            .map(|(x, t)| {
                let estimate = estimate(&t.values, rules.confidence);
                set.row(*x, t.label, estimate, Mark::None)
            })
            .collect();
        return SeriesSummary {
            series: name.to_string(),
            settings,
            sentence: String::new(),
        };
    }
    let finding = decide(&trials, layout.y_better, rules);
    let unit = layout.y_unit.clone();
    let sentence = finding.sentence_with(&|v| with_unit(v, &unit));
    let settings = finding
        .settings
        .iter()
        .zip(&set.xs)
        .map(|(r, x)| set.row(*x, r.label.clone(), r.estimate, mark(&finding, &r.label)))
        .collect();
    SeriesSummary {
        series: name.to_string(),
        settings,
        sentence,
    }
}

/// One series' measured samples and its settings: each distinct `x`, ascending, labelled.
struct Settings<'a> {
    layout: &'a ResultLayout,
    rules: &'a Rules,
    name: &'a str,
    measured: Vec<&'a Sample>,
    xs: Vec<f64>,
    labels: Vec<String>,
    /// Where each of the layout's summary columns is among its columns.
    columns: Vec<Option<usize>>,
}

impl<'a> Settings<'a> {
    fn of(
        layout: &'a ResultLayout,
        samples: &'a [Sample],
        name: &'a str,
        rules: &'a Rules,
    ) -> Settings<'a> {
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
        let columns = layout
            .summary_columns
            .iter()
            .map(|c| layout.columns.iter().position(|k| k == c))
            .collect();
        Settings {
            layout,
            rules,
            name,
            measured,
            xs,
            labels,
            columns,
        }
    }

    /// The samples of the setting at `x`, in the order they came.
    fn at(&self, x: f64) -> impl DoubleEndedIterator<Item = &&'a Sample> {
        self.measured.iter().filter(move |s| s.x == x)
    }

    /// Every setting's trials, ranked by cost in ascending `x`.
    fn trials(&self) -> Vec<SettingTrials> {
        self.xs
            .iter()
            .zip(&self.labels)
            .enumerate()
            .map(|(rank, (x, label))| SettingTrials {
                label: label.clone(),
                cost_rank: rank,
                values: self.at(*x).flat_map(|s| s.trials()).collect(),
                ..SettingTrials::default()
            })
            .collect()
    }

    /// The setting at `x` as the pane lists it.
    fn row(&self, x: f64, label: String, estimate: Option<Estimate>, mark: Mark) -> SettingRow {
        SettingRow {
            series: self.name.to_string(),
            x,
            label,
            estimate,
            measures: self.measures(x),
            cells: self.cells(x),
            mark,
        }
    }

    /// The estimate of each of the layout's further measures at `x`.
    fn measures(&self, x: f64) -> Vec<Option<Estimate>> {
        (0..self.layout.measures.len())
            .map(|m| {
                let v: Vec<f64> = self
                    .at(x)
                    .flat_map(|s| s.measures.get(m).cloned().unwrap_or_default())
                    .collect();
                estimate(&v, self.rules.confidence)
            })
            .collect()
    }

    /// The summary columns of the last sample at `x`.
    fn cells(&self, x: f64) -> Vec<String> {
        let last = self.at(x).next_back();
        self.columns
            .iter()
            .map(|i| {
                i.and_then(|i| last.and_then(|s| s.cells.get(i).cloned()))
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// The findings a finished run decided, as the summary lists them: one block per question,
/// its settings in the finding's order (cheapest first), each with its estimate and mark.
pub(crate) fn from_decided(
    layout: &ResultLayout,
    decided: &[crate::experiment::lab::findings::Decided],
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
                        measures: vec![None; layout.measures.len()],
                        cells: vec![String::new(); layout.summary_columns.len()],
                        mark: mark(f, &s.label),
                    })
                    .collect(),
                sentence: f.sentence_with(&|v| with_unit(v, &unit)),
            }
        })
        .collect()
}

/// Each x the samples reached, ascending, with what the experiment concluded there (the
/// findings its samples carry), for layouts that compare the series at each x.
pub(crate) fn findings_by_x(samples: &[Sample]) -> Vec<(f64, Vec<String>)> {
    let mut out: Vec<(f64, Vec<String>)> = Vec::new();
    for s in samples.iter().filter(|s| !s.projected && s.x.is_finite()) {
        let i = match out.iter().position(|(x, _)| *x == s.x) {
            Some(i) => i,
            None => {
                out.push((s.x, Vec::new()));
                out.len() - 1
            }
        };
        for f in &s.findings {
            if !out[i].1.contains(f) {
                out[i].1.push(f.clone());
            }
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
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

/// The interval as its two ends in the layout's unit, "40–50 ms", with the coverage reached
/// when it falls short of the rules' confidence ("40–50 ms (87.5%)": four trials bracket the
/// median only 88% of the time); "–" for a single trial, which has no interval. The same
/// bounds `history show` prints.
pub(crate) fn interval(e: &Estimate, unit: &str, rules: &Rules) -> String {
    if e.n < 2 {
        return "–".into();
    }
    let text = crate::tui::text::span_with_unit(e.ci_low, e.ci_high, unit);
    if e.reaches(rules.confidence) {
        text
    } else {
        format!(
            "{text} ({})",
            crate::measure::wording::format_level(e.level)
        )
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
            ..Default::default()
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
            ..Default::default()
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
        // Six trials reach 95%: x(1)..x(6) is 0.99..1.01 of the base.
        let e = s[0].settings[0].estimate.unwrap();
        assert_eq!(e.n, 6);
        assert!((e.median - 10.01).abs() < 1e-9, "{e:?}");
        assert_eq!(interval(&e, "s", &Rules::default()), "9.9–10.1 s");
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
        assert_eq!(interval(&e, "s", &Rules::default()), "–");
        // Three trials bracket the median only 75% of the time: said beside the ±.
        let samples = sweep("sorted", &[(1, &[5.0, 5.2, 5.4])]);
        let s = summarize(&layout(Better::Lower), &samples, &Rules::default());
        let e = s[0].settings[0].estimate.unwrap();
        assert_eq!(interval(&e, "s", &Rules::default()), "5.0–5.4 s (75%)");
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
        let decided = crate::experiment::lab::findings::decided(&r);
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
