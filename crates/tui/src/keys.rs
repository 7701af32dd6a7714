//! What the keys do: the actions, their default keys, how a key is written in the config file
//! and shown in the key bar. Ctrl-C always quits and the arrow keys always move, whatever the
//! config says.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Everything a key can ask for outside the field editor and dialogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Action {
    Quit,
    Help,
    Run,
    Sweep,
    Cancel,
    Edit,
    NextExperiment,
    Experiment1,
    Experiment2,
    Experiment3,
    Experiment4,
    Plans,
    Probe,
    Presets,
    History,
    Import,
    Tune,
    Capture,
    Window,
    Verify,
    Observe,
    View,
    Axis,
    Zoom,
    Report,
    NextPane,
    PrevPane,
    Left,
    Right,
    Up,
    Down,
}

impl Action {
    pub(crate) const ALL: [Action; 31] = [
        Action::Run,
        Action::Sweep,
        Action::Cancel,
        Action::Edit,
        Action::NextExperiment,
        Action::Experiment1,
        Action::Experiment2,
        Action::Experiment3,
        Action::Experiment4,
        Action::Plans,
        Action::Probe,
        Action::Presets,
        Action::History,
        Action::Import,
        Action::Tune,
        Action::Capture,
        Action::Window,
        Action::Verify,
        Action::Observe,
        Action::View,
        Action::Axis,
        Action::Zoom,
        Action::Report,
        Action::NextPane,
        Action::PrevPane,
        Action::Left,
        Action::Right,
        Action::Up,
        Action::Down,
        Action::Help,
        Action::Quit,
    ];

