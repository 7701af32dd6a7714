//! The tune view (`t`): the budget and the settings to search, then the search live — the
//! budget bar, the candidates of the setting being raced with their medians and intervals
//! (dropped values greyed), the settings decided so far, the confirmation — and at the end
//! where the script was written. The workload is the experiment and parameters on screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::measure::interval::estimate;
use crate::tui::app::App;
use crate::tui::render::overlay_box;
use crate::tui::text::{fit, pad, spinner, wrap};
use crate::tune::confirm::Confirm;
use crate::tune::decide::Decision;
use crate::tune::objective::Objective;
use crate::tune::race::Race;
use crate::tune::screen::Screen;
use crate::tune::screen_report;

/// Where the view is.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneStage {
    /// Typing the budget and the settings.
    Form,
    Running,
    /// Finished: what was written; or why not.
    Done(Result<String, String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct TuneView {
    pub stage: TuneStage,
    pub budget: String,
    pub settings: String,
    /// 0: budget, 1: settings.
    pub field: usize,
    /// Why the form or the start was refused.
    pub error: Option<String>,
    pub workload: String,
    pub objective: Option<Objective>,
    pub race: Option<Race>,
    /// The screening before the races, as far as it went.
    pub screen: Option<Screen>,
    pub decided: Vec<Decision>,
    pub confirm: Option<Confirm>,
    pub spent_s: f64,
    pub total_s: f64,
    pub progress: String,
    pub notes: Vec<String>,
    pub cancelling: bool,
}

impl Default for TuneView {
    fn default() -> Self {
        TuneView {
            stage: TuneStage::Form,
            budget: "15min".into(),
            settings: "auto".into(),
            field: 0,
            error: None,
            workload: String::new(),
            objective: None,
            race: None,
            screen: None,
            decided: Vec::new(),
            confirm: None,
            spent_s: 0.0,
            total_s: 0.0,
            progress: String::new(),
            notes: Vec::new(),
            cancelling: false,
        }
    }
}

impl TuneView {
    pub(crate) fn running(&self) -> bool {
        self.stage == TuneStage::Running
    }
}

/// The key bar while the view is open.
pub(crate) fn keys(v: &TuneView) -> Vec<(String, String, u8)> {
    let k = |a: &str, b: &str, p: u8| (a.to_string(), b.to_string(), p);
    match &v.stage {
        TuneStage::Form => vec![
            k("Tab", "field", 1),
            k("Enter", "start", 0),
            k("Esc", "close", 0),
        ],
        TuneStage::Running => vec![k("Esc", "stop (resume: pglab tune --resume)", 0)],
        TuneStage::Done(_) => vec![k("Enter", "close", 0)],
    }
}

/// `██████░░░░ 2m 10s of 15m 00s`.
fn bar(spent: f64, total: f64, cols: usize) -> String {
    let text = format!(
        " {} of {}",
        crate::measure::units::format_seconds(spent),
        crate::measure::units::format_seconds(total)
    );
    let w = cols.saturating_sub(text.chars().count() + 8).clamp(4, 30);
    let full = if total > 0.0 {
        ((spent / total).clamp(0.0, 1.0) * w as f64).round() as usize
    } else {
        0
    };
    format!("budget {}{}{text}", "█".repeat(full), "░".repeat(w - full))
}

fn race_lines(app: &App, v: &TuneView, cols: usize, lines: &mut Vec<Line<'static>>) {
    let theme = app.theme;
    let Some(r) = &v.race else { return };
    let obj = v.objective;
    lines.push(Line::styled(
        fit(
            &format!("{}: round {} (looks {})", r.setting, r.rounds, r.looks),
            cols,
        ),
        theme.label(),
    ));
    let vw = r
        .candidates
        .iter()
        .map(|c| c.value.len())
        .max()
        .unwrap_or(4)
        .min(cols / 3);
    for c in &r.candidates {
        let est = estimate(&c.trials, 0.95);
        let text = match (est, obj) {
            (Some(e), Some(o)) => format!(
                "{} {} [{} … {}] {:.0}% n={}",
                pad(&c.value, vw),
                o.format(e.median),
                o.format(e.ci_low),
                o.format(e.ci_high),
                e.level * 100.0,
                e.n
            ),
            _ => format!("{} no trial yet", pad(&c.value, vw)),
        };
        let (text, style) = if c.dropped.is_some() {
            (format!("{text} dropped"), theme.dim())
        } else {
            (text, theme.value())
        };
        lines.push(Line::styled(fit(&format!("  {text}"), cols), style));
    }
}

/// The screening: its progress while it runs, then the settings ranked by effect (the
/// first few, the rest counted).
fn screen_lines(app: &App, v: &TuneView, cols: usize, lines: &mut Vec<Line<'static>>) {
    const SHOWN: usize = 4;
    let theme = app.theme;
    let Some(s) = &v.screen else { return };
    if !s.done {
        let rounds: usize = s.groups.iter().map(|g| g.rounds.len()).sum();
        let all = s.groups.len() * crate::tune::screen::SCREEN_ROUNDS;
        lines.push(Line::styled(
            fit(
                &format!(
                    "screening: {rounds} of {all} rounds ({} passes)",
                    s.passes()
                ),
                cols,
            ),
            theme.label(),
        ));
        return;
    }
    lines.push(Line::styled(
        fit(
            &format!(
                "screening (high end over low end, {:.0}%):",
                crate::tune::screen::SCREEN_LEVEL * 100.0
            ),
            cols,
        ),
        theme.label(),
    ));
    for e in s.effects.iter().take(SHOWN) {
        let style = if e.moved { theme.value() } else { theme.dim() };
        lines.push(Line::styled(
            fit(&format!("  {}", screen_report::effect_line(e)), cols),
            style,
        ));
    }
    if s.effects.len() > SHOWN {
        lines.push(Line::styled(
            fit(&format!("  … and {} more", s.effects.len() - SHOWN), cols),
            theme.dim(),
        ));
    }
}

fn decided_lines(app: &App, v: &TuneView, cols: usize, lines: &mut Vec<Line<'static>>) {
    let theme = app.theme;
    if v.decided.is_empty() {
        return;
    }
    let items: Vec<String> = v
        .decided
        .iter()
        .map(|d| {
            let screened = v.screen.as_ref().and_then(|s| s.effect(&d.setting));
            if d.rounds == 0 && screened.is_some_and(|e| !e.moved) {
                format!("{} screened out", d.setting)
            } else if d.rounds == 0 {
                format!("{} not searched", d.setting)
            } else if d.value == d.start {
                format!("{} stays {}", d.setting, d.start)
            } else {
                format!("{} {} → {}", d.setting, d.start, d.value)
            }
        })
        .collect();
    for l in wrap(&format!("decided: {}", items.join("; ")), cols, 3) {
        lines.push(Line::styled(l, theme.plain()));
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let v = &app.tune;
    let inner = overlay_box(app, f, area, " Tune ", 110);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    let theme = app.theme;
    let mut lines: Vec<Line> = Vec::new();
    lines.push(Line::from(vec![
        Span::styled("workload  ", theme.label()),
        Span::styled(fit(&v.workload, cols.saturating_sub(10)), theme.value()),
    ]));
    match &v.stage {
        TuneStage::Form => form_lines(app, v, cols, &mut lines),
        TuneStage::Running | TuneStage::Done(_) => search_lines(app, v, cols, &mut lines),
    }
    if let Some(e) = &v.error {
        for l in wrap(e, cols, 3) {
            lines.push(Line::styled(l, theme.error()));
        }
    }
    let room = rows.saturating_sub(lines.len()).saturating_sub(1);
    let shown = notes(v, cols, room);
    if !shown.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(shown.into_iter().map(|n| Line::styled(n, theme.dim())));
    }
    lines.truncate(rows);
    f.render_widget(Paragraph::new(lines), inner);
}

/// The form: the budget and the settings (the one being typed in marked), then what a tune does.
fn form_lines(app: &App, v: &TuneView, cols: usize, lines: &mut Vec<Line<'static>>) {
    let theme = app.theme;
    for (i, (name, value)) in [("budget", &v.budget), ("settings", &v.settings)]
        .into_iter()
        .enumerate()
    {
        let cursor = if v.field == i { "▏" } else { "" };
        let style = if v.field == i {
            theme.selected()
        } else {
            theme.value()
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{name:<10}"), theme.label()),
            Span::styled(format!("{value}{cursor}"), style),
        ]));
    }
    for l in wrap(
        "The parameters on screen are the workload. The budget counts everything; settings: auto, or names separated by commas. Restart and reload settings are searched on the sandbox only; every setting is put back when the tune ends. The script goes to tune.sql in the current directory (pglab asks before replacing one).",
        cols,
        5,
    ) {
        lines.push(Line::styled(l, theme.dim()));
    }
}

