//! The preset picker overlay (`p`): every experiment's presets with their origin; load one into
//! the parameters, save the current parameters as a preset, rename or delete your own.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::preset::PresetEntry;
use crate::tui::app::{App, Level, Notice};
use crate::tui::render::overlay_box;
use crate::tui::text::{fit, pad, wrap};
use crate::tui::theme::Theme;

/// What the one-line name input is for.
#[derive(Debug, Clone, PartialEq)]
pub enum InputFor {
    Save,
    Rename { from: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct NameInput {
    pub purpose: InputFor,
    pub text: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PickerState {
    /// Sorted by name, as `preset::list` returns them.
    pub entries: Vec<PresetEntry>,
    /// Preset files that did not load, one sentence each.
    pub problems: Vec<String>,
    pub selected: usize,
    pub loading: bool,
    pub input: Option<NameInput>,
    /// The outcome of the last action, shown inside the picker.
    pub message: Option<Notice>,
}

impl PickerState {
    pub(crate) fn selected_entry(&self) -> Option<&PresetEntry> {
        self.entries.get(self.selected)
    }

    pub(crate) fn step(&mut self, down: bool) {
        let n = self.entries.len();
        if n == 0 {
            return;
        }
        self.selected = if down {
            (self.selected + 1).min(n - 1)
        } else {
            self.selected.saturating_sub(1)
        };
    }

    /// New entries; the selection stays on the same name when it is still there.
    pub(crate) fn apply(&mut self, entries: Vec<PresetEntry>, problems: Vec<String>) {
        let keep = self.selected_entry().map(|e| e.preset.name.clone());
        self.entries = entries;
        self.problems = problems;
        self.loading = false;
        self.selected = keep
            .and_then(|n| self.entries.iter().position(|e| e.preset.name == n))
            .unwrap_or(0)
            .min(self.entries.len().saturating_sub(1));
    }

    pub(crate) fn say(&mut self, level: Level, text: impl Into<String>) {
        self.message = Some(Notice {
            text: text.into(),
            level,
        });
    }
}

/// Where a preset comes from, as the picker shows it.
pub(crate) fn origin(e: &PresetEntry) -> &'static str {
    if e.shipped {
        "shipped"
    } else if e.shadows_shipped {
        "yours, shadows shipped"
    } else {
        "yours"
    }
}

pub(crate) fn render(app: &App, f: &mut Frame, area: Rect) {
    let inner = overlay_box(app, f, area, " Presets ", 100);
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    let foot = foot(app.theme, &app.presets, cols);
    let room = rows.saturating_sub(foot.len() + 1);
    let mut lines = entry_lines(app.theme, &app.presets, cols, room);
    while lines.len() < room {
        lines.push(Line::default());
    }
    lines.truncate(room);
    lines.push(Line::default());
    lines.extend(foot);
    f.render_widget(Paragraph::new(lines), inner);
}

/// Below the list: the files that did not load, the last action's outcome, then the name
/// being typed or the keys.
fn foot(theme: Theme, st: &PickerState, cols: usize) -> Vec<Line<'static>> {
    let mut foot: Vec<Line> = Vec::new();
    for p in st.problems.iter().take(2) {
        foot.push(Line::styled(
            fit(&format!("skipped: {p}"), cols),
            theme.warn(),
        ));
    }
    if let Some(m) = &st.message {
        let style = theme.level(m.level);
        for l in wrap(&m.text, cols, 2) {
            foot.push(Line::styled(l, style));
        }
    }
    match &st.input {
        Some(inp) => foot.extend(name_input(theme, inp)),
        None => {
            // Where the selection is in the list (it scrolls).
            let pos = if st.entries.is_empty() {
                String::new()
            } else {
                format!("{} of {} · ", st.selected + 1, st.entries.len())
            };
            let keys = format!(
                "{pos}↑↓ select · Enter load · S save current · R rename · D delete · Esc close"
            );
            for l in wrap(&keys, cols, 2) {
                foot.push(Line::styled(l, theme.dim()));
            }
        }
    }
    foot
}

/// The one-line name input and its keys.
fn name_input(theme: Theme, inp: &NameInput) -> [Line<'static>; 2] {
    let prompt = match &inp.purpose {
        InputFor::Save => "save the current parameters as: ".to_string(),
        InputFor::Rename { from } => format!("rename '{from}' to: "),
    };
    [
        Line::from(vec![
            Span::styled(prompt, theme.label()),
            Span::styled(format!("{}▏", inp.text), theme.value()),
        ]),
        Line::styled(
            "Enter accepts · Esc aborts · letters, digits, - and _",
            theme.dim(),
        ),
    ]
}

/// The presets in `room` lines: two lines an entry, the selected one's description in full
/// (wrapped); scrolled so the selected one shows.
fn entry_lines(theme: Theme, st: &PickerState, cols: usize, room: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    if st.entries.is_empty() {
        let t = if st.loading {
            "reading the presets…"
        } else {
            "no presets"
        };
        lines.push(Line::styled(t, theme.dim()));
        return lines;
    }
    let name_w = st
        .entries
        .iter()
        .map(|e| e.preset.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(cols / 3);
    let per = 2;
    let extra = st
        .entries
        .get(st.selected)
        .map_or(0, |e| description(e, cols, 4).len().saturating_sub(1));
    let visible = (room.saturating_sub(extra) / per).max(1);
    let first = st.selected.saturating_sub(visible - 1);
    for (i, e) in st.entries.iter().enumerate().skip(first).take(visible) {
        lines.extend(entry(theme, e, i == st.selected, name_w, cols));
    }
    lines
}

/// A preset's description wrapped over at most `n` lines, indented under its name.
fn description(e: &PresetEntry, cols: usize, n: usize) -> Vec<String> {
    wrap(&e.preset.description, cols.saturating_sub(4), n)
}

/// One entry: its name, experiment and origin, then its description (in full when selected).
fn entry(
    theme: Theme,
    e: &PresetEntry,
    sel: bool,
    name_w: usize,
    cols: usize,
) -> Vec<Line<'static>> {
    let marker = if sel { "▶ " } else { "  " };
    let head = format!(
        "{}  {:<11}  {}",
        pad(&fit(&e.preset.name, name_w), name_w),
        e.preset.experiment.as_str(),
        origin(e)
    );
    let style = if sel { theme.title() } else { theme.plain() };
    let mut lines = vec![Line::from(vec![
        Span::styled(marker, theme.key()),
        Span::styled(fit(&head, cols.saturating_sub(2)), style),
    ])];
    if sel {
        for l in description(e, cols, 4) {
            lines.push(Line::styled(format!("    {l}"), theme.dim()));
        }
    } else {
        lines.push(Line::styled(
            fit(&format!("    {}", e.preset.description), cols),
            theme.dim(),
        ));
    }
    lines
}