    /// The name in the config file's `[keys]` table.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Run => "run",
            Action::Sweep => "sweep",
            Action::Cancel => "cancel",
            Action::Edit => "edit",
            Action::NextExperiment => "experiment",
            Action::Experiment1 => "experiment_1",
            Action::Experiment2 => "experiment_2",
            Action::Experiment3 => "experiment_3",
            Action::Experiment4 => "experiment_4",
            Action::Plans => "plans",
            Action::Probe => "probe",
            Action::Presets => "presets",
            Action::History => "history",
            Action::Import => "import",
            Action::Tune => "tune",
            Action::Capture => "capture",
            Action::Window => "window",
            Action::Verify => "verify",
            Action::Observe => "observe",
            Action::View => "view",
            Action::Axis => "axis",
            Action::Zoom => "zoom",
            Action::Report => "report",
            Action::NextPane => "next_pane",
            Action::PrevPane => "prev_pane",
            Action::Left => "left",
            Action::Right => "right",
            Action::Up => "up",
            Action::Down => "down",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }

    /// One line for the help overlay.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Action::Quit => "quit (asks first while a run is in progress)",
            Action::Help => "this help",
            Action::Run => "run one trial: the first value of every list (and of set), once",
            Action::Sweep => "run the full sweep of the parameters",
            Action::Cancel => "cancel the run or the disk probe",
            Action::Edit => "edit the selected parameter (Enter accepts, Esc aborts)",
            Action::NextExperiment => "next experiment",
            Action::Experiment1 => "experiment index-build",
            Action::Experiment2 => "experiment ingest",
            Action::Experiment3 => "experiment growth",
            Action::Experiment4 => "experiment query",
            Action::Plans => {
                "query: the plan of each statement per combination, changed nodes marked"
            }
            Action::Probe => "measure the disk: sequential write and fsync latency",
            Action::Presets => "presets: load, save, rename, delete",
            Action::History => "past runs: reports, baseline, compare",
            Action::Import => "import tables of a server into the sandbox (read-only there)",
            Action::Tune => "tune: search settings for the parameters on screen within a budget",
            Action::Capture => {
                "capture the target's top statements (pg_stat_statements, 10 s of pg_stat_activity; only read) as the query experiment's workload"
            }
            Action::Window => {
                "record a window of the target's pg_stat_statements (only read): up to 60 s, this key again or Esc ends it; kept in pglab's data directory"
            }
            Action::Verify => {
                "compare the last two windows recorded, statement by statement, as pglab verify does"
            }
            Action::Observe => "look only: turn experiments off (or on again)",
            Action::View => "run pane: summary, trials, chart, findings",
            Action::Axis => {
                "run pane: the experiment's own setting or the swept server settings (set) on the x axis"
            }
            Action::Zoom => "the Run pane on the whole screen, and back",
            Action::Report => {
                "write the report of the run on screen (in history: the selected run), Markdown and SVG, as pglab report does"
            }
            Action::NextPane => "focus the next pane",
            Action::PrevPane => "focus the previous pane",
            Action::Left => "focus the pane to the left",
            Action::Right => "focus the pane to the right",
            Action::Up => "focus up / previous parameter",
            Action::Down => "focus down / next parameter",
        }
    }

    fn default_key(self) -> Key {
        let c = |ch| Key::plain(KeyCode::Char(ch));
        match self {
            Action::Quit => c('q'),
            Action::Help => c('?'),
            Action::Run => c('r'),
            Action::Sweep => c('s'),
            Action::Cancel => Key::plain(KeyCode::Esc),
            Action::Edit => Key::plain(KeyCode::Enter),
            Action::NextExperiment => c('x'),
            Action::Experiment1 => c('1'),
            Action::Experiment2 => c('2'),
            Action::Experiment3 => c('3'),
            Action::Experiment4 => c('4'),
            Action::Plans => c('e'),
            Action::Probe => c('d'),
            Action::Presets => c('p'),
            Action::History => c('h'),
            Action::Import => c('i'),
            Action::Tune => c('t'),
            Action::Capture => c('c'),
            Action::Window => c('W'),
            Action::Verify => c('V'),
            Action::Observe => c('o'),
            Action::View => c('v'),
            Action::Axis => c('a'),
            Action::Zoom => c('z'),
            Action::Report => c('w'),
            Action::NextPane => Key::plain(KeyCode::Tab),
            Action::PrevPane => Key::plain(KeyCode::BackTab),
            // `h` is history; the arrow keys always move, and `l` stays for symmetry with j k.
            Action::Left => Key::plain(KeyCode::Left),
            Action::Right => c('l'),
            Action::Up => c('k'),
            Action::Down => c('j'),
        }
    }

    fn index(self) -> usize {
        Action::ALL.iter().position(|a| *a == self).unwrap_or(0)
    }
}

/// A key with its modifiers, normalised so that `R` and `Shift-r` are one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub(crate) const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }

    pub(crate) fn from_event(e: &KeyEvent) -> Key {
        let mut mods =
            e.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(e.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Key { code: e.code, mods }
    }

    pub(crate) fn is_ctrl_c(&self) -> bool {
        self.mods.contains(KeyModifiers::CONTROL)
            && matches!(self.code, KeyCode::Char('c') | KeyCode::Char('C'))
    }

    /// Parse the config file's spelling: `r`, `R`, `?`, `esc`, `enter`, `tab`, `shift-tab`,
    /// `space`, `f5`, `ctrl-r`, `alt-x`, `up`, `pagedown`, …
    pub(crate) fn parse(s: &str) -> Result<Key, String> {
        let bad = || {
            format!(
                "'{s}' is not a key: write a character (\"r\"), a name (esc, enter, tab, shift-tab, space, up, f5) or ctrl-/alt- before one"
            )
        };
        let mut mods = KeyModifiers::NONE;
        let mut rest = s.trim();
        loop {
            let lower = rest.to_ascii_lowercase();
            if let Some(r) = lower
                .strip_prefix("ctrl-")
                .or_else(|| lower.strip_prefix("c-"))
            {
                mods |= KeyModifiers::CONTROL;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower
                .strip_prefix("alt-")
                .or_else(|| lower.strip_prefix("m-"))
            {
                mods |= KeyModifiers::ALT;
                rest = &rest[rest.len() - r.len()..];
            } else {
                break;
            }
        }
        if rest.chars().count() == 1 {
            let ch = rest.chars().next().ok_or_else(bad)?;
            let ch = if mods.contains(KeyModifiers::CONTROL) {
                ch.to_ascii_lowercase()
            } else {
                ch
            };
            return Ok(Key {
                code: KeyCode::Char(ch),
                mods,
            });
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "esc" | "escape" => KeyCode::Esc,
            "enter" | "return" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "backtab" | "shift-tab" | "s-tab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "insert" | "ins" => KeyCode::Insert,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            f if f.starts_with('f') => match f[1..].parse::<u8>() {
                Ok(n) if (1..=12).contains(&n) => KeyCode::F(n),
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        };
        Ok(Key { code, mods })
    }

    /// How the key bar and help show it.
    pub(crate) fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Backspace => "Bksp".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Insert => "Ins".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        let mut s = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            s.push_str("C-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            s.push_str("M-");
        }
        s.push_str(&base);
        s
    }
}