/// The search: the budget bar, the race, the settings decided, the confirmation, then what
/// is going on or how it ended.
fn search_lines(app: &App, v: &TuneView, cols: usize, lines: &mut Vec<Line<'static>>) {
    let theme = app.theme;
    lines.push(Line::styled(
        bar(v.spent_s, v.total_s, cols),
        theme.accent(),
    ));
    screen_lines(app, v, cols, lines);
    race_lines(app, v, cols, lines);
    decided_lines(app, v, cols, lines);
    if let Some(c) = &v.confirm {
        let verdict = c
            .comparison
            .as_ref()
            .map(|cmp| format!(": tuned set {}", crate::tune::output::comparison_text(cmp)))
            .unwrap_or_default();
        lines.push(Line::styled(
            fit(&format!("confirmation: {} rounds{verdict}", c.rounds), cols),
            theme.plain(),
        ));
    }
    match &v.stage {
        TuneStage::Running => lines.push(Line::styled(
            fit(
                &format!(
                    "{} {}{}",
                    spinner(app.tick()),
                    if v.cancelling { "stopping… " } else { "" },
                    v.progress
                ),
                cols,
            ),
            theme.dim(),
        )),
        TuneStage::Done(Ok(s)) => {
            for l in wrap(s, cols, 3) {
                lines.push(Line::styled(l, theme.good()));
            }
        }
        TuneStage::Done(Err(e)) => {
            for l in wrap(e, cols, 3) {
                lines.push(Line::styled(l, theme.error()));
            }
        }
        TuneStage::Form => {}
    }
}

/// The notes, newest last, each wrapped over up to 3 lines, as many as fit in `room` lines.
fn notes(v: &TuneView, cols: usize, room: usize) -> Vec<String> {
    let mut shown: Vec<String> = Vec::new();
    for n in v.notes.iter().rev() {
        let wrapped = wrap(&format!("note: {n}"), cols, 3);
        if shown.len() + wrapped.len() > room {
            break;
        }
        shown.splice(0..0, wrapped);
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn the_budget_bar_fills_with_the_time_spent() {
        let b = bar(30.0, 60.0, 60);
        assert!(b.starts_with("budget █"), "{b}");
        assert_eq!(b.matches('█').count(), b.matches('░').count());
        assert!(b.ends_with(" 30.0 s of 60.0 s"), "{b}");
        assert!(bar(90.0, 60.0, 60).matches('░').count() == 0);
    }
}
