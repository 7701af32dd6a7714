//! Which experiment, with which parameters: the list of experiments, a parsed spec of any of
//! them, and its spec key (built and parsed here). One text form — `key = "value"` pairs, see
//! [`super::field`] — feeds the TUI editor, the command-line flags and preset files alike.

use serde::{Deserialize, Serialize};

use super::field::{Cost, FieldDef, FieldErrors};

use super::experiment::{Experiment, each_kind};
pub(crate) use super::field::ParamText;
use crate::experiment::growth::GrowthSpec;
use crate::experiment::index_build::IndexBuildSpec;
use crate::experiment::ingest::IngestSpec;
use crate::experiment::query::QuerySpec;

/// The three founding experiments and the DBA's own statements (`query`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentKind {
    IndexBuild,
    Ingest,
    Growth,
    Query,
}

impl ExperimentKind {
    pub const ALL: [ExperimentKind; 4] = [
        ExperimentKind::IndexBuild,
        ExperimentKind::Ingest,
        ExperimentKind::Growth,
        ExperimentKind::Query,
    ];

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    pub fn parse(s: &str) -> Option<ExperimentKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn fields(self) -> &'static [FieldDef] {
        self.info().fields
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
        let parsed = (self.info().parse)(&full);
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
    IndexBuild(IndexBuildSpec),
    Ingest(IngestSpec),
    Growth(GrowthSpec),
    Query(Box<QuerySpec>),
}

impl ExperimentSpec {
    pub fn kind(&self) -> ExperimentKind {
        each_kind!(self, s => kind_of(s))
    }

    /// What the run will cost, shown before it starts and checked against free space.
    pub fn estimate(&self) -> Cost {
        each_kind!(self, s => s.estimate())
    }

    /// The estimate given the free disk space (None: unknown). growth fills only the steps
    /// that fit and projects the rest, so its cost depends on the space there is.
    pub fn estimate_with_free(&self, free: Option<u64>) -> Cost {
        each_kind!(self, s => s.estimate_with_free(free))
    }

    /// The run the TUI's `r` starts: one trial, in every experiment the first value of every
    /// list (the swept server settings included: their first combination), once, without
    /// warm-ups (index-build: one `CREATE INDEX`; ingest: one load with the first method,
    /// batch, client count and synchronous_commit; growth: the first design at the first
    /// step; query: the first statement, or the first client count, without candidate
    /// indexes).
    pub fn one_trial(&self) -> ExperimentSpec {
        let mut spec = each_kind!(self, s => s.one_trial().into_spec());
        let mut set = self.settings().clone();
        for item in &mut set.items {
            item.values.truncate(1);
        }
        spec.set_settings(set);
        spec
    }

    /// The confidence and smallest effect the run's verdicts use (with `--repeat auto`, its
    /// looks paid for).
    pub fn rules(&self) -> crate::measure::rules::Rules {
        each_kind!(self, s => s.rules())
    }

    /// The work of each trial relative to the others, in trial order, for a progress
    /// measure; empty when every trial weighs alike. Growth trials fill ever larger steps:
    /// each weighs the versions it adds, so that the first small steps do not set the pace
    /// of the large ones; a point only projected (the target rows, steps past the fill
    /// limit) costs next to nothing.
    pub fn trial_weights(&self) -> Vec<f64> {
        each_kind!(self, s => s.trial_weights())
    }

    /// Seconds each trial spends beyond what its weight's pace says, in trial order (empty:
    /// none): growth's standby fault holds every filled step up for its `for`.
    pub(crate) fn trial_fixed_seconds(&self) -> Vec<f64> {
        each_kind!(self, s => s.trial_fixed_seconds())
    }

    /// The server settings the run sweeps (`--set`).
    pub fn settings(&self) -> &super::whatif::SettingsSweep {
        each_kind!(self, s => s.settings())
    }

    /// The `checkpoint` field: a CHECKPOINT before each trial (see [`super::checkpoint`]).
    pub(crate) fn checkpoint_mode(&self) -> super::checkpoint::CheckpointMode {
        each_kind!(self, s => s.checkpoint_mode())
    }

    /// A query run whose statements run on a standby of the sandbox (`--on-standby`): its
    /// standby-side settings are applied there.
    pub(crate) fn reads_on_standby(&self) -> bool {
        matches!(self, ExperimentSpec::Query(q) if q.on_standby.is_some())
    }

    /// One trial per configuration, as a tune's round runs it; `warmup` adds an untimed
    /// first trial where the kind has one.
    pub(crate) fn one_pass(&mut self, warmup: bool) {
        each_kind!(mut self, s => s.one_pass(warmup))
    }

