//! What a tune has learnt so far, saved after every round so that Ctrl-C (or a killed
//! pglab) keeps it: `pglab tune --resume` goes on from the saved state. One JSON file in the
//! data dir, written atomically (temp file + rename), removed when a tune completes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::budget::Pace;
use super::candidates::Hardware;
use super::confirm::Confirm;
use super::decide::Decision;
use super::phase::TunePhase;
use crate::experiment::ExperimentSpec;
use crate::experiment::lab::whatif::Apply;

/// Bumped when the file's meaning changes; an older file is refused with a sentence, but a
/// file of version 2 is read ([`super::state_v2`]). 3: the phase is one value ([`TunePhase`]),
/// not a screening, a race, a confirmation and a flag side by side.
pub(crate) const STATE_VERSION: u32 = 3;

/// One setting of the search and the values it races.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingPlan {
    pub name: String,
    pub apply: Apply,
    /// (value, origin): the current value first.
    pub candidates: Vec<(String, String)>,
}

/// One configuration tried, for the search path chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathPoint {
    /// `max_wal_size=4GB` (the raced setting's value; the carried ones are in `carried`).
    pub label: String,
    pub setting: String,
    /// The settings already decided and carried into this race.
    pub carried: Vec<(String, String)>,
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
    pub trials: usize,
    pub dropped: bool,
}

/// The saved state of a tune.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneState {
    pub version: u32,
    /// Names the tune in the history (every round's record carries it): when it started.
    #[serde(default = "new_id")]
    pub id: String,
    /// The workload as given (`ingest`, a preset name, a file).
    pub workload: String,
    /// The workload as it runs (parameters included, settings sweep empty).
    pub spec: ExperimentSpec,
    /// The target, `user@host:port/db`.
    pub target: String,
    pub on_sandbox: bool,
    pub budget_s: f64,
    pub spent_s: f64,
    pub hardware: Hardware,
    /// pgtune's values for this host ("mixed" profile).
    pub pgtune: Vec<(String, String)>,
    /// pgtune's set as this server can take it: measured in the confirmation.
    #[serde(default)]
    pub formula: Vec<(String, String)>,
    /// The server's memory settings when the tune began, for the worst-case line.
    #[serde(default)]
    pub memory: super::memory::ServerMemory,
    /// The most memory-taking nodes seen in one plan of the workload (query workloads).
    #[serde(default)]
    pub plan_nodes: Option<super::memory::MemoryNodes>,
    /// `--max-memory`: a set whose worst case is past it is not recommended.
    #[serde(default)]
    pub max_memory: Option<u64>,
    /// The settings in search order.
    pub plan: Vec<SettingPlan>,
    /// Settings decided, in order.
    pub decisions: Vec<Decision>,
    /// Where the tune is: plans, screening, racing, confirming, done.
    pub phase: TunePhase,
    /// The screening's results once it ended (None: no screening, or not ended yet).
    #[serde(default)]
    pub screen: Option<super::screen::Screen>,
    pub pace: Pace,
    /// What the plans read before the first pass showed, and what the tune made of it.
    #[serde(default)]
    pub plans: Option<super::plan_phase::PlanReading>,
    /// The settings were named with `--settings` (not `auto`): the plans size and prune
    /// their values but measure every one of them.
    #[serde(default)]
    pub named: bool,
    /// The cache between rounds, and the warm-ups and restarts the rounds paid.
    #[serde(default)]
    pub cache: super::warm::Cache,
    pub path: Vec<PathPoint>,
    /// Passes of the workload run so far (each a trial of a configuration of the tune).
    pub trials: usize,
    /// The experiments' own trials (a pass holds one per configuration of the workload).
    #[serde(default)]
    pub experiment_trials: usize,
    /// The sampled tables the workload read (the runs' `data:` notes), for the caveat on
    /// memory settings ([`super::sampled`]).
    #[serde(default)]
    pub sampled: Vec<String>,
    /// Run ids of every round, as the history has them.
    pub runs: Vec<String>,
    /// Sentences for the report (settings left out and why, …).
    pub notes: Vec<String>,
    /// Where it is measured, for the script's "measured on" line.
    pub measured_on: super::output::MeasuredOn,
}

/// A tune's id: `tune-20261204-183012`, from the clock (a state saved before ids existed
/// gets one when it is resumed).
pub(crate) fn new_id() -> String {
    format!("tune-{}", chrono::Utc::now().format("%Y%m%d-%H%M%S"))
}

impl TuneState {
    /// The decided settings whose value changed: what the next races carry.
    pub(crate) fn carried(&self) -> Vec<(String, String)> {
        self.decisions
            .iter()
            .filter(|d| d.value != d.start)
            .map(|d| (d.setting.clone(), d.value.clone()))
            .collect()
    }

