//! The editor's parameters of the last session: every experiment's values and the one shown,
//! saved when the TUI exits and restored at the next start (`<data dir>/tui-params.json`).
//! A file that cannot be read costs a notice, never the start; keys an experiment no longer
//! knows are dropped, values it cannot parse come back as they were, with their error shown.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::experiment::{ExperimentKind, ParamText};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastParams {
    /// The experiment on screen at exit.
    pub experiment: ExperimentKind,
    /// Every experiment's values.
    pub params: BTreeMap<ExperimentKind, ParamText>,
}

impl LastParams {
    /// The values of `kind`: the defaults overlaid by the saved ones the experiment knows.
    pub(crate) fn values(&self, kind: ExperimentKind) -> ParamText {
        let mut v = kind.defaults();
        if let Some(saved) = self.params.get(&kind) {
            for (k, val) in saved {
                if v.contains_key(k) {
                    v.insert(k.clone(), val.clone());
                }
            }
        }
        v
    }

    /// Whether anything differs from the defaults (only then is "restored" worth saying).
    pub(crate) fn differs_from_defaults(&self) -> bool {
        self.experiment != ExperimentKind::IndexBuild
            || ExperimentKind::ALL
                .into_iter()
                .any(|k| self.values(k) != k.defaults())
    }
}

/// The saved parameters; `Ok(None)` when there is no file yet, `Err` with a sentence when
/// it cannot be used.
pub(crate) fn load(path: &Path) -> Result<Option<LastParams>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        format!(
            "{} is not a parameters file pglab wrote ({e}): starting from the defaults; it is replaced at exit",
            path.display()
        )
    })
}

/// Save atomically (a crash leaves the old file or the new one, never half of one).
pub(crate) fn save(path: &Path, last: &LastParams) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_vec_pretty(last).map_err(std::io::Error::other)?;
    crate::paths::write_private(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "pglab-last-params-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn round_trips_and_drops_keys_an_experiment_no_longer_knows() {
        let path = dir().join("p.json");
        assert_eq!(load(&path), Ok(None));
        let mut ib = ParamText::new();
        ib.insert("rows".into(), "50k".into());
        ib.insert("colour".into(), "red".into());
        let last = LastParams {
            experiment: ExperimentKind::Ingest,
            params: BTreeMap::from([(ExperimentKind::IndexBuild, ib)]),
        };
        save(&path, &last).unwrap();
        let back = load(&path).unwrap().unwrap();
        assert_eq!(back, last);
        let v = back.values(ExperimentKind::IndexBuild);
        assert_eq!(v["rows"], "50k");
        assert!(!v.contains_key("colour"));
        assert_eq!(v["mwm"], ExperimentKind::IndexBuild.defaults()["mwm"]);
        assert!(back.differs_from_defaults());
    }

    #[test]
    fn a_damaged_file_is_a_sentence_not_a_failure() {
        let path = dir().join("bad.json");
        std::fs::write(&path, "{ half").unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("starting from the defaults"), "{e}");
    }
}
