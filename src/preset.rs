//! Presets (temporary contract; the presets branch replaces this file).
use crate::experiment::{ExperimentKind, ParamText};
use crate::paths::Paths;
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub experiment: ExperimentKind,
    pub params: ParamText,
    pub source: Option<String>,
}
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PresetError(pub String);
pub fn load(_paths: &Paths, name: &str) -> Result<Preset, PresetError> {
    Err(PresetError(format!("no preset named '{name}'")))
}
