//! The config file (`config.toml` in the config dir). The TUI reads two tables here:
//! `[keys]`, `action = "key"` (e.g. `run = "R"`), and `[ui]`, `synchronized_output = false`
//! to stop wrapping frames in DEC mode 2026. A file that cannot be used gives one message
//! naming the file and line, and the defaults are used.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::keys::{Action, Key, KeyMap};

#[derive(Debug, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    keys: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    ui: UiFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UiFile {
    synchronized_output: Option<bool>,
}

/// The keys to use, how to draw, and what was wrong with the file (if anything).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub keys: KeyMap,
    /// Wrap each frame in synchronized output (DEC mode 2026): the terminal shows it whole,
    /// never half drawn. Terminals without the mode ignore it. On by default.
    pub synchronized_output: bool,
    pub problem: Option<String>,
}

impl Config {
    fn defaults(problem: Option<String>) -> Config {
        Config {
            keys: KeyMap::default(),
            synchronized_output: true,
            problem,
        }
    }
}

/// Read the config file; a missing file is no problem.
pub(crate) fn load(path: &Path) -> Config {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::defaults(None),
        Err(e) => Config::defaults(Some(format!(
            "cannot read {}: {e}; using the default keys",
            path.display()
        ))),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset.min(text.len()))
        .map(|t| t.matches('\n').count() + 1)
        .unwrap_or(1)
}

pub(crate) fn parse(text: &str, path: &Path) -> Config {
    let fail = |line: usize, what: String| {
        Config::defaults(Some(format!(
            "{} line {line}, so the default keys are used: {what}",
            path.display()
        )))
    };
    let file: ConfigFile = match toml::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            let msg = e.message().trim().replace('\n', " ");
            return fail(line, msg);
        }
    };
    let mut keys = KeyMap::default();
    let mut lines: BTreeMap<Action, usize> = BTreeMap::new();
    for (name, value) in &file.keys {
        let line = line_of(text, name.span().start);
        let Some(action) = Action::parse(name.get_ref()) else {
            let known: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
            return fail(
                line,
                format!(
                    "unknown action '{}' in [keys] (known: {})",
                    name.get_ref(),
                    known.join(", ")
                ),
            );
        };
        let Some(spelled) = value.get_ref().as_str() else {
            return fail(
                line,
                format!(
                    "the key for '{}' must be a string, e.g. {} = \"r\"",
                    action.name(),
                    action.name()
                ),
            );
        };
        match Key::parse(spelled) {
            Ok(k) => {
                keys.set(action, k);
                lines.insert(action, line);
            }
            Err(e) => return fail(line, e),
        }
    }
    if let Some((a, b)) = keys.conflicts().into_iter().next() {
        let line = lines
            .get(&b)
            .or_else(|| lines.get(&a))
            .copied()
            .unwrap_or(1);
        return fail(
            line,
            format!(
                "'{}' is the key for both {} and {}",
                keys.label(a),
                a.name(),
                b.name()
            ),
        );
    }
    Config {
        keys,
        synchronized_output: file.ui.synchronized_output.unwrap_or(true),
        problem: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyCode;

    fn p(text: &str) -> Config {
        parse(text, Path::new("/home/u/.config/pglab/config.toml"))
    }

    #[test]
    fn overrides_apply() {
        let c = p("# mine\n[keys]\nrun = \"R\"\nquit = \"ctrl-q\"\n");
        assert!(c.problem.is_none(), "{:?}", c.problem);
        assert_eq!(c.keys.label(Action::Run), "R");
        assert_eq!(c.keys.label(Action::Quit), "C-q");
        assert_eq!(c.keys.key(Action::Sweep), Key::plain(KeyCode::Char('s')));
        // Swapping two keys is fine.
        let c = p("[keys]\nrun = \"s\"\nsweep = \"r\"\n");
        assert!(c.problem.is_none(), "{:?}", c.problem);
    }

    #[test]
    fn problems_name_the_file_and_line_and_fall_back() {
        let c = p("[keys]\nrun = \"R\"\n\nrnu = \"x\"\n");
        let m = c.problem.unwrap();
        assert!(m.contains("config.toml line 4"), "{m}");
        assert!(m.contains("unknown action 'rnu'"), "{m}");
        assert_eq!(c.keys, KeyMap::default());

        let m = p("[keys]\nrun = 3\n").problem.unwrap();
        assert!(
            m.contains("line 2") && m.contains("must be a string"),
            "{m}"
        );

        let m = p("[keys]\nrun = \"ctrl-\"\n").problem.unwrap();
        assert!(m.contains("line 2") && m.contains("not a key"), "{m}");

        let m = p("[keys]\nrun = \"q\"\n").problem.unwrap();
        assert!(m.contains("both") && m.contains("line 2"), "{m}");

        let m = p("[keys\nrun = \"R\"\n").problem.unwrap();
        assert!(m.contains("config.toml line 1"), "{m}");
        let m = p("[keys]\nrun = \"R\"\nrun = \"S\"\n").problem.unwrap();
        assert!(m.contains("line 3"), "{m}");
    }

    #[test]
    fn other_tables_are_left_alone() {
        let c = p("[run]\nschema = \"lab\"\n");
        assert!(c.problem.is_none());
        assert!(c.synchronized_output);
    }

    #[test]
    fn synchronized_output_can_be_turned_off() {
        let c = p("[ui]\nsynchronized_output = false\n");
        assert!(c.problem.is_none(), "{:?}", c.problem);
        assert!(!c.synchronized_output);
        let m = p("[ui]\nsynchronised_output = false\n").problem.unwrap();
        assert!(
            m.contains("line 2") && m.contains("synchronized_output"),
            "{m}"
        );
    }
}
