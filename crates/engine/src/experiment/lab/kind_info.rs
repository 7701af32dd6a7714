//! What the lab, the history, the tune and the front ends know of a kind before it runs: its
//! name and one-line description, its parameters, which of them a comparison matches
//! setting by setting, which server settings it sets itself, and what a tune searches for it.
//! Each kind declares its [`KindInfo`] once, beside its spec (`Experiment::INFO`);
//! [`ExperimentKind::info`] is the one arm that picks it.

use super::field::{FieldDef, FieldErrors, ParamText};
use super::spec::{ExperimentKind, ExperimentSpec};

/// A kind's declaration.
#[derive(Debug)]
pub struct KindInfo {
    /// Its name on the command line, in presets and in the history ("index-build").
    pub name: &'static str,
    /// One line saying what it measures (its subcommand's help).
    pub about: &'static str,
    /// The heading of its parameters in the help ("index-build parameters").
    pub heading: &'static str,
    /// Its parameters, as the TUI editor, the command-line flags and preset files know them.
    pub fields: &'static [FieldDef],
    /// A spec from text parameters, every field present (the defaults filled in).
    pub parse: fn(&ParamText) -> Result<ExperimentSpec, FieldErrors>,
    /// The parameters it sweeps: a comparison of two runs matches them setting by setting.
    pub swept: &'static [&'static str],
    /// Parameters that change how a run went, not what it measured.
    pub procedural: &'static [&'static str],
    /// Server settings the kind sets in its own sessions, each with the parameter that sets
    /// it: the server's default does not reach the measurement, and a tune leaves them to
    /// the parameter.
    pub own_settings: &'static [(&'static str, &'static str)],
    /// The server settings a tune searches (`--settings auto`), most likely to matter first.
    pub tune_settings: &'static [&'static str],
    /// Whether the settings that trade durability for speed are tune candidates (a kind that
    /// commits nothing gains nothing from them).
    pub commits: bool,
}

impl ExperimentKind {
    /// This kind's declaration: the one place a kind is matched to its spec type.
    pub fn info(self) -> &'static KindInfo {
        use super::experiment::Experiment;
        use crate::experiment::{
            growth::GrowthSpec, index_build::IndexBuildSpec, ingest::IngestSpec, query::QuerySpec,
        };
        match self {
            ExperimentKind::IndexBuild => &IndexBuildSpec::INFO,
            ExperimentKind::Ingest => &IngestSpec::INFO,
            ExperimentKind::Growth => &GrowthSpec::INFO,
            ExperimentKind::Query => &QuerySpec::INFO,
        }
    }
}

/// `KindInfo::parse` for a kind's spec type.
pub(crate) fn parse_as<K: super::experiment::Experiment>(
    full: &ParamText,
) -> Result<ExperimentSpec, FieldErrors> {
    K::parse(full).map(K::into_spec)
}
