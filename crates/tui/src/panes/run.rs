//! Run pane: the running trial, its phase and progress, elapsed and ETA, the live rate (see
//! `run_head`); below it the results so far in one of four views (see `results`), scrolled
//! when focused.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::{LineGauge, Paragraph};

use super::run_head::{self, Row};
pub(crate) use super::run_life::{Ended, Lifecycle};
use super::run_view::{RunView, Scroll};
use super::{Series, framed_pane, results};
use crate::experiment::{
    ExperimentKind, ExperimentSpec, Outcome, Progress, ResultLayout, RunEvent, Sample, TrialRef,
};
use crate::measure::rules::Rules;
use crate::tui::app::{App, Focus};
use crate::tui::msg::RunKind;

#[derive(Debug, Clone, Default)]
pub struct RunState {
    /// Idle, preparing, running (cancelling) or ended.
    pub life: Lifecycle,
    pub kind: Option<RunKind>,
    pub experiment: Option<ExperimentKind>,
    /// The server settings the run sweeps (`set`), in text form; empty when none.
    pub whatif: String,
    /// What the chart and the summary put on the x axis when the user chose (`a`); kept
    /// from run to run. None: the pane chooses (see [`super::axis::effective`]).
    pub axis: Option<super::axis::Axis>,
    pub run_id: String,
    pub description: String,
    pub trials: usize,
    pub started_at: Option<Instant>,
    pub trial: Option<TrialRef>,
    pub phase: String,
    pub progress: Option<Progress>,
    pub progress_at: Option<Instant>,
    pub rates: Series,
    /// Which of `rates` were an ingest's stalled seconds (see [`super::stall_spark`]).
    pub stalls: super::stall_spark::Stalls,
    pub rate_unit: String,
    pub layout: Option<ResultLayout>,
    pub samples: Vec<Sample>,
    pub notes: Vec<String>,
    /// Trials finished (the last one named before the run moved on).
    pub done: usize,
    /// The work of each trial relative to the others (growth steps grow); empty: equal.
    pub weights: Vec<f64>,
    /// What the run measured so far says is left (see [`crate::experiment::lab::live_eta`]).
    pub live: crate::experiment::lab::live_eta::LiveEta,
    /// The run's confidence and smallest effect: the intervals and best groups shown.
    pub rules: Rules,
    /// Once the run is over: the findings its report decided (the summary view shows these,
    /// so its marks and sentences are the report's).
    pub decided: Vec<crate::experiment::lab::findings::Decided>,
    /// What the body shows; kept from run to run.
    pub view: RunView,
    pub scroll: Scroll,
    /// Columns of the tables scrolled off to the left (after the ones that stay).
    pub hscroll: usize,
    /// How long the run was expected to take when it started (from the history).
    pub expected: Option<crate::experiment::lab::eta::Eta>,
    /// The run's recommendation (the decision), once it finished.
    pub decision: Vec<String>,
    /// The last query run's report, for the plan view (`e`).
    pub query: Option<Box<crate::experiment::query::QueryReport>>,
}

impl RunState {
    /// True when the run's samples carry swept server settings (the axis can change).
    pub(crate) fn sweeps_settings(&self) -> bool {
        self.samples.iter().any(|s| !s.settings.is_empty())
    }

    /// The axis shown now.
    pub(crate) fn axis(&self) -> super::axis::Axis {
        super::axis::effective(self.axis, &self.samples)
    }

    /// The layout and samples as the axis shown draws them.
    pub(crate) fn on_axis(&self) -> Option<(ResultLayout, Vec<Sample>)> {
        let layout = self.layout.as_ref()?;
        Some(super::axis::view(self.axis(), layout, &self.samples))
    }

    pub(crate) fn is_active(&self) -> bool {
        self.life.is_active()
    }

    /// A run was spawned and has not sent its final event.
    pub(crate) fn running(&self) -> bool {
        self.life.is_running()
    }

    /// Cancel was asked for the run under way.
    pub(crate) fn cancelling(&self) -> bool {
        self.life.is_cancelling()
    }

    /// How the run on the pane ended.
    pub(crate) fn ended(&self) -> Option<&Ended> {
        self.life.ended()
    }

