//! The history overlay (`h`): past runs newest first, a tune's rounds folded under one line,
//! filtered by experiment (`f`) and by text (`/`); open a run's report, mark a baseline and
//! compare a run with it, in a scrollable text view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::experiment::{ExperimentKind, RunReport};
use crate::report::history_table::list_table;
use crate::tui::app::{App, Level, Notice};
use crate::tui::render::overlay_box;
use crate::tui::text::{fit, wrap};

use super::fixed_cols::scrolled;
use super::history_rows::{self, Row};

/// A report or a comparison as text, scrolled.
#[derive(Debug, Clone, PartialEq)]
pub struct TextView {
    pub title: String,
    pub lines: Vec<String>,
    pub scroll: usize,
    /// Columns scrolled off to the left (←/→), for tables wider than the screen.
    pub hscroll: usize,
    /// Per line, the width of its table's first column, which stays when scrolling sideways.
    pub fixed: Vec<usize>,
}

impl TextView {
    pub(crate) fn new(title: String, text: &str) -> TextView {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        TextView {
            title,
            fixed: super::fixed_cols::first_columns(&lines),
            lines,
            scroll: 0,
            hscroll: 0,
        }
    }

    /// The widest line, in characters.
    pub(crate) fn width(&self) -> usize {
        self.lines
            .iter()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// Move by `by` columns (negative: left), never past the widest line's end.
    pub(crate) fn hscroll_by(&mut self, by: isize, view_cols: usize) {
        let max = self.width().saturating_sub(view_cols);
        self.hscroll = self.hscroll.saturating_add_signed(by).min(max);
    }

    /// Move by `by` lines (negative: up), staying within the text.
    pub(crate) fn scroll_by(&mut self, by: isize) {
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
    /// The text filter (`/`); empty: none.
    pub query: String,
    /// The text filter is being typed.
    pub typing: bool,
    /// The tunes opened (their ids): their rounds are listed under them.
    pub open: Vec<String>,
    /// Index into the shown rows.
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
    /// The rows the filters keep, newest first (see `history_rows`).
    pub(crate) fn rows(&self) -> Vec<Row<'_>> {
        history_rows::rows(&self.runs, self.filter, &self.query, &self.open)
    }

    /// The runs drawn as table rows (not the tunes' own lines).
    pub(crate) fn shown(&self) -> Vec<&RunReport> {
        self.rows().iter().filter_map(Row::run).collect()
    }

    pub(crate) fn selected_row(&self) -> Option<Row<'_>> {
        self.rows().into_iter().nth(self.selected)
    }

    pub(crate) fn selected_run(&self) -> Option<&RunReport> {
        self.selected_row().and_then(|r| r.run())
    }

    /// Enter on a tune's line: open it (its rounds under it) or fold it.
    pub(crate) fn toggle_tune(&mut self, id: &str) {
        match self.open.iter().position(|o| o == id) {
            Some(i) => {
                self.open.remove(i);
            }
            None => self.open.push(id.to_string()),
        }
    }

    /// The text filter changed: back to the first row.
    pub(crate) fn refiltered(&mut self) {
        self.selected = 0;
        self.hscroll = 0;
    }

    pub(crate) fn baseline_run(&self) -> Option<&RunReport> {
        let id = self.baseline.as_deref()?;
        self.runs.iter().find(|r| r.run_id == id)
    }