    /// What a pass of this workload is measured by (a tune's objective).
    pub(crate) fn pass_measure(&self) -> super::kind_report::PassMeasure {
        each_kind!(self, s => s.pass_measure())
    }

    /// Replace the settings sweep (with `all` and `N%ram` written out for this server).
    pub(crate) fn set_settings(&mut self, set: super::whatif::SettingsSweep) {
        each_kind!(mut self, s => *s.settings_mut() = set)
    }

    /// Citus: the columns the run distributes its tables by (empty: plain tables only).
    pub(crate) fn distributed_columns(&self) -> Vec<String> {
        each_kind!(self, s => s.distributed_columns())
    }

    /// The text form (for presets, history and "same spec" matching).
    pub fn to_text(&self) -> ParamText {
        each_kind!(self, s => Experiment::to_text(s))
    }

    /// A stable key for "the same experiment and parameters" (history strip, comparison).
    pub fn spec_key(&self) -> String {
        let text = self.to_text();
        let joined: Vec<String> = text
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_value(v)))
            .collect();
        format!("{}:{}", self.kind().as_str(), joined.join(";"))
    }

    /// Whether a run needs the lab schema on a server pglab did not start: a kind that always
    /// writes there makes its own tables in it; a query writes nothing there, or (asked to)
    /// only temporary tables on its measuring session.
    pub(crate) fn writes_on_foreign_servers(&self) -> bool {
        each_kind!(self, s => s.foreign_writes()) == super::preflight::ForeignWrites::Always
    }

    /// The statement timeout a run of this experiment gets when none is given.
    pub fn default_statement_timeout(&self) -> Option<std::time::Duration> {
        each_kind!(self, s => s.default_statement_timeout())
    }
}

/// The kind of a spec, from the trait its type implements.
fn kind_of<K: Experiment>(_: &K) -> ExperimentKind {
    K::KIND
}

/// A value in a spec key: `\` and `;` escaped (SQL holds both), everything else as is, so
/// keys of values without them read as they always did.
fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\").replace(';', "\\;")
}

/// The parameters a [`ExperimentSpec::spec_key`] was built from (the other half of it).
pub(crate) fn spec_params(spec_key: &str) -> ParamText {
    let Some((_, rest)) = spec_key.split_once(':') else {
        return ParamText::new();
    };
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            ';' => items.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    items.push(cur);
    items
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
/// A spec of `kind` from these fields and the defaults of the rest (tests; panics on a bad
/// field).
#[cfg(any(test, feature = "fixtures"))]
pub(crate) fn spec_of(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
    let p: ParamText = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    kind.parse_spec(&p).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: ExperimentKind, pairs: &[(&str, &str)]) -> ExperimentSpec {
        spec_of(kind, pairs)
    }

    #[test]
    fn projected_growth_points_weigh_nothing_in_the_progress() {
        let s = spec(
            ExperimentKind::Growth,
            &[
                ("steps", "0,10,100"),
                ("design", "snapshot,ranges"),
                ("target-rows", "1e9"),
            ],
        );
        assert_eq!(
            s.trial_weights(),
            [1.0, 1.0, 10.0, 10.0, 90.0, 90.0, 1.0, 1.0]
        );
    }

    /// `r` is one trial at the first combination of the swept settings, not one per
    /// combination (two trials and two restarts for `shared_buffers=128MB,25%ram`).
    #[test]
    fn one_trial_takes_the_first_value_of_every_list_and_of_the_settings() {
        for kind in ExperimentKind::ALL {
            let mut pairs = vec![("set", "shared_buffers=128MB,25%ram commit_delay=0,10")];
            if kind == ExperimentKind::Query {
                pairs.extend([
                    ("sql", "SELECT 1;\nSELECT 2"),
                    ("index", "CREATE INDEX ON t (a)"),
                ]);
            }
            let s = spec(kind, &pairs);
            assert_eq!(s.settings().combo_count(), 4);
            assert!(s.estimate().trials > 1, "{kind}");
            let one = s.one_trial();
            assert_eq!(
                one.settings().text(),
                "shared_buffers=128MB commit_delay=0",
                "{kind}"
            );
            assert_eq!(one.settings().combo_count(), 1);
            // Growth measures a step per design: one design, one step, one sample.
            let trials = match &one {
                ExperimentSpec::Growth(g) => g.samples(),
                _ => one.estimate().trials,
            };
            assert_eq!(trials, 1, "{kind}: {one:?}");
        }
    }
}
