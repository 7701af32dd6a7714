//! The history overlay (`h`): past runs newest first, filtered by experiment; open a run's
//! report, mark a baseline and compare a run with it, in a scrollable text view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::experiment::{ExperimentKind, RunReport};
use crate::report::history_table::list_table;
use crate::tui::app::{App, Level, Notice};
use crate::tui::render::overlay_box;
use crate::tui::text::{fit, wrap};

/// A report or a comparison as text, scrolled.
#[derive(Debug, Clone, PartialEq)]
pub struct TextView {
    pub title: String,
    pub lines: Vec<String>,
    pub scroll: usize,
    /// Columns scrolled off to the left (←/→), for tables wider than the screen.
    pub hscroll: usize,
}

impl TextView {
    pub fn new(title: String, text: &str) -> TextView {
        TextView {
            title,
            lines: text.lines().map(str::to_string).collect(),
            scroll: 0,
            hscroll: 0,
        }
    }

    /// The widest line, in characters.
    pub fn width(&self) -> usize {
        self.lines
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// Move by `by` columns (negative: left), never past the widest line's end.
    pub fn hscroll_by(&mut self, by: isize, view_cols: usize) {
        let max = self.width().saturating_sub(view_cols);
        self.hscroll = self.hscroll.saturating_add_signed(by).min(max);
    }

    /// Move by `by` lines (negative: up), staying within the text.
    pub fn scroll_by(&mut self, by: isize) {
        let max = self.lines.len().saturating_sub(1);
        self.scroll = self.scroll.saturating_add_signed(by).min(max);
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunsState {
    /// Every run, newest first.
    pub runs: Vec<RunReport>,
    /// Lines of the history file that were skipped.
    pub warnings: Vec<String>,
    pub filter: Option<ExperimentKind>,
    /// Index into the shown runs.
    pub selected: usize,
    /// The run id marked with `b`.
    pub baseline: Option<String>,
    pub loading: bool,
    /// A report or comparison open over the list.
    pub view: Option<TextView>,
    pub message: Option<Notice>,
    /// Columns of the table scrolled off to the left (←/→).
    pub hscroll: usize,
}

impl RunsState {
    /// The runs the filter keeps, newest first.
    pub fn shown(&self) -> Vec<&RunReport> {
        self.runs
            .iter()
            .filter(|r| self.filter.is_none_or(|k| r.kind() == k))
            .collect()
    }

    pub fn selected_run(&self) -> Option<&RunReport> {
        self.shown().get(self.selected).copied()
    }

    pub fn baseline_run(&self) -> Option<&RunReport> {
        let id = self.baseline.as_deref()?;
        self.runs.iter().find(|r| r.run_id == id)
    }

    pub fn step(&mut self, down: bool) {
        let n = self.shown().len();
        if n == 0 {
            return;
        }
        self.selected = if down {
            (self.selected + 1).min(n - 1)
        } else {
            self.selected.saturating_sub(1)
        };
    }

    /// The history arrived, oldest first.
    pub fn apply(&mut self, mut runs: Vec<RunReport>, warnings: Vec<String>) {
        runs.reverse();
        self.runs = runs;
        self.warnings = warnings;
        self.loading = false;
        self.selected = self.selected.min(self.shown().len().saturating_sub(1));
    }

    /// All experiments, then each in turn.
    pub fn cycle_filter(&mut self) {
        let all = ExperimentKind::ALL;
        self.filter = match self.filter {
            None => all.first().copied(),
            Some(k) => all
                .iter()
                .position(|x| *x == k)
                .and_then(|i| all.get(i + 1).copied()),
        };
        self.selected = 0;
    }

    pub fn say(&mut self, level: Level, text: impl Into<String>) {
        self.message = Some(Notice {
            text: text.into(),
            level,
        });
    }
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.runs;
    match &st.view {
        Some(v) => render_view(app, f, area, v),
        None => render_list(app, f, area),
    }
}

fn render_list(app: &App, f: &mut Frame, area: Rect) {
    let theme = app.theme;
    let st = &app.runs;
    let filter = st.filter.map(|k| k.as_str()).unwrap_or("all experiments");
    let inner = overlay_box(app, f, area, &format!(" History · {filter} "), 200);
    let cols = inner.width as usize;
    let rows = inner.height as usize;

    let mut foot: Vec<Line> = Vec::new();
    if !st.warnings.is_empty() {
        let t = format!(
            "{} line(s) of the history skipped: {}",
            st.warnings.len(),
            st.warnings[0]
        );
        foot.push(Line::styled(fit(&t, cols), theme.warn()));
    }
    if let Some(b) = st.baseline.as_deref() {
        foot.push(Line::styled(
            fit(&format!("baseline: {b}"), cols),
            theme.label(),
        ));
    }
    if let Some(m) = &st.message {
        let style = theme.level(m.level);
        for l in wrap(&m.text, cols, 2) {
            foot.push(Line::styled(l, style));
        }
    }
    let shown = st.shown();
    let table = if shown.is_empty() {
        String::new()
    } else {
        list_table(&shown)
    };
    let wide = table.lines().any(|l| l.chars().count() + 2 > cols);
    let hint = if wide {
        "↑↓ select · ←→ scroll · Enter report · f filter · b baseline · c compare · Esc close"
    } else {
        "↑↓ select · Enter report · f filter · b baseline · c compare with baseline · Esc close"
    };
    foot.push(Line::styled(fit(hint, cols), theme.dim()));

    let room = rows.saturating_sub(foot.len() + 1);
    // Table lines are cut at the edge, not at a word, so the columns stay aligned.
    let skip = |l: &str, w: usize| -> String {
        let t: Vec<char> = l.chars().skip(st.hscroll).collect();
        if t.len() > w {
            t[..w.saturating_sub(1)].iter().collect::<String>() + "…"
        } else {
            t.into_iter().collect()
        }
    };
    let mut lines: Vec<Line> = Vec::new();
    if shown.is_empty() {
        let t = if st.loading {
            "reading the history…"
        } else if st.runs.is_empty() {
            "no runs yet: r or s starts one"
        } else {
            "no run of this experiment: f changes the filter"
        };
        lines.push(Line::styled(t, theme.dim()));
    } else {
        let all: Vec<&str> = table.lines().collect();
        let head = all.len().saturating_sub(shown.len());
        for l in &all[..head] {
            lines.push(Line::styled(
                format!("  {}", skip(l, cols.saturating_sub(2))),
                theme.label(),
            ));
        }
        let visible = room.saturating_sub(head).max(1);
        let first = st.selected.saturating_sub(visible - 1);
        for (i, l) in all[head..].iter().enumerate().skip(first).take(visible) {
            let sel = i == st.selected;
            let is_base = st.baseline.as_deref() == Some(shown[i].run_id.as_str());
            let marker = match (sel, is_base) {
                (true, _) => "▶",
                (false, true) => "B",
                _ => " ",
            };
            let style = if sel { theme.title() } else { theme.plain() };
            lines.push(Line::from(vec![
                Span::styled(format!("{marker} "), theme.key()),
                Span::styled(skip(l, cols.saturating_sub(2)), style),
            ]));
        }
    }
    while lines.len() < room {
        lines.push(Line::default());
    }
    lines.truncate(room);
    lines.push(Line::default());
    lines.extend(foot);
    f.render_widget(Paragraph::new(lines), inner);
}

fn render_view(app: &App, f: &mut Frame, area: Rect, v: &TextView) {
    let theme = app.theme;
    let inner = overlay_box(app, f, area, &format!(" {} ", v.title), 200);
    let cols = inner.width as usize;
    let room = (inner.height as usize).saturating_sub(1);
    let mut lines: Vec<Line> = v
        .lines
        .iter()
        .skip(v.scroll)
        .take(room)
        .map(|l| {
            let shifted: String = l.chars().skip(v.hscroll).collect();
            Line::styled(fit(&shifted, cols), theme.plain())
        })
        .collect();
    while lines.len() < room {
        lines.push(Line::default());
    }
    let sideways = if v.width() > cols { " ←→" } else { "" };
    let pos = format!(
        "lines {}–{} of {} · ↑↓ PgUp PgDn{sideways} scroll · Esc back",
        (v.scroll + 1).min(v.lines.len()),
        (v.scroll + room).min(v.lines.len()),
        v.lines.len()
    );
    lines.push(Line::styled(fit(&pos, cols), theme.dim()));
    f.render_widget(Paragraph::new(lines), inner);
}
