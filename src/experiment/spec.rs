//! Experiment parameters as users write them. One text form — `key = "value"` pairs — feeds
//! the TUI editor, the command-line flags and preset files alike, so each field is parsed and
//! validated by exactly one function and says the same thing wherever it was typed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{growth, index_build, ingest};

/// Parameters in text form, keyed by field name (`rows`, `mwm`, …).
pub type ParamText = BTreeMap<String, String>;

/// A field's errors: (field key, sentence).
pub type FieldErrors = Vec<(String, String)>;

/// What a field holds, for the editor's hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Count,
    CountList,
    Size,
    SizeList,
    Choice(&'static [&'static str]),
    ChoiceList(&'static [&'static str]),
    Bool,
    Duration,
    Number,
}

/// One editable parameter of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// The key in presets and the long flag name (`--mwm`).
    pub key: &'static str,
    /// Short label in the editor.
    pub label: &'static str,
    pub help: &'static str,
    pub default: &'static str,
    pub kind: FieldKind,
}

/// The three founding experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentKind {
    IndexBuild,
    Ingest,
    Growth,
}

impl ExperimentKind {
    pub const ALL: [ExperimentKind; 3] = [
        ExperimentKind::IndexBuild,
        ExperimentKind::Ingest,
        ExperimentKind::Growth,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentKind::IndexBuild => "index-build",
            ExperimentKind::Ingest => "ingest",
            ExperimentKind::Growth => "growth",
        }
    }

    pub fn parse(s: &str) -> Option<ExperimentKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn fields(self) -> &'static [FieldDef] {
        match self {
            ExperimentKind::IndexBuild => index_build::FIELDS,
            ExperimentKind::Ingest => ingest::FIELDS,
            ExperimentKind::Growth => growth::FIELDS,
        }
    }

    /// The default parameters in text form.
    pub fn defaults(self) -> ParamText {
        self.fields()
            .iter()
            .map(|f| (f.key.to_string(), f.default.to_string()))
            .collect()
    }

    /// Parse text parameters (missing keys take their defaults; unknown keys are errors).
    pub fn parse_spec(self, params: &ParamText) -> Result<ExperimentSpec, FieldErrors> {
        let fields = self.fields();
        let mut errors: FieldErrors = params
            .keys()
            .filter(|k| !fields.iter().any(|f| f.key == k.as_str()))
            .map(|k| {
                (
                    k.clone(),
                    format!(
                        "unknown parameter '{k}' for {} (known: {})",
                        self.as_str(),
                        fields.iter().map(|f| f.key).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
            .collect();
        let mut full = self.defaults();
        full.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        let parsed = match self {
            ExperimentKind::IndexBuild => {
                index_build::IndexBuildSpec::parse(&full).map(ExperimentSpec::IndexBuild)
            }
            ExperimentKind::Ingest => ingest::IngestSpec::parse(&full).map(ExperimentSpec::Ingest),
            ExperimentKind::Growth => growth::GrowthSpec::parse(&full).map(ExperimentSpec::Growth),
        };
        match parsed {
            Ok(spec) if errors.is_empty() => Ok(spec),
            Ok(_) => Err(errors),
            Err(mut e) => {
                errors.append(&mut e);
                Err(errors)
            }
        }
    }
}

impl std::fmt::Display for ExperimentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed, valid experiment specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "experiment", content = "params", rename_all = "kebab-case")]
pub enum ExperimentSpec {
    IndexBuild(index_build::IndexBuildSpec),
    Ingest(ingest::IngestSpec),
    Growth(growth::GrowthSpec),
}

impl ExperimentSpec {
    pub fn kind(&self) -> ExperimentKind {
        match self {
            ExperimentSpec::IndexBuild(_) => ExperimentKind::IndexBuild,
            ExperimentSpec::Ingest(_) => ExperimentKind::Ingest,
            ExperimentSpec::Growth(_) => ExperimentKind::Growth,
        }
    }

    /// What the run will cost, shown before it starts and checked against free space.
    pub fn estimate(&self) -> Cost {
        match self {
            ExperimentSpec::IndexBuild(s) => s.estimate(),
            ExperimentSpec::Ingest(s) => s.estimate(),
            ExperimentSpec::Growth(s) => s.estimate(),
        }
    }

    /// The estimate given the free disk space (None: unknown). growth fills only the steps
    /// that fit and projects the rest, so its cost depends on the space there is.
    pub fn estimate_with_free(&self, free: Option<u64>) -> Cost {
        match self {
            ExperimentSpec::Growth(s) => s.estimate_with_free(s.free_bytes.or(free)),
            _ => self.estimate(),
        }
    }

    /// The text form (for presets, history and "same spec" matching).
    pub fn to_text(&self) -> ParamText {
        match self {
            ExperimentSpec::IndexBuild(s) => s.to_text(),
            ExperimentSpec::Ingest(s) => s.to_text(),
            ExperimentSpec::Growth(s) => s.to_text(),
        }
    }

    /// A stable key for "the same experiment and parameters" (history strip, comparison).
    pub fn spec_key(&self) -> String {
        let text = self.to_text();
        let joined: Vec<String> = text.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}:{}", self.kind().as_str(), joined.join(";"))
    }
}

