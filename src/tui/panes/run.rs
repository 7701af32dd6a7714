//! Run pane: the running trial, its phase and progress, elapsed and ETA, the live rate; below
//! it the results so far (see `results`), then the notes and the outcome.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Paragraph};

use super::results;
use super::{Series, pane_block, plain_line};
use crate::experiment::{
    ExperimentKind, ExperimentSpec, Outcome, Progress, ResultLayout, RunEvent, Sample, TrialRef,
};
use crate::measure::units::{format_count, format_seconds};
use crate::tui::app::{App, Focus};
use crate::tui::keys::Action;
use crate::tui::msg::RunKind;
use crate::tui::text::{fit, pack, spark, spinner, width, wrap};

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub outcome: Outcome,
    pub error: Option<String>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default)]
pub struct RunState {
    /// A run key was pressed; the preflight check is under way.
    pub preparing: Option<RunKind>,
    /// A run was spawned and has not sent its final event.
    pub running: bool,
    /// Cancel was asked for.
    pub cancelling: bool,
    pub kind: Option<RunKind>,
    pub experiment: Option<ExperimentKind>,
    pub run_id: String,
    pub description: String,
    pub trials: usize,
    pub started_at: Option<Instant>,
    pub trial: Option<TrialRef>,
    pub phase: String,
    pub progress: Option<Progress>,
    pub progress_at: Option<Instant>,
    pub rates: Series,
    pub rate_unit: String,
    pub layout: Option<ResultLayout>,
    pub samples: Vec<Sample>,
    pub notes: Vec<String>,
    pub ended: Option<Ended>,
}

impl RunState {
    pub fn is_active(&self) -> bool {
        self.preparing.is_some() || self.running
    }

    /// A run was spawned: forget the previous one.
    pub fn begin(&mut self, spec: &ExperimentSpec, kind: RunKind, now: Instant) {
        let c = spec.estimate();
        *self = RunState {
            running: true,
            kind: Some(kind),
            experiment: Some(spec.kind()),
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
            ..RunState::default()
        };
    }

    /// Apply an event; true when it was the final one.
    pub fn apply(&mut self, ev: RunEvent, now: Instant) -> bool {
        let end = |s: &mut RunState, outcome, error: Option<String>, seconds: f64| {
            s.running = false;
            s.cancelling = false;
            s.progress = None;
            s.ended = Some(Ended {
                outcome,
                error,
                seconds,
            });
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
                self.layout = Some(layout);
                self.samples.clear();
            }
            RunEvent::Phase { trial, phase } => {
                if trial.is_some() {
                    self.trial = trial;
                }
                self.phase = phase;
                self.progress = None;
            }
            RunEvent::Progress(p) => {
                if p.trial.is_some() {
                    self.trial = p.trial.clone();
                }
                self.phase = p.phase.clone();
                if let Some(r) = p.rate {
                    if self.rate_unit != p.rate_unit {
                        self.rates.clear();
                        self.rate_unit = p.rate_unit.clone();
                    }
                    self.rates.push(r);
                }
                self.progress = Some(p);
                self.progress_at = Some(now);
            }
            RunEvent::Sample(s) => self.samples.push(s),
            RunEvent::Note(n) => {
                if !self.notes.contains(&n) {
                    self.notes.push(n)
                }
            }
            RunEvent::Finished(r) => {
                self.merge_notes(&r.notes);
                end(self, Outcome::Finished, None, r.seconds());
                return true;
            }
            RunEvent::Failed { error, report } => {
                self.merge_notes(&report.notes);
                end(self, Outcome::Failed, Some(error), report.seconds());
                return true;
            }
            RunEvent::Cancelled(r) => {
                self.merge_notes(&r.notes);
                end(self, Outcome::Cancelled, None, r.seconds());
                return true;
            }
        }
        false
    }

    /// The stream ended without a final event.
    pub fn closed(&mut self, now: Instant) {
        if self.running {
            let secs = self
                .started_at
                .map(|t| now.saturating_duration_since(t).as_secs_f64())
                .unwrap_or(0.0);
            self.running = false;
            self.cancelling = false;
            self.progress = None;
            self.ended = Some(Ended {
                outcome: Outcome::Failed,
                error: Some("the run stopped without a result (see the log file)".into()),
                seconds: secs,
            });
        }
    }

    fn merge_notes(&mut self, notes: &[String]) {
        for n in notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
    }

    /// Seconds until the run ends, from the trials done and the current one's fraction.
    pub fn eta(&self, now: Instant) -> Option<f64> {
        let p = self.progress.as_ref()?;
        let f = p.fraction?.clamp(0.0, 1.0);
        match &p.trial {
            Some(t) if t.total > 0 => {
                let done = (t.index.saturating_sub(1) as f64 + f) / t.total as f64;
                let run = now
                    .saturating_duration_since(self.started_at?)
                    .as_secs_f64();
                (done > 0.01).then(|| run * (1.0 - done) / done)
            }
            _ => (f > 0.01).then(|| self.step_elapsed(now).unwrap_or(p.elapsed_s) * (1.0 - f) / f),
        }
    }

    fn step_elapsed(&self, now: Instant) -> Option<f64> {
        let p = self.progress.as_ref()?;
        let since = now
            .saturating_duration_since(self.progress_at?)
            .as_secs_f64();
        Some(p.elapsed_s + since)
    }

    fn title_parts(&self) -> Vec<String> {
        if self.running {
            if let Some(t) = &self.trial {
                return vec![format!("trial {}/{}", t.index, t.total), t.label.clone()];
            }
            return vec![self.description.clone()];
        }
        match &self.ended {
            Some(e) => vec![
                e.outcome.as_str().to_string(),
                self.experiment.map(|k| k.to_string()).unwrap_or_default(),
            ],
            None => vec![],
        }
    }
}

