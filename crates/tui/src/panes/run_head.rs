//! The status lines at the top of the run pane: what runs now (the current trial, or the
//! phase between trials), its progress bar, elapsed time and ETA, the live rate; after a
//! run, how it ended and its last notes.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::plain_line;
use super::run::{Ended, Lifecycle, RunState};
use super::run_view::RunView;
use super::stall_spark::stall_spans;
use crate::experiment::Outcome;
use crate::measure::units::{format_rate, format_seconds};
use crate::tui::app::App;
use crate::tui::keys::Action;
use crate::tui::text::{fit, pack, spinner, width, wrap};

/// A status line: text, or a progress bar.
pub(crate) enum Row<'a> {
    Text(Line<'a>),
    Gauge { ratio: f64, label: String },
}

/// The lines above the results and the line below them, for a pane `cols` wide and `rows`
/// high.
pub(crate) fn lines<'a>(app: &App, cols: usize, rows: usize) -> (Vec<Row<'a>>, Vec<Line<'a>>) {
    let st = &app.run;
    let mut head: Vec<Row> = Vec::new();
    let mut foot: Vec<Line> = Vec::new();

    match &st.life {
        Lifecycle::Running { .. } => running(app, cols, &mut head, &mut foot),
        Lifecycle::Preparing { .. } => head.push(preparing(app, cols)),
        Lifecycle::Ended(e) => ended(app, e, cols, rows, &mut head),
        Lifecycle::Idle => idle(app, cols, &mut head),
    }

    (head, foot)
}

/// While a run runs: what runs now, its progress, the times and rate line; the last note
/// goes below the results.
fn running<'a>(app: &App, cols: usize, head: &mut Vec<Row<'a>>, foot: &mut Vec<Line<'a>>) {
    let st = &app.run;
    let theme = app.theme;
    head.push(Row::Text(plain_line(
        fit(&current(st), cols),
        theme.plain(),
    )));
    // One convention, labelled: the bar is the current trial's progress when it can be
    // measured ("trial 37%"), else the whole run's ("run 71%"); the line under it
    // always gives the whole run's share, elapsed time and ETA.
    let run_share = st.run_share(app.now).filter(|_| st.trials > 1);
    head.push(progress(app, run_share, cols));
    let items = times(app, run_share);
    head.push(times_and_rate(app, &items, cols));
    if let Some(n) = st.notes.last() {
        foot.push(plain_line(fit(&format!("note: {n}"), cols), theme.dim()));
    }
}

/// What runs now: the trial, or between trials (a dataset being prepared) how many are done,
/// as the finished trial is not named.
fn current(st: &RunState) -> String {
    match &st.trial {
        Some(t) => format!("trial {}/{} · {} · {}", t.index, t.total, t.label, st.phase),
        None if st.done > 0 => format!("{}/{} trials done · {}", st.done, st.trials, st.phase),
        None => format!("{} · {}", st.description, st.phase),
    }
}

/// The progress row: the trial's (or step's) bar when it can be measured, else the whole
/// run's, else a spinner with the phase (or the cancel under way).
fn progress<'a>(app: &App, run_share: Option<f64>, cols: usize) -> Row<'a> {
    let st = &app.run;
    match st.progress.as_ref().and_then(|p| p.fraction) {
        Some(fr) if !st.cancelling() => Row::Gauge {
            ratio: fr.clamp(0.0, 1.0),
            label: format!(
                "{} {:>3.0}%",
                if st.trial.is_some() { "trial" } else { "step" },
                fr * 100.0
            ),
        },
        // A step without a measurable extent: how far the whole run is.
        None if !st.cancelling() && run_share.is_some() => {
            let fr = run_share.unwrap_or(0.0);
            Row::Gauge {
                ratio: fr,
                label: format!("run {:>3.0}%", fr * 100.0),
            }
        }
        _ => {
            let text = if st.cancelling() {
                format!(
                    "{} cancelling: asking the server to stop, then cleaning up…",
                    spinner(app.tick())
                )
            } else {
                format!("{} {}…", spinner(app.tick()), st.phase)
            };
            Row::Text(plain_line(fit(&text, cols), app.theme.accent()))
        }
    }
}

/// The run's share (when the bar shows something else), elapsed time and ETA: the run's own,
/// or before its progress says anything, what the history expected.
fn times(app: &App, run_share: Option<f64>) -> Vec<String> {
    let st = &app.run;
    let trial_bar = st.progress.as_ref().and_then(|p| p.fraction).is_some();
    let mut items = Vec::new();
    if let Some(fr) = run_share.filter(|_| trial_bar || st.cancelling()) {
        items.push(format!("run {:.0}%", fr * 100.0));
    }
    let elapsed = st
        .started_at
        .map(|t| app.now.saturating_duration_since(t).as_secs_f64());
    if let Some(e) = elapsed {
        items.push(format!("elapsed {}", format_seconds(e)));
    }
    match (st.eta(app.now), &st.expected) {
        (Some(eta), _) => items.push(format!("run eta {}", format_seconds(eta))),
        // Before the run's own progress says anything: what the history expected.
        (None, Some(x)) => {
            if let Some(left) = x.remaining(elapsed.unwrap_or(0.0)) {
                items.push(format!("run eta {} (history)", left.range_text()));
            }
        }
        (None, None) => {}
    }
    items
}

