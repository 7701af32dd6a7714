//! Presets: named experiment parameters. Shipped ones are embedded in the binary
//! (`presets/*.toml`); the user's own live in `paths.presets_dir()`, one `NAME.toml` each, and
//! a user preset with a shipped preset's name shadows it.
//!
//! Every file is validated on load: its structure by toml (unknown top-level fields are
//! refused), its parameters by the experiment's own parser, and every problem names the file,
//! the line and the field.

mod file;
pub mod shipped;

use std::path::{Path, PathBuf};

pub use file::{parse, to_toml};

use crate::experiment::{ExperimentKind, ParamText};
use crate::paths::Paths;

/// Longest preset name.
pub(crate) const NAME_MAX: usize = 64;

/// A preset: an experiment and its parameters in text form.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub experiment: ExperimentKind,
    /// Only the parameters the preset sets; the rest take the experiment's defaults.
    pub params: ParamText,
    /// The URL or citation the preset reproduces.
    pub source: Option<String>,
}

/// A preset as `list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetEntry {
    pub preset: Preset,
    /// Embedded in the binary (false: the user's own file).
    pub shipped: bool,
    /// A user preset hiding the shipped preset of the same name.
    pub shadows_shipped: bool,
    /// The user's file (None for shipped presets).
    pub path: Option<PathBuf>,
}

/// One thing wrong with a preset file.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// The top-level field or parameter key.
    pub field: Option<String>,
    pub message: String,
}

