//! The status lines at the top of the run pane: what runs now (the current trial, or the
//! phase between trials), its progress bar, elapsed time and ETA, the live rate; after a
//! run, how it ended and its last notes.

use ratatui::text::{Line, Span};

use super::plain_line;
use super::run_view::RunView;
use crate::experiment::Outcome;
use crate::measure::units::{format_rate, format_seconds};
use crate::tui::app::App;
use crate::tui::keys::Action;
use crate::tui::text::{fit, pack, spark, spinner, width, wrap};

/// A status line: text, or a progress bar.
pub enum Row<'a> {
    Text(Line<'a>),
    Gauge { ratio: f64, label: String },
}

/// The lines above the results and the line below them, for a pane `cols` wide and `rows`
/// high.
pub fn lines<'a>(app: &App, cols: usize, rows: usize) -> (Vec<Row<'a>>, Vec<Line<'a>>) {
    let st = &app.run;
    let theme = app.theme;
    let keys = &app.keys;
    let mut head: Vec<Row> = Vec::new();
    let mut foot: Vec<Line> = Vec::new();

    if st.running {
        // Between trials (a dataset being prepared) the finished trial is not named.
        let what = match &st.trial {
            Some(t) => format!("trial {}/{} · {} · {}", t.index, t.total, t.label, st.phase),
            None if st.done > 0 => format!("{}/{} trials done · {}", st.done, st.trials, st.phase),
            None => format!("{} · {}", st.description, st.phase),
        };
        head.push(Row::Text(plain_line(fit(&what, cols), theme.plain())));
        // One convention, labelled: the bar is the current trial's progress when it can be
        // measured ("trial 37%"), else the whole run's ("run 71%"); the line under it
        // always gives the whole run's share, elapsed time and ETA.
        let run_share = st.run_fraction().filter(|_| st.trials > 1);
        let trial_bar = st.progress.as_ref().and_then(|p| p.fraction).is_some();
        match st.progress.as_ref().and_then(|p| p.fraction) {
            Some(fr) if !st.cancelling => head.push(Row::Gauge {
                ratio: fr.clamp(0.0, 1.0),
                label: format!(
                    "{} {:>3.0}%",
                    if st.trial.is_some() { "trial" } else { "step" },
                    fr * 100.0
                ),
            }),
            // A step without a measurable extent: how far the whole run is.
            None if !st.cancelling && run_share.is_some() => {
                let fr = run_share.unwrap_or(0.0);
                head.push(Row::Gauge {
                    ratio: fr,
                    label: format!("run {:>3.0}%", fr * 100.0),
                })
            }
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
        if let Some(fr) = run_share.filter(|_| trial_bar || st.cancelling) {
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
        let mut line = pack(&items, cols, " · ", 1).concat();
        if let Some(r) = st.rates.last() {
            let readout = format!(" · {} {}", format_rate(r), st.rate_unit);
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
        // The findings view shows every note and the recommendation; elsewhere the
        // recommendation stays in sight when there is one, else the last notes.
        // (notes, rows each): a small chart keeps one line of the last note.
        let decided = e.outcome == Outcome::Finished && !st.decision.is_empty();
        if decided && st.view != RunView::Findings {
            let text = format!("recommendation: {}", st.decision.join(" "));
            let lines = match (st.view, rows) {
                (RunView::Chart, 0..16) => 1,
                (_, 0..16) => 3,
                _ => 5,
            };
            for l in wrap(&text, cols, lines) {
                head.push(Row::Text(plain_line(l, theme.accent())));
            }
        }
        let (shown, each) = match (st.view, rows) {
            (RunView::Findings, _) => (0, 0),
            (_, 0..16) if decided => (0, 0),
            (RunView::Chart, 0..16) => (1, 1),
            (_, 0..16) => (1, 2),
            _ if decided => (1, 2),
            _ => (2, 2),
        };
        for n in &rest[rest.len().saturating_sub(shown)..] {
            for l in wrap(&format!("note: {n}"), cols, each) {
                head.push(Row::Text(plain_line(l, theme.dim())));
            }
        }
    } else {
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
            head.push(Row::Text(plain_line(l, theme.dim())));
        }
    }

    (head, foot)
}