/// The times line, with the live rate and its sparkline after it when there is room.
fn times_and_rate<'a>(app: &App, items: &[String], cols: usize) -> Row<'a> {
    let st = &app.run;
    let theme = app.theme;
    let mut line = pack(items, cols, " · ", 1).concat();
    let Some(r) = st.rates.last() else {
        return Row::Text(plain_line(line, theme.plain()));
    };
    let readout = format!(" · {} {}", format_rate(r), st.rate_unit);
    let room = cols.saturating_sub(width(&line) + width(&readout) + 1);
    if room >= 4 {
        line.push_str(&readout);
        line.push(' ');
        let mut spans = vec![Span::styled(line, theme.plain())];
        spans.extend(stall_spans(&st.rates, &st.stalls, room.min(24), theme));
        Row::Text(Line::from(spans))
    } else {
        Row::Text(plain_line(fit(&(line + &readout), cols), theme.plain()))
    }
}

/// While the preflight check runs.
fn preparing<'a>(app: &App, cols: usize) -> Row<'a> {
    Row::Text(plain_line(
        fit(
            &format!(
                "{} checking free space and connection slots…",
                spinner(app.tick())
            ),
            cols,
        ),
        app.theme.accent(),
    ))
}

/// After a run: how it ended, what was cleaned up (after a cancel or a failure), the
/// recommendation, and the last notes.
fn ended<'a>(app: &App, e: &Ended, cols: usize, rows: usize, head: &mut Vec<Row<'a>>) {
    let st = &app.run;
    let theme = app.theme;
    let (text, style) = how_it_ended(app, e);
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
        for l in wrap(&cleaned_up(&cleanup), cols, 3) {
            head.push(Row::Text(plain_line(l, theme.plain())));
        }
    }
    let decided = e.outcome == Outcome::Finished && !st.decision.is_empty();
    // A note that repeats the recommendation's own finding (past its series label) is not
    // shown twice.
    let said = st.decision.join(" ");
    let repeats = |n: &str| decided && said.contains(n.split_once(": ").map_or(n, |(_, t)| t));
    let rest: Vec<&String> = st
        .notes
        .iter()
        .filter(|n| e.outcome == Outcome::Finished || !cleanup.contains(n))
        .filter(|n| !repeats(n))
        .collect();
    if decided && st.view != RunView::Findings {
        recommendation(app, cols, rows, head);
    }
    last_notes(app, &rest, decided, cols, rows, head);
}

/// The sentence of how the run ended, in the style of its outcome.
fn how_it_ended(app: &App, e: &Ended) -> (String, Style) {
    let st = &app.run;
    let theme = app.theme;
    match e.outcome {
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
    }
}

/// The cleanup notes in one line, or that there was nothing to clean up.
fn cleaned_up(cleanup: &[&String]) -> String {
    if cleanup.is_empty() {
        "nothing was left to clean up".to_string()
    } else {
        cleanup
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// The recommendation, kept in sight outside the findings view (which shows it in full); a
/// small chart keeps it to one line.
fn recommendation<'a>(app: &App, cols: usize, rows: usize, head: &mut Vec<Row<'a>>) {
    let st = &app.run;
    let text = format!("recommendation: {}", st.decision.join(" "));
    let lines = match (st.view, rows) {
        (RunView::Chart, 0..16) => 1,
        (_, 0..16) => 3,
        _ => 5,
    };
    for l in wrap(&text, cols, lines) {
        head.push(Row::Text(plain_line(l, app.theme.accent())));
    }
}

/// The last notes: the findings view shows every note and the recommendation; elsewhere the
/// recommendation stays in sight when there is one, else the last notes.
fn last_notes<'a>(
    app: &App,
    rest: &[&String],
    decided: bool,
    cols: usize,
    rows: usize,
    head: &mut Vec<Row<'a>>,
) {
    // (notes, rows each): a small chart keeps one line of the last note.
    let (shown, each) = match (app.run.view, rows) {
        (RunView::Findings, _) => (0, 0),
        (_, 0..16) if decided => (0, 0),
        (RunView::Chart, 0..16) => (1, 1),
        (_, 0..16) => (1, 2),
        _ if decided => (1, 2),
        _ => (2, 2),
    };
    for n in &rest[rest.len().saturating_sub(shown)..] {
        for l in wrap(&format!("note: {n}"), cols, each) {
            head.push(Row::Text(plain_line(l, app.theme.dim())));
        }
    }
}

/// Before any run: how to start one, or why this session only looks.
fn idle<'a>(app: &App, cols: usize, head: &mut Vec<Row<'a>>) {
    let keys = &app.keys;
    let text = if app.observe {
        app.look_only_why().to_string()
    } else {
        format!(
            "No run yet. {} runs one trial (the first value of every list, set included), {} runs the full sweep; {} cancels a run.",
            keys.label(Action::Run),
            keys.label(Action::Sweep),
            keys.label(Action::Cancel)
        )
    };
    for l in wrap(&text, cols, 3) {
        head.push(Row::Text(plain_line(l, app.theme.dim())));
    }
}
