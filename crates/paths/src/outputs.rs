//! Files pglab writes for the user (a tune's script and report, a run's report, their
//! charts) never replace one that is there without the user's word: the TUI asks, a
//! headless command refuses a path it was given (`--force` replaces), and a default name
//! that is taken becomes the first free numbered one (`tune-2.sql`, `tune-2.md`). The files
//! of one output change their names together, so a script and its report keep matching.

use std::path::{Path, PathBuf};

/// The files of one output, the main one first (e.g. `tune.sql`, `tune.md`, `tune.svg`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSet {
    pub files: Vec<PathBuf>,
}

impl OutputSet {
    pub fn new(files: Vec<PathBuf>) -> OutputSet {
        OutputSet { files }
    }

    /// The files that are there already.
    pub fn existing(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|p| p.symlink_metadata().is_ok())
            .cloned()
            .collect()
    }

    /// The same files numbered `n`: `tune.sql` → `tune-2.sql`.
    pub fn numbered(&self, n: u32) -> OutputSet {
        OutputSet {
            files: self.files.iter().map(|p| with_number(p, n)).collect(),
        }
    }

    /// These files when none is there; else the first numbered set (2, 3, …) of which none
    /// is there.
    pub fn free(&self) -> OutputSet {
        if self.existing().is_empty() {
            return self.clone();
        }
        (2..10_000)
            .map(|n| self.numbered(n))
            .find(|s| s.existing().is_empty())
            .unwrap_or_else(|| self.numbered(std::process::id()))
    }

    /// "tune.sql and tune.md", for sentences.
    pub fn names(files: &[PathBuf]) -> String {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        match names.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [head @ .., last] => format!("{} and {last}", head.join(", ")),
        }
    }
}

/// A tune's script, its report (default: the script's name with `.md`) and the report's
/// chart (`.svg` beside it).
pub fn tune(sql: PathBuf, md: Option<PathBuf>) -> OutputSet {
    let md = md.unwrap_or_else(|| sql.with_extension("md"));
    let svg = md.with_extension("svg");
    OutputSet::new(vec![sql, md, svg])
}

/// `dir/name.ext` → `dir/name-N.ext`; `name` without an extension → `name-N`.
fn with_number(p: &Path, n: u32) -> PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match p.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    p.with_file_name(name)
}

/// Where a headless command writes `set`: the set itself when none of its files is there or
/// `force` says to replace them; a numbered set when the names were pglab's defaults
/// (`chosen` false), with the sentence saying so; else the refusal naming the flag that
/// chose the path and the way on.
pub fn resolve(
    set: &OutputSet,
    chosen: Option<&str>,
    force: bool,
) -> Result<(OutputSet, Option<String>), String> {
    let there = set.existing();
    if there.is_empty() || force {
        return Ok((set.clone(), None));
    }
    match chosen {
        Some(flag) => Err(format!(
            "{flag}: {} already there; add --force to replace {}, or choose another path",
            OutputSet::names(&there),
            if there.len() == 1 { "it" } else { "them" }
        )),
        None => {
            let free = set.free();
            let said = format!(
                "{} already there: writing {} instead (--force replaces)",
                OutputSet::names(&there),
                OutputSet::names(&free.files)
            );
            Ok((free, Some(said)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pglab-outputs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_taken_default_name_becomes_the_first_free_numbered_one() {
        let d = dir("free");
        let set = OutputSet::new(vec![
            d.join("tune.sql"),
            d.join("tune.md"),
            d.join("tune.svg"),
        ]);
        assert_eq!(set.free(), set);
        std::fs::write(d.join("tune.md"), "mine").unwrap();
        std::fs::write(d.join("tune-2.svg"), "mine").unwrap();
        let free = set.free();
        assert_eq!(
            free.files,
            [
                d.join("tune-3.sql"),
                d.join("tune-3.md"),
                d.join("tune-3.svg")
            ]
        );
        let (got, said) = resolve(&set, None, false).unwrap();
        assert_eq!(got, free);
        assert!(said.unwrap().contains("tune.md already there: writing"));
        // The user's own file is untouched by all this.
        assert_eq!(std::fs::read_to_string(d.join("tune.md")).unwrap(), "mine");
    }

    #[test]
    fn a_chosen_path_that_is_taken_is_refused_unless_forced() {
        let d = dir("chosen");
        let set = OutputSet::new(vec![d.join("mine.sql"), d.join("mine.md")]);
        std::fs::write(d.join("mine.sql"), "keep").unwrap();
        let e = resolve(&set, Some("--out"), false).unwrap_err();
        assert!(e.starts_with("--out: "), "{e}");
        assert!(
            e.contains("mine.sql already there; add --force to replace it"),
            "{e}"
        );
        assert_eq!(
            resolve(&set, Some("--out"), true).unwrap(),
            (set.clone(), None)
        );
        assert_eq!(with_number(Path::new("notes"), 2), PathBuf::from("notes-2"));
    }
}