pub fn title_parts(app: &App) -> Vec<String> {
    app.run.title_parts()
}

enum Row<'a> {
    Text(Line<'a>),
    Gauge { ratio: f64, label: String },
}

pub fn render(app: &App, f: &mut Frame, area: Rect, title: bool) {
    let st = &app.run;
    let theme = app.theme;
    let inner = if title {
        let block = pane_block(app, Focus::Run, &st.title_parts(), area);
        let inner = block.inner(area);
        f.render_widget(block, area);
        inner
    } else {
        area
    };
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    if rows == 0 || cols < 10 {
        return;
    }
    let keys = &app.keys;
    let mut head: Vec<Row> = Vec::new();
    let mut foot: Vec<Line> = Vec::new();

    if st.running {
        let what = match &st.trial {
            Some(t) => format!("trial {}/{} · {} · {}", t.index, t.total, t.label, st.phase),
            None => format!("{} · {}", st.description, st.phase),
        };
        head.push(Row::Text(plain_line(fit(&what, cols), theme.plain())));
        match st.progress.as_ref().and_then(|p| p.fraction) {
            Some(fr) if !st.cancelling => head.push(Row::Gauge {
                ratio: fr.clamp(0.0, 1.0),
                label: format!("{:>3.0}%", fr * 100.0),
            }),
            _ => {
                let text = if st.cancelling {
                    format!(
                        "{} cancelling: asking the server to stop, then cleaning up…",
                        spinner(app.tick())
                    )
                } else {
                    format!("{} {}…", spinner(app.tick()), st.phase)
                };
                head.push(Row::Text(plain_line(fit(&text, cols), theme.accent())));
            }
        }
        let mut items = Vec::new();
        if let Some(t) = st.started_at {
            items.push(format!(
                "elapsed {}",
                format_seconds(app.now.saturating_duration_since(t).as_secs_f64())
            ));
        }
        if let Some(eta) = st.eta(app.now) {
            items.push(format!("eta {}", format_seconds(eta)));
        }
        let mut line = pack(&items, cols, " · ", 1).concat();
        if let Some(r) = st.rates.last() {
            let readout = format!(" · {} {}", format_count(r), st.rate_unit);
            let room = cols.saturating_sub(width(&line) + width(&readout) + 1);
            if room >= 4 {
                line.push_str(&readout);
                line.push(' ');
                let sp = spark(st.rates.iter(), room.min(24), None);
                head.push(Row::Text(Line::from(vec![
                    Span::styled(line, theme.plain()),
                    Span::styled(sp, theme.spark()),
                ])));
            } else {
                head.push(Row::Text(plain_line(
                    fit(&(line + &readout), cols),
                    theme.plain(),
                )));
            }
        } else {
            head.push(Row::Text(plain_line(line, theme.plain())));
        }
        if let Some(n) = st.notes.last() {
            foot.push(plain_line(fit(&format!("note: {n}"), cols), theme.dim()));
        }
    } else if st.preparing.is_some() {
        head.push(Row::Text(plain_line(
            fit(
                &format!(
                    "{} checking free space and connection slots…",
                    spinner(app.tick())
                ),
                cols,
            ),
            theme.accent(),
        )));
    } else if let Some(e) = &st.ended {
        let (text, style) = match e.outcome {
            Outcome::Finished => (
                format!(
                    "finished in {} · {} result{} · recorded in the history",
                    format_seconds(e.seconds),
                    st.samples.len(),
                    if st.samples.len() == 1 { "" } else { "s" }
                ),
                theme.good(),
            ),
            Outcome::Cancelled => (
                format!(
                    "cancelled after {} · {} result{} kept",
                    format_seconds(e.seconds),
                    st.samples.len(),
                    if st.samples.len() == 1 { "" } else { "s" }
                ),
                theme.warn(),
            ),
            Outcome::Failed => (
                format!("failed: {}", e.error.as_deref().unwrap_or("unknown error")),
                theme.error(),
            ),
        };
        for l in wrap(&text, cols, 3) {
            head.push(Row::Text(plain_line(l, style)));
        }
        // After a cancel or a failure, what was cleaned up comes first (the findings that
        // follow it in the notes would push it out of sight).
        let cleanup: Vec<&String> = st
            .notes
            .iter()
            .filter(|n| n.starts_with("cleaned up") || n.starts_with("cleanup failed"))
            .collect();
        if e.outcome != Outcome::Finished {
            let what = if cleanup.is_empty() {
                "nothing was left to clean up".to_string()
            } else {
                cleanup
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(" · ")
            };
            for l in wrap(&what, cols, 3) {
                head.push(Row::Text(plain_line(l, theme.plain())));
            }
        }
        let rest: Vec<&String> = st
            .notes
            .iter()
            .filter(|n| e.outcome == Outcome::Finished || !cleanup.contains(n))
            .collect();
        for n in &rest[rest.len().saturating_sub(2)..] {
            for l in wrap(&format!("note: {n}"), cols, 2) {
                head.push(Row::Text(plain_line(l, theme.dim())));
            }
        }
    } else {
        let text = if app.observe {
            app.look_only_why().to_string()
        } else {
            format!(
                "No run yet. {} runs one trial (the first value of every list), {} runs the full sweep; {} cancels a run.",
                keys.label(Action::Run),
                keys.label(Action::Sweep),
                keys.label(Action::Cancel)
            )
        };
        for l in wrap(&text, cols, 3) {
            head.push(Row::Text(plain_line(l, theme.dim())));
        }
    }

    let head_rows = head.len().min(rows);
    let foot_rows = foot.len().min(rows - head_rows);
    for (i, row) in head.into_iter().take(head_rows).enumerate() {
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
    for (i, l) in foot.into_iter().take(foot_rows).enumerate() {
        let y = inner.y + inner.height - foot_rows as u16 + i as u16;
        f.render_widget(Paragraph::new(l), Rect::new(inner.x, y, inner.width, 1));
    }
    let body_h = rows - head_rows - foot_rows;
    if body_h >= 3 {
        let y = inner.y + head_rows as u16;
        let body = Rect::new(inner.x, y, inner.width, body_h as u16);
        results::render(app, f, body);
    }
}