impl Problem {
    fn new(line: Option<usize>, field: &str, message: impl Into<String>) -> Problem {
        Problem {
            line,
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    /// `file:line: field: message`.
    pub(crate) fn describe(&self, file: &str) -> String {
        let line = self.line.map(|l| format!(":{l}")).unwrap_or_default();
        let field = self
            .field
            .as_ref()
            .map(|f| format!("{f}: "))
            .unwrap_or_default();
        format!("{file}{line}: {field}{}", self.message)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PresetError {
    #[error("no preset named '{name}' (known: {})", known.join(", "))]
    NotFound { name: String, known: Vec<String> },
    #[error("bad preset name '{name}': {why}")]
    BadName { name: String, why: String },
    #[error("{}", problems.iter().map(|p| p.describe(file)).collect::<Vec<_>>().join("\n"))]
    Invalid {
        file: String,
        problems: Vec<Problem>,
    },
    #[error("a preset named '{name}' already exists ({}): overwrite it or choose another name", path.display())]
    Exists { name: String, path: PathBuf },
    #[error(
        "'{name}' is a shipped preset: it cannot be {action} (save a preset of your own instead)"
    )]
    Shipped { name: String, action: &'static str },
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
}

impl PresetError {
    fn io(path: &Path, e: std::io::Error) -> PresetError {
        PresetError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}

/// A name is a file name in the presets directory: letters, digits, `-` and `_`, at most 64,
/// so it can never point elsewhere.
pub fn check_name(name: &str) -> Result<(), PresetError> {
    let why = if name.is_empty() {
        Some("it is empty".to_string())
    } else if name.chars().count() > NAME_MAX {
        Some(format!("it is longer than {NAME_MAX} characters"))
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Some("use only letters, digits, '-' and '_'".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(PresetError::BadName {
            name: name.to_string(),
            why,
        }),
        None => Ok(()),
    }
}

/// The user's file for `name` (the name must be valid).
pub fn user_path(paths: &Paths, name: &str) -> PathBuf {
    paths.presets_dir().join(format!("{name}.toml"))
}

fn read_user(path: &Path, name: &str) -> Result<Option<Preset>, PresetError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &path.display().to_string(), Some(name)).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(PresetError::io(path, e)),
    }
}

fn load_shipped(name: &str) -> Option<Result<Preset, PresetError>> {
    shipped::text(name).map(|t| parse(t, &shipped::file_label(name), Some(name)))
}

/// Load a preset by name: the user's own first, then the shipped one.
pub fn load(paths: &Paths, name: &str) -> Result<Preset, PresetError> {
    check_name(name)?;
    if let Some(p) = read_user(&user_path(paths, name), name)? {
        return Ok(p);
    }
    match load_shipped(name) {
        Some(r) => r,
        None => Err(PresetError::NotFound {
            name: name.to_string(),
            known: names(paths),
        }),
    }
}

/// Every preset name, shipped and user, sorted.
pub(crate) fn names(paths: &Paths) -> Vec<String> {
    let mut v: Vec<String> = shipped::SHIPPED
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    v.extend(user_files(paths).0.into_iter().map(|(n, _)| n));
    v.sort();
    v.dedup();
    v
}

/// The `*.toml` files of the user's presets directory: (name, path), and problems with names.
fn user_files(paths: &Paths) -> (Vec<(String, PathBuf)>, Vec<PresetError>) {
    let dir = paths.presets_dir();
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let rd = match std::fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (files, errors),
        Err(e) => return (files, vec![PresetError::io(&dir, e)]),
    };
    for entry in rd.flatten() {
        let path = entry.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = file_name.strip_suffix(".toml") else {
            continue;
        };
        if stem.starts_with('.') {
            continue; // a temp file of an interrupted save
        }
        match check_name(stem) {
            Ok(()) => files.push((stem.to_string(), path)),
            Err(e) => errors.push(PresetError::Invalid {
                file: path.display().to_string(),
                problems: vec![Problem {
                    line: None,
                    field: None,
                    message: format!("{e}; rename the file"),
                }],
            }),
        }
    }
    files.sort();
    (files, errors)
}

/// All presets, shipped and the user's, sorted by name; files that do not load come back as
/// errors (the rest are still listed).
pub fn list(paths: &Paths) -> (Vec<PresetEntry>, Vec<PresetError>) {
    let (files, mut errors) = user_files(paths);
    let mut entries = Vec::new();
    for (name, path) in files {
        match read_user(&path, &name) {
            Ok(Some(preset)) => entries.push(PresetEntry {
                preset,
                shipped: false,
                shadows_shipped: shipped::text(&name).is_some(),
                path: Some(path),
            }),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    for (name, _) in shipped::SHIPPED {
        if entries.iter().any(|e| e.preset.name == *name) {
            continue;
        }
        match load_shipped(name) {
            Some(Ok(preset)) => entries.push(PresetEntry {
                preset,
                shipped: true,
                shadows_shipped: false,
                path: None,
            }),
            Some(Err(e)) => errors.push(e),
            None => {}
        }
    }
    entries.sort_by(|a, b| a.preset.name.cmp(&b.preset.name));
    (entries, errors)
}

/// Save a user preset (validated first), atomically. Refuses to replace an existing user
/// preset unless `overwrite`; saving under a shipped name shadows the shipped preset.
pub fn save(paths: &Paths, preset: &Preset, overwrite: bool) -> Result<PathBuf, PresetError> {
    check_name(&preset.name)?;
    // The parameters first, so a bad value is named without a file that was never written.
    if let Err(errors) = preset.experiment.parse_spec(&preset.params) {
        return Err(PresetError::Invalid {
            file: format!("preset '{}' (not saved)", preset.name),
            problems: errors
                .into_iter()
                .map(|(field, message)| Problem {
                    line: None,
                    field: Some(field),
                    message,
                })
                .collect(),
        });
    }
    let path = user_path(paths, &preset.name);
    let text = to_toml(preset);
    // What is written must read back as the same preset (and pass validation).
    let label = path.display().to_string();
    let back = parse(&text, &label, Some(&preset.name))?;
    if back != *preset {
        return Err(PresetError::Invalid {
            file: label,
            problems: vec![Problem {
                line: None,
                field: None,
                message: "the preset does not survive being written (a value with characters TOML cannot hold?)".into(),
            }],
        });
    }
    if !overwrite && path.exists() {
        return Err(PresetError::Exists {
            name: preset.name.clone(),
            path,
        });
    }
    crate::paths::write_private(&path, text.as_bytes()).map_err(|e| PresetError::io(&path, e))?;
    Ok(path)
}

/// Delete a user preset; returns the removed file.
pub fn delete(paths: &Paths, name: &str) -> Result<PathBuf, PresetError> {
    check_name(name)?;
    let path = user_path(paths, name);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if shipped::text(name).is_some() {
                Err(PresetError::Shipped {
                    name: name.to_string(),
                    action: "deleted",
                })
            } else {
                Err(PresetError::NotFound {
                    name: name.to_string(),
                    known: names(paths),
                })
            }
        }
        Err(e) => Err(PresetError::io(&path, e)),
    }
}

/// Rename a user preset (its `name` field changes with its file); returns the new file.
pub fn rename(paths: &Paths, from: &str, to: &str) -> Result<PathBuf, PresetError> {
    check_name(from)?;
    check_name(to)?;
    let old = user_path(paths, from);
    let Some(mut preset) = read_user(&old, from)? else {
        return Err(if shipped::text(from).is_some() {
            PresetError::Shipped {
                name: from.to_string(),
                action: "renamed",
            }
        } else {
            PresetError::NotFound {
                name: from.to_string(),
                known: names(paths),
            }
        });
    };
    if from == to {
        return Ok(old);
    }
    preset.name = to.to_string();
    let new = save(paths, &preset, false)?;
    std::fs::remove_file(&old).map_err(|e| PresetError::io(&old, e))?;
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_escape() {
        for bad in ["", "../x", "a/b", "a.b", ".hidden", "x y", &"n".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["cybertec-10m", "my_preset", "A1", &"n".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn index_build_presets_parse() {
        for (name, text) in shipped::SHIPPED {
            let p = parse(text, &shipped::file_label(name), Some(name))
                .unwrap_or_else(|e| panic!("shipped preset {name}: {e}"));
            assert_eq!(p.name, *name);
        }
        let p = load_shipped("cybertec-10m").unwrap().unwrap();
        assert_eq!(p.experiment, ExperimentKind::IndexBuild);
        assert_eq!(p.params["mwm"], "1MB..4GB*4");
    }
}
