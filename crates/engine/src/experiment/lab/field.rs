//! The field machinery every experiment's parameters are built from: the text form
//! (`key = "value"` pairs), field definitions for the editor and the flags, the reader that
//! parses each field with one sentence per error, and the cost estimate. A leaf module: the
//! experiments import it; it imports none of them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    /// `5%`.
    Percent,
    /// Server settings to sweep: `name=v1,v2 other=v3` (`--set`, repeatable).
    Settings,
    /// SQL statements (`--sql`, `--index`; repeatable: the flags' values are joined with `;`).
    Sql,
    /// Free text checked by the experiment (a table name, column names, a file name, SQL or
    /// `@FILE`).
    Text,
    /// Names, a comma list (`--allow-function`; repeatable: the flags' values are joined
    /// with `,`).
    Names,
}

/// One editable parameter of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// The field's one name: the key in presets, the long flag (`--mwm`), the editor's label
    /// and the prefix of its errors.
    pub key: &'static str,
    pub help: &'static str,
    pub default: &'static str,
    pub kind: FieldKind,
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
    /// Rows one trial works on (index-build: the table an index is built on; ingest: the
    /// rows one trial loads); 0 when trials differ (growth: `rows` is what the table grows to).
    #[serde(default)]
    pub trial_rows: u64,
    /// A trial stops after this long even when rows remain (ingest's `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_cap_s: Option<f64>,
}

impl Cost {
    /// What the run will do and hold, for the line shown before it starts: "50 trials × 1M
    /// rows", "tables 71 MB", "disk ≈ 172 MB". Never the total rows beside one trial's table;
    /// only the trials when the rows and sizes are unknown (query).
    pub fn items(&self) -> Vec<String> {
        use crate::measure::units::{format_bytes, format_count, format_seconds};
        let trials = format!(
            "{} trial{}",
            self.trials,
            if self.trials == 1 { "" } else { "s" }
        );
        // What the experiment cannot know before it runs (query: the DBA's own data) is
        // left out rather than said to be 0.
        if self.rows == 0 && self.trial_rows == 0 && self.disk_bytes() == 0 {
            return vec![trials];
        }
        let work = match (self.trial_rows, self.trial_cap_s) {
            (0, _) => format!("{trials} · up to {} rows", format_count(self.rows as f64)),
            (r, None) => format!("{trials} × {} rows", format_count(r as f64)),
            (r, Some(cap)) => format!(
                "{trials} × {} rows or {} each",
                format_count(r as f64),
                format_seconds(cap)
            ),
        };
        vec![
            work,
            format!("tables {}", format_bytes(self.table_bytes)),
            format!("disk ≈ {}", format_bytes(self.disk_bytes())),
        ]
    }

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
pub(crate) struct FieldReader<'a> {
    pub params: &'a ParamText,
    pub errors: FieldErrors,
}

impl<'a> FieldReader<'a> {
    pub(crate) fn new(params: &'a ParamText) -> Self {
        FieldReader {
            params,
            errors: Vec::new(),
        }
    }

    fn raw(&self, key: &str) -> &str {
        self.params.get(key).map(String::as_str).unwrap_or("")
    }

    /// Parse one field with `f`; on error record it and return `fallback`.
    pub(crate) fn get<T>(
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

    pub(crate) fn count(&mut self, key: &str, min: u64, max: u64) -> u64 {
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

    pub(crate) fn count_list(&mut self, key: &str, min: u64, max: u64) -> Vec<u64> {
        self.get(key, vec![min], |s| {
            let v = crate::measure::units::parse_count_list(s).map_err(|e| e.0)?;
            if let Some(bad) = v.iter().find(|n| **n < min || **n > max) {
                return Err(format!("{bad} is out of range ({min}..{max})"));
            }
            Ok(v)
        })
    }

    pub(crate) fn choice<T: Copy>(&mut self, key: &str, options: &[(&str, T)]) -> T {
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

    /// A whole number of any size (`seed`); on error `fallback`.
    pub(crate) fn whole(&mut self, key: &str, fallback: u64) -> u64 {
        self.get(key, fallback, |s| {
            s.parse::<u64>()
                .map_err(|_| format!("'{s}' is not a whole number"))
        })
    }

    pub(crate) fn bool(&mut self, key: &str) -> bool {
        self.get(key, false, |s| match s {
            "on" | "true" | "yes" | "1" => Ok(true),
            "off" | "false" | "no" | "0" | "" => Ok(false),
            _ => Err(format!("'{s}' is not on/off")),
        })
    }

    pub(crate) fn finish<T>(self, value: T) -> Result<T, FieldErrors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(self.errors)
        }
    }
}
