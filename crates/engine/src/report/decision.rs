//! One decision per run: what the run recommends, on what evidence, with its interval, the
//! settings that may be best, those shown worse and the `SET` lines that apply it. It is
//! computed once from the statistics core's finding for the run's headline question (the one
//! that holds the run's best configuration) and every front end reads it: the report's
//! "Decision" line and its SQL, the history's result column, the JSON (`decision`), and the
//! TUI's summary. None of them words the answer on its own, so they cannot disagree.

use serde::{Deserialize, Serialize};

use crate::experiment::lab::findings::{Decided, decided};
use crate::experiment::{ReportBody, RunReport};
use crate::measure::finding::Finding;
use crate::measure::units::{format_rate, format_seconds};
use crate::measure::verdict::{Better, Verdict};

/// The median of the recommended setting with its interval, in the run's own measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// Trials behind it.
    pub n: usize,
    /// "s", "rows/s" or "tx/s".
    pub unit: String,
}

impl Interval {
    fn value(&self, v: f64) -> String {
        match self.unit.as_str() {
            "s" => format_seconds(v),
            u => format!("{} {u}", format_rate(v)),
        }
    }

    /// "450 ms [440 ms, 470 ms], median of 5".
    pub(crate) fn words(&self) -> String {
        if self.n > 1 {
            format!(
                "{} [{}, {}], median of {}",
                self.value(self.median),
                self.value(self.low),
                self.value(self.high),
                self.n
            )
        } else {
            format!("{}, one trial", self.value(self.median))
        }
    }
}

/// A run's decision (see the module's comment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The question the headline answers: "random", "copy, 1 client, sync=on, by batch".
    pub question: String,
    /// The core's verdict on it (absent: one setting, nothing compared).
    pub verdict: Option<Verdict>,
    /// The setting recommended, if the evidence names one.
    pub recommended: Option<String>,
    /// The core's sentence for the question: the evidence.
    pub evidence: String,
    /// The recommended setting's median with its interval.
    pub interval: Option<Interval>,
    /// Every setting that may still be the best.
    pub may_be_best: Vec<String>,
    /// Every setting the comparison shows worse than the best.
    pub shown_worse: Vec<String>,
    /// The statements that apply the recommendation (empty: nothing to change).
    pub set: Vec<String>,
}

impl Decision {
    /// The headline: "random: use 16MB — 450 ms [440 ms, 470 ms], median of 5", or what
    /// stands in the way of a recommendation.
    pub fn headline(&self) -> String {
        let q = &self.question;
        match (&self.recommended, self.verdict) {
            (Some(r), _) => match &self.interval {
                Some(i) => format!("{q}: use {r} — {}", i.words()),
                None => format!("{q}: use {r}"),
            },
            (None, Some(_)) => format!("{}: {}", self.verdict_words(), self.evidence),
            (None, None) => format!("{q}: {}", self.evidence),
        }
    }

    /// The headline without its evidence, for a place that says the evidence beside it:
    /// "random: not decided yet", "random: keep the current setting", or the whole headline
    /// when it recommends a setting.
    pub fn verdict_words(&self) -> String {
        let q = &self.question;
        match (&self.recommended, self.verdict) {
            (Some(_), _) => self.headline(),
            (None, Some(Verdict::TooFewTrials)) => format!("{q}: not decided yet"),
            (None, Some(_)) => format!("{q}: keep the current setting"),
            (None, None) => q.clone(),
        }
    }
}

/// The unit of the run's measure.
fn unit(report: &RunReport, better: Better) -> &'static str {
    match (&report.body, better) {
        (_, Better::Lower) => "s",
        (ReportBody::Query(_), Better::Higher) => "tx/s",
        (_, Better::Higher) => "rows/s",
    }
}

/// The decided question the headline answers: for ingest the one whose fixed parameters hold
/// the run's best configuration (what its advice starts from), else the first.
fn headline_question(report: &RunReport, all: Vec<Decided>) -> Option<Decided> {
    if let ReportBody::Ingest(b) = &report.body
        && let Some(i) = super::ingest_advice::headline_group(b)
    {
        let g = &b.summary.groups[i];
        let at = all.iter().position(|d| {
            g.decided.as_ref() == Some(&d.finding) && g.finding.starts_with(&d.question)
        });
        if let Some(at) = at {
            return all.into_iter().nth(at);
        }
    }
    all.into_iter().next()
}

/// The SQL that applies `f`'s recommendation, from the kind's own advice.
fn set_lines(report: &RunReport, d: &Decided) -> Vec<String> {
    let Some(rec) = &d.finding.recommendation else {
        return Vec::new();
    };
    super::kind_view::view(&report.body).set_lines(report, d, rec)
}

fn interval(f: &Finding, label: &str, unit: &str) -> Option<Interval> {
    let e = f.setting(label)?.estimate?;
    Some(Interval {
        median: e.median,
        low: e.ci_low,
        high: e.ci_high,
        n: e.n,
        unit: unit.to_string(),
    })
}

/// The run's decision, computed from its headline question's finding; `None` for a run that
/// decided nothing (an error before any trial, a kind with no sweep).
pub(crate) fn decision(report: &RunReport) -> Option<Decision> {
    let d = headline_question(report, decided(report))?;
    let f = &d.finding;
    let unit = unit(report, f.better);
    let fmt = |v: f64| match unit {
        "s" => format_seconds(v),
        u => format!("{} {u}", format_rate(v)),
    };
    let recommended = f.recommendation.clone();
    Some(Decision {
        question: d.question.clone(),
        verdict: f.verdict,
        interval: recommended.as_deref().and_then(|r| interval(f, r, unit)),
        evidence: f.sentence_with(&fmt),
        may_be_best: f.may_be_best.clone(),
        shown_worse: f.shown_worse.clone(),
        set: set_lines(report, &d),
        recommended,
    })
}
