//! Where a tune is, as one value saved with its state: reading the plans, screening, racing,
//! confirming, or done. Each phase holds the data only it has (the screening under way, the
//! race under way and its share of the budget, the confirmation); what outlives a phase is
//! kept in the state itself (the screening's results, the decisions, the search path).
//! The engine runs the phase the state is in until it moves to the next
//! ([`super::engine::Tuner::run`]); a resumed tune goes on in the phase it was saved in.

use serde::{Deserialize, Serialize};

use super::confirm::Confirm;
use super::race::Race;
use super::screen::Screen;
use super::state::SettingPlan;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TunePhase {
    /// A query workload on the sandbox: one pass at the starting configuration reads the
    /// statements' plans before anything else ([`super::plan_phase`]).
    Plans,
    /// The screening's rounds ([`super::screening`]); once it ends, its results are the
    /// state's `screen` and the races begin.
    Screening(Screen),
    /// The races, one setting (or pair) after another: the race under way, None between two.
    Racing(Option<Box<RaceUnderWay>>),
    /// The tuned set measured against the start ([`super::confirming`]).
    Confirming(Box<Confirm>),
    /// Searched and confirmed: the confirmation (None: there was nothing to confirm).
    Done(Option<Box<Confirm>>),
}

/// The race under way and the share of the budget it may take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceUnderWay {
    pub race: Race,
    /// When it started (budget seconds spent).
    pub started_s: f64,
    /// The share of the budget it may take (seconds).
    pub share_s: f64,
}

impl TunePhase {
    /// The search of `plan` as it begins after the plans (or without them): a screening of
    /// two settings or more, else the races.
    pub(crate) fn search(plan: &[SettingPlan]) -> TunePhase {
        if plan.len() >= 2 {
            TunePhase::Screening(Screen::new(plan))
        } else {
            TunePhase::Racing(None)
        }
    }

    /// The tune's confirmation, under way or ended.
    pub(crate) fn confirmation(&self) -> Option<&Confirm> {
        match self {
            TunePhase::Confirming(c) | TunePhase::Done(Some(c)) => Some(c),
            _ => None,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self, TunePhase::Done(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::whatif::Apply;

    fn setting(name: &str) -> SettingPlan {
        SettingPlan {
            name: name.into(),
            apply: Apply::Reload,
            candidates: vec![
                ("4MB".into(), "current".into()),
                ("64MB".into(), "x".into()),
            ],
        }
    }

    #[test]
    fn two_settings_are_screened_first_one_is_raced_at_once() {
        let two = [setting("work_mem"), setting("random_page_cost")];
        assert!(matches!(TunePhase::search(&two), TunePhase::Screening(s) if !s.done));
        assert_eq!(TunePhase::search(&two[..1]), TunePhase::Racing(None));
        assert_eq!(TunePhase::search(&[]), TunePhase::Racing(None));
    }

    #[test]
    fn the_phase_is_saved_by_its_name() {
        for (phase, text) in [
            (TunePhase::Plans, "\"plans\""),
            (TunePhase::Racing(None), "{\"racing\":null}"),
            (TunePhase::Done(None), "{\"done\":null}"),
        ] {
            assert_eq!(serde_json::to_string(&phase).unwrap(), text);
            assert_eq!(serde_json::from_str::<TunePhase>(text).unwrap(), phase);
        }
    }
}
