//! Parameters pane: the form of the selected experiment, built from its `FIELDS`, edited in
//! place and validated as typed by the experiment's own parser.

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{framed_pane, plain_line};
use crate::experiment::field::FieldErrors;
use crate::experiment::{ExperimentKind, ExperimentSpec, FieldDef, ParamText};
use crate::tui::app::{App, Focus};
use crate::tui::msg::RunKind;
use crate::tui::text::{fit, pack, pad, width, wrap};

/// A field being edited.
#[derive(Debug, Clone, PartialEq)]
pub struct Editor {
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
}

/// What a key did to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Continue,
    /// Enter: the text is the field's value now; `changed` when it differs.
    Accepted {
        changed: bool,
    },
    Aborted,
}

#[derive(Debug, Clone)]
pub struct ParamsState {
    pub kind: ExperimentKind,
    /// Every experiment's values, so that switching back keeps the edits.
    pub values: BTreeMap<ExperimentKind, ParamText>,
    selected: BTreeMap<ExperimentKind, usize>,
    pub editing: Option<Editor>,
    /// The accepted values, parsed.
    pub parsed: Result<ExperimentSpec, FieldErrors>,
    /// Errors of the values with the editor's text in place (while editing).
    pub preview: Option<FieldErrors>,
    /// The preset last loaded: its experiment, name and the values it set.
    pub preset: Option<(ExperimentKind, String, ParamText)>,
    /// The values came from the last session and nothing was changed since.
    pub restored: bool,
}

impl Default for ParamsState {
    fn default() -> Self {
        ParamsState::new()
    }
}

impl ParamsState {
    pub fn new() -> ParamsState {
        let values: BTreeMap<_, _> = ExperimentKind::ALL
            .into_iter()
            .map(|k| (k, k.defaults()))
            .collect();
        let kind = ExperimentKind::IndexBuild;
        let parsed = kind.parse_spec(&values[&kind]);
        ParamsState {
            kind,
            values,
            selected: BTreeMap::new(),
            editing: None,
            parsed,
            preview: None,
            preset: None,
            restored: false,
        }
    }

    /// The last session's values (see [`crate::tui::last_params`]).
    pub fn restore(last: &crate::tui::last_params::LastParams) -> ParamsState {
        let mut st = ParamsState::new();
        for k in ExperimentKind::ALL {
            st.values.insert(k, last.values(k));
        }
        st.set_kind(last.experiment);
        st.restored = last.differs_from_defaults();
        st
    }

    /// What to save at exit.
    pub fn snapshot(&self) -> crate::tui::last_params::LastParams {
        crate::tui::last_params::LastParams {
            experiment: self.kind,
            params: self.values.clone(),
        }
    }