    /// A run was spawned: forget the previous one.
    pub(crate) fn begin(&mut self, spec: &ExperimentSpec, kind: RunKind, now: Instant) {
        let c = spec.estimate();
        let view = self.view;
        let axis = self.axis;
        *self = RunState {
            axis,
            life: Lifecycle::Running { cancelling: false },
            kind: Some(kind),
            experiment: Some(spec.kind()),
            whatif: spec.settings().text(),
            started_at: Some(now),
            trials: c.trials,
            description: format!(
                "{} · {} · {} trial{}",
                spec.kind(),
                match kind {
                    RunKind::Single => "single trial",
                    RunKind::Sweep => "sweep",
                },
                c.trials,
                if c.trials == 1 { "" } else { "s" }
            ),
            phase: "starting".into(),
            rules: spec.rules(),
            weights: spec.trial_weights(),
            live: crate::experiment::lab::live_eta::LiveEta::of(c.trials, spec),
            view,
            scroll: Scroll::new(view),
            ..RunState::default()
        };
    }

    /// Show `view`, from its own starting position.
    pub(crate) fn set_view(&mut self, view: RunView) {
        self.view = view;
        self.scroll = Scroll::new(view);
        self.hscroll = 0;
    }

    /// The trial now running: the one before it is done. None between trials (a dataset
    /// being prepared): the last one named is done and no longer shown as running.
    fn set_trial(&mut self, trial: Option<TrialRef>) {
        match &trial {
            Some(t) => self.done = self.done.max(t.index.saturating_sub(1)),
            None => {
                if let Some(t) = &self.trial {
                    self.done = self.done.max(t.index);
                }
            }
        }
        self.trial = trial;
    }

    /// Apply an event; true when it was the final one.
    pub(crate) fn apply(&mut self, ev: RunEvent, now: Instant) -> bool {
        let end = |s: &mut RunState, outcome, error: Option<String>, seconds: f64| {
            s.progress = None;
            s.life.end(outcome, error, seconds);
        };
        match ev {
            RunEvent::Started {
                run_id,
                description,
                trials,
                layout,
            } => {
                self.run_id = run_id;
                self.description = description;
                self.trials = trials;
                self.live.set_total(trials);
                self.layout = Some(layout);
                self.samples.clear();
            }
            RunEvent::Phase { trial, phase } => {
                self.live.trial(trial.as_ref(), None, now);
                self.set_trial(trial);
                self.phase = phase;
                self.progress = None;
            }
            RunEvent::Progress(p) => {
                self.live.trial(p.trial.as_ref(), p.fraction, now);
                self.set_trial(p.trial.clone());
                self.phase = p.phase.clone();
                if let Some(r) = p.rate {
                    if self.rate_unit != p.rate_unit {
                        self.rates.clear();
                        self.stalls.clear();
                        self.rate_unit = p.rate_unit.clone();
                    }
                    self.rates.push(r);
                    let ingest = self.experiment == Some(ExperimentKind::Ingest);
                    self.stalls
                        .push(ingest && super::stall_spark::is_stall(r, p.elapsed_s));
                }
                self.progress = Some(p);
                self.progress_at = Some(now);
            }
            RunEvent::Sample(s) => {
                self.live.done();
                if let Some(t) = &self.trial {
                    self.done = self.done.max(t.index);
                }
                self.samples.push(s);
            }
            // A mark for the experiment: dropped here, which lets it go on.
            RunEvent::Settle(_) => {}
            RunEvent::Note(n) => {
                if !self.notes.contains(&n) {
                    self.notes.push(n)
                }
            }
            RunEvent::Finished(r) => {
                self.keep_plans(&r);
                self.merge_notes(&r.notes);
                self.decided = crate::experiment::lab::findings::decided(&r);
                self.decision = decision(&r);
                end(self, Outcome::Finished, None, r.seconds());
                return true;
            }
            RunEvent::Failed { error, report } => {
                self.keep_plans(&report);
                self.merge_notes(&report.notes);
                self.decided = crate::experiment::lab::findings::decided(&report);
                end(self, Outcome::Failed, Some(error), report.seconds());
                return true;
            }
            RunEvent::Cancelled(r) => {
                self.keep_plans(&r);
                self.merge_notes(&r.notes);
                self.decided = crate::experiment::lab::findings::decided(&r);
                end(self, Outcome::Cancelled, None, r.seconds());
                return true;
            }
        }
        false
    }

    /// The stream ended without a final event.
    /// The run was refused as it was about to start: nothing ran.
    pub(crate) fn refused(&mut self, why: String) {
        self.progress = None;
        self.life
            .end(Outcome::Failed, Some(format!("not started: {why}")), 0.0);
    }