/// The key of every action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMap {
    keys: Vec<Key>,
}

impl Default for KeyMap {
    fn default() -> Self {
        KeyMap {
            keys: Action::ALL.iter().map(|a| a.default_key()).collect(),
        }
    }
}

impl KeyMap {
    pub(crate) fn key(&self, a: Action) -> Key {
        self.keys[a.index()]
    }

    pub(crate) fn set(&mut self, a: Action, k: Key) {
        self.keys[a.index()] = k;
    }

    pub(crate) fn label(&self, a: Action) -> String {
        self.key(a).label()
    }

    /// The action of a key: the configured keys first, then the fixed arrow keys.
    pub(crate) fn action(&self, key: Key) -> Option<Action> {
        if let Some(a) = Action::ALL.into_iter().find(|a| self.key(*a) == key) {
            return Some(a);
        }
        if key.mods.is_empty() {
            return match key.code {
                KeyCode::Left => Some(Action::Left),
                KeyCode::Right => Some(Action::Right),
                KeyCode::Up => Some(Action::Up),
                KeyCode::Down => Some(Action::Down),
                _ => None,
            };
        }
        None
    }

    /// Pairs of actions that share a key.
    pub(crate) fn conflicts(&self) -> Vec<(Action, Action)> {
        let mut out = Vec::new();
        for (i, a) in Action::ALL.iter().enumerate() {
            for b in &Action::ALL[i + 1..] {
                if self.key(*a) == self.key(*b) {
                    out.push((*a, *b));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_print() {
        for (s, label) in [
            ("r", "r"),
            ("R", "R"),
            ("?", "?"),
            ("esc", "Esc"),
            ("Enter", "Enter"),
            ("shift-tab", "S-Tab"),
            ("ctrl-r", "C-r"),
            ("alt-x", "M-x"),
            ("f5", "F5"),
            ("space", "Space"),
            ("up", "↑"),
        ] {
            assert_eq!(Key::parse(s).unwrap().label(), label, "{s}");
        }
        for bad in ["", "ctrl-", "f13", "escapee"] {
            assert!(Key::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shift_is_folded_into_the_character() {
        let e = KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT);
        assert_eq!(Key::from_event(&e), Key::parse("R").unwrap());
        let e = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(
            KeyMap::default().action(Key::from_event(&e)),
            Some(Action::PrevPane)
        );
    }

    #[test]
    fn defaults_have_no_conflicts_and_arrows_always_move() {
        let mut m = KeyMap::default();
        assert!(m.conflicts().is_empty());
        m.set(Action::Down, Key::parse("n").unwrap());
        assert_eq!(m.action(Key::plain(KeyCode::Down)), Some(Action::Down));
        assert_eq!(m.action(Key::parse("n").unwrap()), Some(Action::Down));
        assert_eq!(m.action(Key::parse("j").unwrap()), None);
    }
}