    pub fn fields(&self) -> &'static [FieldDef] {
        self.kind.fields()
    }

    pub fn current(&self) -> &ParamText {
        &self.values[&self.kind]
    }

    pub fn selected(&self) -> usize {
        self.selected
            .get(&self.kind)
            .copied()
            .unwrap_or(0)
            .min(self.fields().len().saturating_sub(1))
    }

    pub fn selected_field(&self) -> Option<&'static FieldDef> {
        self.fields().get(self.selected())
    }

    /// Move the selection; false at the edge.
    pub fn select_step(&mut self, down: bool) -> bool {
        let i = self.selected();
        let n = self.fields().len();
        let j = if down {
            if i + 1 >= n {
                return false;
            }
            i + 1
        } else {
            if i == 0 {
                return false;
            }
            i - 1
        };
        self.selected.insert(self.kind, j);
        true
    }

    /// Select the field named `key` (no change when there is none).
    pub fn select(&mut self, key: &str) {
        if let Some(i) = self.fields().iter().position(|f| f.key == key) {
            self.selected.insert(self.kind, i);
        }
    }

    pub fn set_kind(&mut self, kind: ExperimentKind) {
        self.editing = None;
        self.preview = None;
        self.kind = kind;
        self.parsed = kind.parse_spec(self.current());
    }

    /// Switch to `kind` with its defaults overlaid by the preset's `params`.
    pub fn load(&mut self, name: &str, kind: ExperimentKind, params: &ParamText) {
        self.restored = false;
        let mut values = kind.defaults();
        values.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.values.insert(kind, values.clone());
        self.preset = Some((kind, name.to_string(), values));
        self.set_kind(kind);
    }

    /// The loaded preset's name while the values on screen are still exactly its own.
    pub fn preset_name(&self) -> Option<String> {
        match &self.preset {
            Some((kind, name, values)) if *kind == self.kind && values == self.current() => {
                Some(name.clone())
            }
            _ => None,
        }
    }

    /// Set a value directly (presets, tests).
    pub fn set_value(&mut self, key: &str, value: &str) {
        if let Some(v) = self.values.get_mut(&self.kind)
            && v.insert(key.to_string(), value.to_string()).as_deref() != Some(value)
        {
            self.restored = false;
        }
        self.parsed = self.kind.parse_spec(self.current());
    }

    pub fn start_edit(&mut self) {
        let Some(f) = self.selected_field() else {
            return;
        };
        let text = self.current().get(f.key).cloned().unwrap_or_default();
        let cursor = text.chars().count();
        self.editing = Some(Editor { text, cursor });
        self.revalidate_preview();
    }

    fn revalidate_preview(&mut self) {
        let (Some(ed), Some(f)) = (&self.editing, self.selected_field()) else {
            self.preview = None;
            return;
        };
        let mut p = self.current().clone();
        p.insert(f.key.to_string(), ed.text.clone());
        self.preview = Some(self.kind.parse_spec(&p).err().unwrap_or_default());
    }

    /// A key while editing.
    pub fn edit_key(&mut self, k: &KeyEvent) -> Edit {
        let Some(ed) = self.editing.as_mut() else {
            return Edit::Aborted;
        };
        let byte_at =
            |s: &str, c: usize| s.char_indices().nth(c).map(|(i, _)| i).unwrap_or(s.len());
        let len = ed.text.chars().count();
        match k.code {
            KeyCode::Esc => {
                self.editing = None;
                self.preview = None;
                return Edit::Aborted;
            }
            KeyCode::Enter => {
                let text = ed.text.trim().to_string();
                self.editing = None;
                self.preview = None;
                let key = match self.selected_field() {
                    Some(f) => f.key,
                    None => return Edit::Aborted,
                };
                let changed = self.current().get(key) != Some(&text);
                self.set_value(key, &text);
                return Edit::Accepted { changed };
            }
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                ed.text.clear();
                ed.cursor = 0;
            }
            KeyCode::Char('w') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                // The word before the cursor, as the one-line fields drop it.
                let at = byte_at(&ed.text, ed.cursor);
                let mut head = ed.text[..at].to_string();
                crate::tui::line_edit::drop_word(&mut head);
                ed.cursor = head.chars().count();
                ed.text = head + &ed.text[at..];
            }
            KeyCode::Char(c)
                if !k
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                let at = byte_at(&ed.text, ed.cursor);
                ed.text.insert(at, c);
                ed.cursor += 1;
            }
            KeyCode::Backspace if ed.cursor > 0 => {
                let at = byte_at(&ed.text, ed.cursor - 1);
                ed.text.remove(at);
                ed.cursor -= 1;
            }
            KeyCode::Delete if ed.cursor < len => {
                let at = byte_at(&ed.text, ed.cursor);
                ed.text.remove(at);
            }
            KeyCode::Left => ed.cursor = ed.cursor.saturating_sub(1),
            KeyCode::Right => ed.cursor = (ed.cursor + 1).min(len),
            KeyCode::Home => ed.cursor = 0,
            KeyCode::End => ed.cursor = len,
            _ => return Edit::Continue,
        }
        self.revalidate_preview();
        Edit::Continue
    }

    /// The error shown for a field: the live one while it is being edited.
    pub fn field_error(&self, key: &str) -> Option<&str> {
        let editing_this =
            self.editing.is_some() && self.selected_field().is_some_and(|f| f.key == key);
        let errors: &[(String, String)] = match (&self.preview, &self.parsed) {
            (Some(p), _) if editing_this => p,
            (_, Err(e)) => e,
            _ => &[],
        };
        errors
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, e)| e.as_str())
    }

    /// A message of the engine's as the editor says it: fields by their names (`mwm`), not by
    /// the command line's flags (`--mwm`), which the headless front end shows.
    pub fn say(&self, message: &str) -> String {
        crate::tui::text::fields_by_name(message, self.fields().iter().map(|f| f.key))
    }

    pub fn spec_key(&self) -> Option<String> {
        self.parsed.as_ref().ok().map(|s| s.spec_key())
    }

    /// The spec a run key asks for: `s` the whole sweep; `r` one trial
    /// ([`ExperimentSpec::one_trial`]).
    pub fn spec_for(&self, kind: RunKind) -> Result<ExperimentSpec, &FieldErrors> {
        let spec = self.parsed.as_ref()?;
        Ok(match kind {
            RunKind::Single => spec.one_trial(),
            RunKind::Sweep => spec.clone(),
        })
    }
}