    /// Configurations the confirmation will measure a round: the start and the tuned set, and
    /// pgtune's set when there is one.
    pub(crate) fn confirm_sides(&self) -> usize {
        2 + usize::from(!self.formula.is_empty())
    }

    /// The setting to race next (None: every setting decided).
    pub(crate) fn next_setting(&self) -> Option<&SettingPlan> {
        if self.decisions.len() >= self.raced_settings() {
            return None;
        }
        self.plan.get(self.decisions.len())
    }

    /// The settings to race: the ones the screening sent on (they lead the plan once it is
    /// done), or every setting of the plan without a screening.
    pub(crate) fn raced_settings(&self) -> usize {
        match &self.screen {
            Some(s) => s.moved().len(),
            None => self.plan.len(),
        }
    }

    /// The pairs that race as one ([`super::pair`]): both moved in the screening.
    fn joint_pairs(&self) -> usize {
        let Some(s) = &self.screen else {
            return 0;
        };
        let moved = s.moved();
        super::screen::PAIRS
            .iter()
            .filter(|(a, b)| moved.contains(a) && moved.contains(b))
            .count()
    }

    /// The races of the tune (a pair racing as one counts once): the family its error is
    /// split over.
    pub(crate) fn races(&self) -> usize {
        self.raced_settings() - self.joint_pairs()
    }

    /// Settings whose race is still to come.
    pub(crate) fn races_left(&self) -> usize {
        self.raced_settings().saturating_sub(self.decisions.len())
    }

    /// Whether a round of `passes` passes and the shortest confirmation still fit in what is
    /// left of `budget`, at the pace so far (a first round always does).
    pub(crate) fn round_fits(&self, passes: usize, budget: &super::budget::Budget) -> bool {
        let reserve = self
            .pace
            .estimate(self.confirm_sides() * super::confirm::MIN_ROUNDS)
            .unwrap_or_default();
        let fits = self
            .pace
            .estimate(passes)
            .is_none_or(|round| round + reserve <= budget.remaining());
        fits && !budget.is_out()
    }

    /// The confirmation, under way or ended (None before it).
    pub(crate) fn confirmation(&self) -> Option<&Confirm> {
        self.phase.confirmation()
    }

    /// Searched and confirmed.
    pub(crate) fn is_done(&self) -> bool {
        self.phase.is_done()
    }

    /// After the screening: the plan in race order, the settings that moved first, largest
    /// effect first, then the others in their order.
    pub(crate) fn order_by_screen(&mut self) {
        let Some(s) = &self.screen else { return };
        let moved = s.moved();
        let rank = |name: &str| moved.iter().position(|m| *m == name).unwrap_or(usize::MAX);
        self.plan.sort_by_key(|p| rank(&p.name));
        // A pair that races as one stands together, where its first member ranks.
        for (a, b) in super::screen::PAIRS {
            if !(moved.contains(&a) && moved.contains(&b)) {
                continue;
            }
            let at = |n: &str| self.plan.iter().position(|p| p.name == n);
            let (Some(i), Some(j)) = (at(a), at(b)) else {
                continue;
            };
            let second = self.plan.remove(i.max(j));
            self.plan.insert(i.min(j) + 1, second);
        }
    }
}

/// Where the state lives: `tune-state.json` in the data dir.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("tune-state.json")
}

pub(crate) fn save(file: &Path, state: &TuneState) -> Result<(), String> {
    let text = serde_json::to_vec_pretty(state).map_err(|e| e.to_string())?;
    crate::paths::write_private(file, &text)
        .map_err(|e| format!("cannot save the tune's state to {}: {e}", file.display()))
}

/// The saved state (None: there is none).
pub fn load(file: &Path) -> Result<Option<TuneState>, String> {
    let text = match std::fs::read(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let unreadable = |e: serde_json::Error| {
        format!(
            "{} is not a tune state pglab can read ({e}); remove it to start afresh",
            file.display()
        )
    };
    // The version first: another version's fields need not parse as this one's.
    let saved: Saved = serde_json::from_slice(&text).map_err(unreadable)?;
    let state = match saved.version {
        STATE_VERSION => serde_json::from_slice(&text),
        2 => super::state_v2::read(&text),
        _ => {
            return Err(format!(
                "{} was saved by another pglab version; remove it to start afresh",
                file.display()
            ));
        }
    };
    state.map(Some).map_err(unreadable)
}

/// What every version of the file has.
#[derive(Deserialize)]
struct Saved {
    version: u32,
}

pub(crate) fn remove(file: &Path) {
    std::fs::remove_file(file).ok();
}