    pub(crate) fn closed(&mut self, now: Instant) {
        if self.running() {
            let secs = self
                .started_at
                .map(|t| now.saturating_duration_since(t).as_secs_f64())
                .unwrap_or(0.0);
            self.progress = None;
            self.life.end(
                Outcome::Failed,
                Some("the run stopped without a result (see the log file)".into()),
                secs,
            );
        }
    }

    /// A query run's plans stay for the plan view.
    fn keep_plans(&mut self, r: &crate::experiment::RunReport) {
        if let crate::experiment::ReportBody::Query(q) = &r.body
            && !q.plans.is_empty()
        {
            self.query = Some(q.clone());
        }
    }

    fn merge_notes(&mut self, notes: &[String]) {
        for n in notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
    }

    /// How much of the run's work is done, 0..1: finished trials by their weight, plus the
    /// current trial's measured fraction. None before anything is known.
    pub(crate) fn run_fraction(&self) -> Option<f64> {
        let total = self.trials;
        if total == 0 {
            return None;
        }
        let equal = self.weights.len() != total;
        let w = |i: usize| if equal { 1.0 } else { self.weights[i] };
        let all: f64 = (0..total).map(w).sum();
        let mut done: f64 = (0..self.done.min(total)).map(w).sum();
        let current = self.progress.as_ref().and_then(|p| {
            let t = p.trial.as_ref()?;
            Some((t.index, p.fraction?.clamp(0.0, 1.0)))
        });
        if let Some((index, f)) = current
            && index >= 1
            && index <= total
            && index > self.done
        {
            done += f * w(index - 1);
        }
        (all > 0.0 && (done > 0.0 || current.is_some())).then(|| (done / all).clamp(0.0, 1.0))
    }

    /// The run's share shown beside its ETA, 0..1: when the trials measured so far give the
    /// ETA, the time spent over the time spent and left (so "run 40%" and "run eta" tell the
    /// same story; a count of trials would not when they take unequal times), else
    /// [`Self::run_fraction`].
    pub(crate) fn run_share(&self, now: Instant) -> Option<f64> {
        if let (Some(left), Some(start)) = (self.live.remaining(now), self.started_at) {
            let spent = now.saturating_duration_since(start).as_secs_f64();
            if spent + left > 0.0 {
                return Some((spent / (spent + left)).clamp(0.0, 1.0));
            }
        }
        self.run_fraction()
    }

    /// Seconds until the run ends: from the trials measured so far (their pace, each
    /// setting's own), else from the work done so far; before a trial has run, from the
    /// current step's fraction.
    pub(crate) fn eta(&self, now: Instant) -> Option<f64> {
        if let Some(left) = self.live.remaining(now) {
            return Some(left);
        }
        if let Some(done) = self.run_fraction() {
            let run = now
                .saturating_duration_since(self.started_at?)
                .as_secs_f64();
            return (done > 0.01).then(|| run * (1.0 - done) / done);
        }
        let f = self.progress.as_ref()?.fraction?.clamp(0.0, 1.0);
        let p = self.progress.as_ref()?;
        (f > 0.01).then(|| self.step_elapsed(now).unwrap_or(p.elapsed_s) * (1.0 - f) / f)
    }

    fn step_elapsed(&self, now: Instant) -> Option<f64> {
        let p = self.progress.as_ref()?;
        let since = now
            .saturating_duration_since(self.progress_at?)
            .as_secs_f64();
        Some(p.elapsed_s + since)
    }

    fn title_parts(&self) -> Vec<String> {
        let mut parts = if self.running() {
            match &self.trial {
                Some(t) => vec![format!("trial {}/{}", t.index, t.total), t.label.clone()],
                None if self.done > 0 => vec![format!("{}/{} trials done", self.done, self.trials)],
                None => vec![self.description.clone()],
            }
        } else {
            match self.ended() {
                Some(e) => vec![
                    e.outcome.as_str().to_string(),
                    self.experiment.map(|k| k.to_string()).unwrap_or_default(),
                ],
                None => vec![],
            }
        };
        if !self.samples.is_empty() || !self.notes.is_empty() {
            parts.push(self.view.name().to_string());
        }
        parts
    }
}

/// The recommendation of a finished run as the report gives it (its `**` marks dropped),
/// each followed by its SQL.
/// The run's decision first (its headline and SQL, as the report, history and JSON say it),
/// then the rest of the advice.
fn decision(r: &crate::experiment::RunReport) -> Vec<String> {
    let c = crate::report::content::content(r);
    let mut out = Vec::new();
    if let Some(d) = &c.decision {
        // The advice below says the evidence again (with what to do next): the headline keeps
        // only its verdict, so the few lines of a small pane are not spent on it twice.
        let repeated = !d.evidence.is_empty()
            && d.recommended.is_none()
            && c.recommendations
                .iter()
                .any(|r| r.text.contains(&d.evidence));
        out.push(match repeated {
            true => format!("{}.", d.verdict_words()),
            false => format!("{}.", d.headline()),
        });
        out.extend(d.set.iter().cloned());
    }
    for rec in c.recommendations {
        out.push(rec.text.replace("**", ""));
        out.extend(rec.sql);
    }
    out
}