    pub(crate) fn step(&mut self, down: bool) {
        let n = self.rows().len();
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
    pub(crate) fn apply(&mut self, mut runs: Vec<RunReport>, warnings: Vec<String>) {
        runs.reverse();
        self.runs = runs;
        self.warnings = warnings;
        self.loading = false;
        self.selected = self.selected.min(self.rows().len().saturating_sub(1));
    }

    /// All experiments, then each in turn.
    pub(crate) fn cycle_filter(&mut self) {
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

    pub(crate) fn say(&mut self, level: Level, text: impl Into<String>) {
        self.message = Some(Notice {
            text: text.into(),
            level,
        });
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.runs;
    match &st.view {
        Some(v) => render_view(app, f, area, v),
        None => render_list(app, f, area),
    }
}

fn render_list(app: &App, f: &mut Frame, area: Rect) {
    let st = &app.runs;
    let kind = st.filter.map(|k| k.as_str()).unwrap_or("all experiments");
    let title = if st.query.trim().is_empty() {
        format!(" History · {kind} ")
    } else {
        format!(" History · {kind} · “{}” ", st.query.trim())
    };
    let inner = overlay_box(app, f, area, &title, 200);
    let cols = inner.width as usize;
    let foot = list_foot(app, cols);
    let room = (inner.height as usize).saturating_sub(foot.len() + 1);
    let mut lines = list_lines(app, cols, room);
    while lines.len() < room {
        lines.push(Line::default());
    }
    lines.truncate(room);
    lines.push(Line::default());
    lines.extend(foot);
    f.render_widget(Paragraph::new(lines), inner);
}

/// Under the list: skipped lines, the baseline, the last message, the filter being typed
/// and the keys (wrapped, never cut).
fn list_foot(app: &App, cols: usize) -> Vec<Line<'static>> {
    let theme = app.theme;
    let st = &app.runs;
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
    let hint = if st.typing {
        foot.push(Line::from(vec![
            Span::styled("filter ", theme.label()),
            Span::styled(format!("{}▏", st.query), theme.value()),
        ]));
        "type words to match (id, experiment, preset, outcome, result, tune) · Enter keeps · Esc clears"
    } else {
        "↑↓ select · ←→ scroll · Enter report (a tune: opens) · / filter · f experiment · b baseline · c compare · w write report · Esc close"
    };
    for l in wrap(hint, cols, 2) {
        foot.push(Line::styled(l, theme.dim()));
    }
    foot
}

/// The table: its header, then a window of rows around the selection. A tune's rounds,
/// when opened, are drawn under its line behind a `│`.
fn list_lines(app: &App, cols: usize, room: usize) -> Vec<Line<'static>> {
    let theme = app.theme;
    let st = &app.runs;
    let rows = st.rows();
    let shown: Vec<&RunReport> = rows.iter().filter_map(Row::run).collect();
    if rows.is_empty() {
        let t = if st.loading {
            "reading the history…".to_string()
        } else if st.runs.is_empty() {
            "no runs yet: r or s starts one".to_string()
        } else if !st.query.trim().is_empty() {
            format!(
                "no run matches “{}”: / changes the filter (Esc in it clears it), f the experiment",
                st.query.trim()
            )
        } else {
            "no run of this experiment: f changes the filter".to_string()
        };
        return wrap(&t, cols, 3)
            .into_iter()
            .map(|l| Line::styled(l, theme.dim()))
            .collect();
    }
    let table = if shown.is_empty() {
        String::new()
    } else {
        list_table(&shown)
    };
    let all: Vec<&str> = table.lines().collect();
    let head = all.len().saturating_sub(shown.len());
    // The run's id stays when the other columns scroll sideways.
    let owned: Vec<String> = all.iter().map(|l| l.to_string()).collect();
    let fixed = super::fixed_cols::first_columns(&owned)
        .first()
        .copied()
        .unwrap_or(0);
    // Table lines are cut at the edge, not at a word, so the columns stay aligned.
    let w = cols.saturating_sub(4);
    let skip = |l: &str| -> String {
        let t: Vec<char> = scrolled(l, fixed, st.hscroll).chars().collect();
        if t.len() > w {
            t[..w.saturating_sub(1)].iter().collect::<String>() + "…"
        } else {
            t.into_iter().collect()
        }
    };
    let mut lines: Vec<Line> = all[..head]
        .iter()
        .map(|l| Line::styled(format!("    {}", skip(l)), theme.label()))
        .collect();
    let visible = room.saturating_sub(head).max(1);
    let first = st.selected.saturating_sub(visible - 1);
    let mut table_row = head;
    for (i, row) in rows.iter().enumerate() {
        let text = match row {
            Row::Run { in_tune, .. } => {
                table_row += 1;
                let bar = if *in_tune { "│ " } else { "  " };
                format!("{bar}{}", skip(all[table_row - 1]))
            }
            Row::Tune {
                workload,
                runs,
                open,
                ..
            } => fit(
                &history_rows::tune_line(workload, runs, *open),
                cols.saturating_sub(2),
            ),
        };
        if i < first || i >= first + visible {
            continue;
        }
        let sel = i == st.selected;
        let is_base = row
            .run()
            .is_some_and(|r| st.baseline.as_deref() == Some(r.run_id.as_str()));
        let marker = match (sel, is_base) {
            (true, _) => "▶",
            (false, true) => "B",
            _ => " ",
        };
        let style = match (sel, row) {
            (true, _) => theme.title(),
            (false, Row::Tune { .. }) => theme.accent(),
            _ => theme.plain(),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{marker} "), theme.key()),
            Span::styled(text, style),
        ]));
    }
    lines
}

fn render_view(app: &App, f: &mut Frame, area: Rect, v: &TextView) {
    let theme = app.theme;
    let inner = overlay_box(app, f, area, &format!(" {} ", v.title), 200);
    let cols = inner.width as usize;
    let room = (inner.height as usize).saturating_sub(1);
    let mut lines: Vec<Line> = v
        .lines
        .iter()
        .zip(&v.fixed)
        .skip(v.scroll)
        .take(room)
        .map(|(l, fixed)| {
            // A table's name column stays; text outside tables moves as a whole.
            let shifted = if *fixed > 0 {
                scrolled(l, *fixed, v.hscroll)
            } else {
                l.chars().skip(v.hscroll).collect()
            };
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
