//! Parameters pane: the form of the selected experiment, built from its `FIELDS`, edited in
//! place and validated as typed by the experiment's own parser (drawn by `params_form`).

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::experiment::lab::field::FieldErrors;
use crate::experiment::{ExperimentKind, ExperimentSpec, FieldDef, ParamText};
use crate::tui::msg::RunKind;

/// Drawn in its own file, the form being the other half of this pane.
pub(crate) use super::params_form::render;

/// A field being edited.
#[derive(Debug, Clone, PartialEq)]
pub struct Editor {
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
}

/// What a key did to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
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
    pub(crate) fn new() -> ParamsState {
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
    pub(crate) fn restore(last: &crate::tui::last_params::LastParams) -> ParamsState {
        let mut st = ParamsState::new();
        for k in ExperimentKind::ALL {
            st.values.insert(k, last.values(k));
        }
        st.set_kind(last.experiment);
        st.restored = last.differs_from_defaults();
        st
    }

    /// What to save at exit.
    pub(crate) fn snapshot(&self) -> crate::tui::last_params::LastParams {
        crate::tui::last_params::LastParams {
            experiment: self.kind,
            params: self.values.clone(),
        }
    }

    pub(crate) fn fields(&self) -> &'static [FieldDef] {
        self.kind.fields()
    }

    pub(crate) fn current(&self) -> &ParamText {
        &self.values[&self.kind]
    }

    pub(crate) fn selected(&self) -> usize {
        self.selected
            .get(&self.kind)
            .copied()
            .unwrap_or(0)
            .min(self.fields().len().saturating_sub(1))
    }

    pub(crate) fn selected_field(&self) -> Option<&'static FieldDef> {
        self.fields().get(self.selected())
    }

    /// Move the selection; false at the edge.
    pub(crate) fn select_step(&mut self, down: bool) -> bool {
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
    pub(crate) fn select(&mut self, key: &str) {
        if let Some(i) = self.fields().iter().position(|f| f.key == key) {
            self.selected.insert(self.kind, i);
        }
    }

    pub(crate) fn set_kind(&mut self, kind: ExperimentKind) {
        self.editing = None;
        self.preview = None;
        self.kind = kind;
        self.parsed = kind.parse_spec(self.current());
    }

    /// Switch to `kind` with its defaults overlaid by the preset's `params`.
    pub(crate) fn load(&mut self, name: &str, kind: ExperimentKind, params: &ParamText) {
        self.restored = false;
        let mut values = kind.defaults();
        values.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.values.insert(kind, values.clone());
        self.preset = Some((kind, name.to_string(), values));
        self.set_kind(kind);
    }

    /// The loaded preset's name while the values on screen are still exactly its own.
    pub(crate) fn preset_name(&self) -> Option<String> {
        match &self.preset {
            Some((kind, name, values)) if *kind == self.kind && values == self.current() => {
                Some(name.clone())
            }
            _ => None,
        }
    }

    /// Set a value directly (presets, tests).
    pub(crate) fn set_value(&mut self, key: &str, value: &str) {
        if let Some(v) = self.values.get_mut(&self.kind)
            && v.insert(key.to_string(), value.to_string()).as_deref() != Some(value)
        {
            self.restored = false;
        }
        self.parsed = self.kind.parse_spec(self.current());
    }

    pub(crate) fn start_edit(&mut self) {
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
    pub(crate) fn edit_key(&mut self, k: &KeyEvent) -> Edit {
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
    pub(crate) fn field_error(&self, key: &str) -> Option<&str> {
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
    pub(crate) fn say(&self, message: &str) -> String {
        crate::tui::text::fields_by_name(message, self.fields().iter().map(|f| f.key))
    }

    pub(crate) fn spec_key(&self) -> Option<String> {
        self.parsed.as_ref().ok().map(|s| s.spec_key())
    }

    /// The spec a run key asks for: `s` the whole sweep; `r` one trial
    /// ([`ExperimentSpec::one_trial`]).
    pub(crate) fn spec_for(&self, kind: RunKind) -> Result<ExperimentSpec, &FieldErrors> {
        let spec = self.parsed.as_ref()?;
        Ok(match kind {
            RunKind::Single => spec.one_trial(),
            RunKind::Sweep => spec.clone(),
        })
    }
}