/// How long the sweep and one trial would take, by the history ("sweep 3m 10s–4m 02s",
/// "one trial ≈ 6.1 s"), or that nothing in it says.
fn time_items(app: &App) -> Vec<String> {
    let h = &app.history;
    if h.loading || h.spec_key.is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    match &h.eta.sweep {
        Some(e) => out.push(format!("sweep {}", e.range_text())),
        None => out.push("time: no past run to go by".into()),
    }
    if let Some(e) = &h.eta.one {
        out.push(format!("one trial {}", e.range_text()));
    }
    out
}

/// A value in `cols`: a path (a file field, a captured workload) keeps its file name and the
/// start of its directory, anything else is cut at a word or list boundary.
fn fit_value(value: &str, cols: usize) -> String {
    let path = value.contains('/') && !value.contains(char::is_whitespace);
    if path {
        crate::tui::text::fit_middle(value, cols)
    } else {
        fit(value, cols)
    }
}

pub fn render(app: &App, f: &mut Frame, area: Rect, title: bool) {
    let st = &app.params;
    let theme = app.theme;
    let inner = if title {
        framed_pane(app, f, Focus::Params, &[st.kind.as_str().to_string()], area)
    } else {
        area
    };
    let cols = inner.width as usize;
    let rows = inner.height as usize;
    if rows == 0 || cols < 10 {
        return;
    }
    let fields = st.fields();
    let focused = app.focus == Focus::Params;
    // Restored values are said first, so nobody takes them for the defaults.
    let (inner, rows) = if st.restored && rows > 4 {
        let note = fit("restored from your last session (p: presets)", cols);
        f.render_widget(
            Paragraph::new(plain_line(note, theme.dim())),
            Rect { height: 1, ..inner },
        );
        (
            Rect {
                y: inner.y + 1,
                height: inner.height - 1,
                ..inner
            },
            rows - 1,
        )
    } else {
        (inner, rows)
    };
    let label_w = fields
        .iter()
        .map(|f| width(f.key))
        .max()
        .unwrap_or(0)
        .min(cols / 2);
    let value_w = cols.saturating_sub(label_w + 3);
    let cost = match &st.parsed {
        Ok(crate::experiment::ExperimentSpec::IndexBuild(s)) if s.table.is_some() => {
            let t = s.table.as_ref().map(|t| t.text()).unwrap_or_default();
            let items = vec![
                format!("on {} ({})", t[0].1, t[1].1),
                match s.table.as_ref().and_then(|t| t.sample) {
                    Some(_) => format!("{} sample, 3 sizes, projected", t[2].1),
                    None => "the whole table".into(),
                },
                format!("{} trials", s.trials()),
            ];
            pack(&items, cols, " · ", 2)
                .into_iter()
                .map(|l| plain_line(l, theme.accent()))
                .collect::<Vec<_>>()
        }
        Ok(spec) => {
            // How long comes second: on a small screen only the first row shows.
            let mut items = spec.estimate().items();
            let rest = items.split_off(1.min(items.len()));
            items.extend(time_items(app));
            items.extend(rest);
            pack(&items, cols, " · ", 2)
                .into_iter()
                .map(|l| plain_line(l, theme.accent()))
                .collect::<Vec<_>>()
        }
        // The reason itself, at every size: the selected field's error when it has one,
        // else the first, and how many more there are.
        Err(e) => {
            let sel_key = st.selected_field().map(|f| f.key);
            let (k, why) = e
                .iter()
                .find(|(k, _)| Some(k.as_str()) == sel_key)
                .or(e.first())
                .map(|(k, w)| (k.as_str(), w.as_str()))
                .unwrap_or(("", ""));
            let more = if e.len() > 1 {
                format!(" (+{} more invalid)", e.len() - 1)
            } else {
                String::new()
            };
            wrap(&format!("✗ {k}: {}{more}", st.say(why)), cols, 2)
                .into_iter()
                .map(|l| plain_line(l, theme.error()))
                .collect::<Vec<_>>()
        }
    };
    // The cost sits on the last rows: two when there is room, else its first.
    // A reason why the run cannot start gets its two lines at every size (the fields scroll
    // to make room): it is what the user must read next.
    let cost_rows = if rows >= fields.len() + 3 || (st.parsed.is_err() && rows >= 6) {
        cost.len()
    } else {
        1
    };
    let cost: Vec<Line> = cost.into_iter().take(cost_rows).collect();
    let field_rows = fields.len().min(rows.saturating_sub(cost.len())).max(1);
    let sel = st.selected();
    let first = (sel + 1).saturating_sub(field_rows);
    let mut lines: Vec<Line> = Vec::new();

    for (i, fd) in fields.iter().enumerate().skip(first).take(field_rows) {
        let is_sel = i == sel;
        let error = st.field_error(fd.key).map(|e| st.say(e));
        let marker = if is_sel && focused { "› " } else { "  " };
        let mut spans = vec![Span::raw(marker)];
        let label_style = if is_sel && focused {
            theme.title()
        } else {
            theme.label()
        };
        // One name per field: the editor shows the key the flag, the preset file and every
        // error message use.
        spans.push(Span::styled(pad(fd.key, label_w), label_style));
        spans.push(Span::raw(" "));
        match (&st.editing, is_sel) {
            (Some(ed), true) => {
                // Show the text around the cursor, the cursor as a reversed cell.
                let chars: Vec<char> = ed.text.chars().collect();
                let room = value_w.saturating_sub(2).max(1);
                let start = ed.cursor.saturating_sub(room.saturating_sub(1));
                let before: String = chars[start..ed.cursor].iter().collect();
                let at: String = chars
                    .get(ed.cursor)
                    .map(|c| c.to_string())
                    .unwrap_or(" ".into());
                let after_end =
                    (ed.cursor + 1 + room.saturating_sub(ed.cursor - start + 1)).min(chars.len());
                let after: String = chars
                    .get(ed.cursor + 1..after_end)
                    .map(|s| s.iter().collect())
                    .unwrap_or_default();
                spans.push(Span::styled(before, theme.value()));
                spans.push(Span::styled(at, theme.selected()));
                spans.push(Span::styled(after, theme.value()));
                if error.is_some() {
                    spans.push(Span::styled(" ✗", theme.error()));
                }
            }
            _ => {
                let value = st.current().get(fd.key).map(String::as_str).unwrap_or("");
                let value_style = if is_sel && focused {
                    theme.selected()
                } else {
                    theme.value()
                };
                match error {
                    Some(e) => {
                        let v = fit(value, value_w.saturating_sub(2).max(1));
                        let beside = value_w.saturating_sub(width(&v) + 3);
                        spans.push(Span::styled(v.clone(), value_style));
                        // The reason beside the value when it fits; the line at the bottom
                        // always gives it in full.
                        if width(&e) <= beside {
                            spans.push(Span::styled(format!(" ✗ {e}"), theme.error()));
                        } else {
                            spans.push(Span::styled(" ✗", theme.error()));
                        }
                    }
                    None => spans.push(Span::styled(fit_value(value, value_w), value_style)),
                }
            }
        }
        lines.push(Line::from(spans));
    }

    // Below the form: the selected field's help, then what the run will cost (or why it
    // cannot run).
    let mut footer: Vec<Line> = Vec::new();
    let spare = rows.saturating_sub(lines.len() + cost.len());
    if let Some(fd) = st.selected_field() {
        for l in wrap(fd.help, cols, 2.min(spare)) {
            footer.push(plain_line(l, theme.dim()));
        }
    }
    lines.extend(footer);
    lines.truncate(rows.saturating_sub(cost.len()));
    while lines.len() + cost.len() < rows {
        lines.push(Line::default());
    }
    lines.extend(cost);
    f.render_widget(Paragraph::new(lines), inner);
}