pub(crate) fn title_parts(app: &App) -> Vec<String> {
    app.run.title_parts()
}

/// The pane's inside, split: the status lines on top, the last note at the bottom while
/// running, the results between them.
struct Parts<'a> {
    head: Vec<Row<'a>>,
    foot: Vec<ratatui::text::Line<'a>>,
    body: Option<Rect>,
}

fn parts<'a>(app: &App, inner: Rect) -> Parts<'a> {
    let rows = inner.height as usize;
    let (mut head, mut foot) = run_head::lines(app, inner.width as usize, rows);
    head.truncate(rows);
    let foot_rows = foot.len().min(rows - head.len());
    foot.truncate(foot_rows);
    let body_h = rows - head.len() - foot_rows;
    let body = (body_h >= 3).then(|| {
        Rect::new(
            inner.x,
            inner.y + head.len() as u16,
            inner.width,
            body_h as u16,
        )
    });
    Parts { head, foot, body }
}

/// How many lines the body's current view has and how many of them fit, for scrolling:
/// the same geometry `render` uses. None when the run pane is not on screen.
pub(crate) fn viewport(app: &App) -> Option<(usize, usize)> {
    let inner = crate::tui::render::run_inner(app)?;
    if inner.height == 0 || inner.width < 10 {
        return None;
    }
    let body = parts(app, inner).body?;
    Some(results::viewport(app, body))
}

/// How many columns of the body's table can scroll off to the left (0: all fit, or no table).
pub(crate) fn column_room(app: &App) -> usize {
    let Some(inner) = crate::tui::render::run_inner(app) else {
        return 0;
    };
    if inner.height == 0 || inner.width < 10 {
        return 0;
    }
    parts(app, inner)
        .body
        .map(|b| results::column_room(app, b))
        .unwrap_or(0)
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect, title: bool) {
    let st = &app.run;
    let theme = app.theme;
    let inner = if title {
        let mut parts = st.title_parts();
        if app.zoom {
            parts.push(format!(
                "{} gives the panes back",
                app.keys.label(crate::tui::keys::Action::Zoom)
            ));
        }
        framed_pane(app, f, Focus::Run, &parts, area)
    } else {
        area
    };
    if inner.height == 0 || inner.width < 10 {
        return;
    }
    let Parts { head, foot, body } = parts(app, inner);
    for (i, row) in head.into_iter().enumerate() {
        let r = Rect::new(inner.x, inner.y + i as u16, inner.width, 1);
        match row {
            Row::Text(l) => f.render_widget(Paragraph::new(l), r),
            Row::Gauge { ratio, label } => f.render_widget(
                LineGauge::default()
                    .ratio(ratio)
                    .filled_symbol("█")
                    .unfilled_symbol("░")
                    .label(label)
                    .filled_style(theme.accent())
                    .unfilled_style(theme.dim()),
                r,
            ),
        }
    }
    let n = foot.len() as u16;
    for (i, l) in foot.into_iter().enumerate() {
        let y = inner.y + inner.height - n + i as u16;
        f.render_widget(Paragraph::new(l), Rect::new(inner.x, y, inner.width, 1));
    }
    if let Some(body) = body {
        results::render(app, f, body);
    }
}

#[cfg(test)]
mod decision_tests {
    /// A run whose headline recommends nothing: the advice below carries the evidence with
    /// what to do next, so the headline keeps only its verdict.
    #[test]
    fn the_evidence_is_said_once() {
        for (r, verdict, evidence) in [
            (
                crate::report::example::cybertec_10m("r"),
                "sorted: not decided yet.",
                "the best is among 16MB..1GB at 95%",
            ),
            (
                crate::report::example::decided_10m("d"),
                "sorted: keep the current setting.",
                "no significant difference between 1MB..1GB",
            ),
        ] {
            let lines = super::decision(&r);
            assert_eq!(lines[0], verdict, "{lines:?}");
            assert_eq!(
                lines.iter().filter(|l| l.contains(evidence)).count(),
                1,
                "{lines:?}"
            );
        }
    }
}