/// The estimated cost of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub trials: usize,
    pub rows: u64,
    /// Heap bytes of the largest table at once.
    pub table_bytes: u64,
    pub index_bytes: u64,
    /// Sort spill, WAL and other transient space.
    pub temp_bytes: u64,
    pub wal_bytes: u64,
    /// Connections the run holds at its peak (control + progress + clients).
    pub connections: u32,
}

impl Cost {
    /// Disk space needed at the peak.
    pub fn disk_bytes(&self) -> u64 {
        self.table_bytes
            .saturating_add(self.index_bytes)
            .saturating_add(self.temp_bytes)
            .saturating_add(self.wal_bytes)
    }
}

/// Helpers the experiments' `parse` functions share: each returns the value or records a
/// sentence for its field.
pub struct FieldReader<'a> {
    pub params: &'a ParamText,
    pub errors: FieldErrors,
}

impl<'a> FieldReader<'a> {
    pub fn new(params: &'a ParamText) -> Self {
        FieldReader {
            params,
            errors: Vec::new(),
        }
    }

    fn raw(&self, key: &str) -> &str {
        self.params.get(key).map(String::as_str).unwrap_or("")
    }

    /// Parse one field with `f`; on error record it and return `fallback`.
    pub fn get<T>(
        &mut self,
        key: &str,
        fallback: T,
        f: impl FnOnce(&str) -> Result<T, String>,
    ) -> T {
        match f(self.raw(key).trim()) {
            Ok(v) => v,
            Err(e) => {
                self.errors.push((key.to_string(), e));
                fallback
            }
        }
    }

    pub fn count(&mut self, key: &str, min: u64, max: u64) -> u64 {
        self.get(key, min, |s| {
            let n = crate::measure::units::parse_count(s).map_err(|e| e.0)?;
            if n < min {
                return Err(format!("must be at least {min}"));
            }
            if n > max {
                return Err(format!(
                    "must be at most {}",
                    crate::measure::units::format_count(max as f64)
                ));
            }
            Ok(n)
        })
    }

    pub fn count_list(&mut self, key: &str, min: u64, max: u64) -> Vec<u64> {
        self.get(key, vec![min], |s| {
            let v = crate::measure::units::parse_count_list(s).map_err(|e| e.0)?;
            if let Some(bad) = v.iter().find(|n| **n < min || **n > max) {
                return Err(format!("{bad} is out of range ({min}..{max})"));
            }
            Ok(v)
        })
    }

    pub fn choice<T: Copy>(&mut self, key: &str, options: &[(&str, T)]) -> T {
        let first = options[0].1;
        self.get(key, first, |s| {
            options
                .iter()
                .find(|(n, _)| *n == s)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    format!(
                        "'{s}' is not one of {}",
                        options
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
        })
    }

    pub fn bool(&mut self, key: &str) -> bool {
        self.get(key, false, |s| match s {
            "on" | "true" | "yes" | "1" => Ok(true),
            "off" | "false" | "no" | "0" | "" => Ok(false),
            _ => Err(format!("'{s}' is not on/off")),
        })
    }

    pub fn finish<T>(self, value: T) -> Result<T, FieldErrors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(self.errors)
        }
    }
}
