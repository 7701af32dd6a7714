//! The help overlay: every key, and where to change them.

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::app::App;
use crate::tui::keys::Action;
use crate::tui::text::{fit, pad, width, wrap};

/// (keys, what they do), in the order shown.
pub(crate) fn entries(app: &App) -> Vec<(String, String)> {
    let k = |a: Action| app.keys.label(a);
    vec![
        (
            k(Action::Run),
            "one trial: the first value of every list (and of set), once".into(),
        ),
        (k(Action::Sweep), Action::Sweep.describe().to_string()),
        (k(Action::Cancel), Action::Cancel.describe().to_string()),
        (
            k(Action::Edit),
            "edit the parameter; Enter accepts, Esc aborts; in every text field C-u clears, C-w drops a word".into(),
        ),
        (
            format!(
                "{} {} {} {} {}",
                k(Action::NextExperiment),
                k(Action::Experiment1),
                k(Action::Experiment2),
                k(Action::Experiment3),
                k(Action::Experiment4)
            ),
            "next experiment; index-build, ingest, growth, query".into(),
        ),
        (
            k(Action::Plans),
            "query: plan of each statement per combination, * changed".into(),
        ),
        (
            k(Action::Probe),
            "disk probes: 256 MB sequential write, then 5 s of fsyncs".into(),
        ),
        (
            k(Action::Presets),
            "presets: Enter loads, S saves current, R renames, D deletes".into(),
        ),
        (
            k(Action::History),
            "past runs (a tune's folded: Enter opens): Enter report, / filter by text, f by experiment, b baseline, c compare".into(),
        ),
        (
            format!("{} {}", k(Action::Import), k(Action::Tune)),
            "import tables into the sandbox; tune settings within a budget".into(),
        ),
        (
            k(Action::Capture),
            "capture the target's top statements (only read) as the query experiment's file"
                .into(),
        ),
        (
            format!("{} {}", k(Action::Window), k(Action::Verify)),
            "Target pane: record a window of pg_stat_statements (only read; up to 60 s, the key again or Esc ends it); compare the last two windows as pglab verify does".into(),
        ),
        (
            format!("{} {}", k(Action::NextPane), k(Action::PrevPane)),
            "next / previous pane".into(),
        ),
        (
            format!(
                "{} {} {} {}",
                k(Action::Left),
                k(Action::Down),
                k(Action::Up),
                k(Action::Right)
            ),
            "move focus; ↑↓ field (Parameters) or scroll; ←→ columns (Run)".into(),
        ),
        (
            k(Action::View),
            "Run pane: summary/trials/chart/findings; PgUp PgDn Home End".into(),
        ),
        (
            k(Action::Axis),
            "Run pane x axis: own setting or swept server settings (set)".into(),
        ),
        (
            k(Action::Zoom),
            "Run pane (and trials) on the whole screen, and back".into(),
        ),
        (
            k(Action::Report),
            "write the report of the run on screen (history: the selected one): .md + .svg"
                .into(),
        ),
        (
            "y n".into(),
            "answer a question (a big run, quitting during a run)".into(),
        ),
        (k(Action::Observe), Action::Observe.describe().to_string()),
        (k(Action::Help), Action::Help.describe().to_string()),
        (
            format!("{} C-c", k(Action::Quit)),
            Action::Quit.describe().to_string(),
        ),
    ]
}

/// The help's scroll after `key` (↑↓ j k PgUp PgDn Home End); `render` keeps it within the
/// text.
pub(crate) fn scroll(at: usize, key: KeyCode) -> usize {
    match key {
        KeyCode::Down | KeyCode::Char('j') => at.saturating_add(1),
        KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => at.saturating_add(10),
        KeyCode::PageUp => at.saturating_sub(10),
        KeyCode::Home => 0,
        KeyCode::End => usize::MAX / 2,
        _ => at,
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme;
    let w = area.width.saturating_sub(4).min(78);
    let inner_w = w.saturating_sub(4) as usize;
    let entries = entries(app);
    let key_w = entries
        .iter()
        .map(|(k, _)| width(k))
        .max()
        .unwrap_or(0)
        .min(inner_w / 3);
    let desc_w = inner_w.saturating_sub(key_w + 2);
    let mut lines: Vec<Line> = Vec::new();
    for (k, d) in &entries {
        for (i, l) in wrap(d, desc_w, 4).into_iter().enumerate() {
            let key = if i == 0 {
                pad(k, key_w)
            } else {
                " ".repeat(key_w)
            };
            lines.push(Line::from(vec![
                Span::styled(key, theme.key()),
                Span::raw("  "),
                Span::styled(l, theme.plain()),
            ]));
        }
    }
    // A blank line before the footer, when the screen has one to spare.
    let room = area.height.saturating_sub(4) as usize;
    // Every action's name, however many lines that takes: the last ones are the ones looked for.
    let footer = wrap(&config_hint(app), inner_w, usize::MAX);
    if lines.len() + footer.len() + usize::from(app.observe) < room {
        lines.push(Line::default());
    }
    if app.observe {
        lines.push(Line::styled(app.look_only_why(), theme.warn()));
    }
    for l in footer {
        lines.push(Line::styled(l, theme.dim()));
    }
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height.saturating_sub(h)) / 2,
        w,
        h,
    );
    let inner = crate::tui::render::framed(f, rect, " Help · keys ", theme.focused_border(), theme);
    // Taller than the screen: a window of it, and where it is (the last keys are reached).
    let rows = inner.height as usize;
    if lines.len() > rows {
        let room = rows.saturating_sub(1);
        let top = app.help_scroll.min(lines.len() - room);
        let pos = format!(
            "lines {}–{} of {} · ↑↓ PgUp PgDn Home End scroll · Esc close",
            top + 1,
            top + room,
            lines.len()
        );
        lines = lines.into_iter().skip(top).take(room).collect();
        lines.push(Line::styled(fit(&pos, inner_w), theme.dim()));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// Where the keys are changed, and the actions' names.
fn config_hint(app: &App) -> String {
    format!(
        "Change keys in {} under [keys], e.g. run = \"R\"; actions: {}",
        app.config_file.display(),
        Action::ALL
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(" ")
    )
}
