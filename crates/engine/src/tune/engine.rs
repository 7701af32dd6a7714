//! A tune's run: its phases one after the other ([`TunePhase`]: the plans, the screening, the
//! races, the confirmation), the events it tells its front end, and what every phase's rounds
//! share (one run of the workload, the state saved after it). The state is saved after every
//! round, so a cancelled tune resumes where it stopped.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::confirm::Confirm;
use super::decide::Decision;
use super::phase::TunePhase;
use super::race::Race;
use super::rounds::{self, Round, Stop};
use super::state::{self, TuneState};
use crate::experiment::lab::whatif::Apply;
use crate::experiment::{RunEvent, RunOptions};
use crate::measure::rules::Rules;
use crate::server::Target;

/// What a tune tells its front end as it goes.
#[derive(Debug, Clone)]
pub enum TuneEvent {
    Note(String),
    /// What the running trial is doing, in a line.
    Progress(String),
    /// A round is starting: the setting, the round (1-based), the values in the order they run.
    Round {
        setting: String,
        round: usize,
        order: Vec<String>,
    },
    /// The race after a round (its candidates, trials, dropped values).
    Race(Race),
    /// The screening after a round, and once it is done (its effects ranked).
    Screen(super::screen::Screen),
    Dropped {
        setting: String,
        value: String,
        sentence: String,
    },
    Decided(Decision),
    /// The confirmation after a round.
    Confirm(Box<Confirm>),
    Budget {
        spent_s: f64,
        total_s: f64,
    },
}

/// How a tune ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Searched and confirmed (or nothing to confirm).
    Done,
    /// The user stopped it; `--resume` goes on.
    Cancelled,
    Failed(String),
}

/// Everything a tune needs besides its state.
pub struct Tuner {
    pub target: Arc<Target>,
    /// The options of every round's run (history, schema, sandbox, …).
    pub run: RunOptions,
    pub rules: Rules,
    pub state_file: PathBuf,
    pub events: UnboundedSender<TuneEvent>,
}

impl Tuner {
    pub(super) fn emit(&self, ev: TuneEvent) {
        let _ = self.events.send(ev);
    }

    pub(super) fn save(&self, st: &mut TuneState, budget: &Budget) {
        st.spent_s = budget.spent().as_secs_f64();
        if let Err(e) = state::save(&self.state_file, st) {
            self.emit(TuneEvent::Note(e));
        }
        self.emit(TuneEvent::Budget {
            spent_s: st.spent_s,
            total_s: st.budget_s,
        });
    }

    /// Run the tune from `st`, phase after phase ([`TunePhase`]), until it is done, cancelled
    /// or failed; the budget's end leads to the confirmation (or the end) like a finished
    /// search. Each phase's run returns None once it has moved the state to the next phase.
    pub(crate) async fn run(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> End {
        loop {
            let end = match &st.phase {
                TunePhase::Plans => {
                    let end = match self.read_plans(st, budget, cancel).await {
                        Ok(next) => {
                            st.phase = next;
                            None
                        }
                        Err(end) => Some(end),
                    };
                    self.save(st, budget);
                    end
                }
                TunePhase::Screening(_) => self.screen(st, budget, cancel).await,
                TunePhase::Racing(_) => self.race(st, budget, cancel).await,
                TunePhase::Confirming(c) => {
                    let c = (**c).clone();
                    let end = self.confirm(st, c, budget, cancel).await;
                    self.say_cost(st);
                    Some(end)
                }
                TunePhase::Done(_) => Some(End::Done),
            };
            if let Some(end) = end {
                return end;
            }
        }
    }

    /// What the tune spent: passes, warm-ups, restarts.
    fn say_cost(&self, st: &TuneState) {
        self.emit(TuneEvent::Note(format!(
            "{} passes of the workload, each one configuration; {}",
            st.trials,
            st.cache.sentence()
        )));
    }

    pub(super) fn uses_restart(&self, st: &TuneState, names: &[&str]) -> bool {
        st.plan
            .iter()
            .any(|p| p.apply == Apply::Restart && names.contains(&p.name.as_str()))
    }

    /// Run each of `values` of `setting` alone (with the carried settings): the ones that fail,
    /// each with the server's reason.
    pub(super) async fn failing_alone(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
        setting: &str,
        values: &[String],
    ) -> Result<Vec<(String, String)>, Stop> {
        let carried = st.carried();
        let mut failing = Vec::new();
        for value in values {
            let one = std::slice::from_ref(value);
            let spec = rounds::round_spec(&st.spec, &carried, Some((setting, one)), false);
            match self.one_run(st, spec, budget, cancel).await {
                Ok(_) => {}
                Err(Stop::Failed(why)) => failing.push((value.clone(), why)),
                Err(other) => return Err(other),
            }
        }
        Ok(failing)
    }

    /// One run of the workload; its pace, trials and run id go into the state.
    pub(super) async fn one_run(
        &self,
        st: &mut TuneState,
        spec: crate::experiment::ExperimentSpec,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<Round, Stop> {
        let events = self.events.clone();
        let mut spec = spec;
        st.cache.keep(&mut spec);
        let round = rounds::run(
            self.target.clone(),
            spec,
            RunOptions {
                tune: Some(crate::experiment::lab::record::TuneRef {
                    id: st.id.clone(),
                    workload: st.workload.clone(),
                }),
                ..self.run.clone()
            },
            budget.deadline(),
            cancel,
            |ev| {
                if let Some(line) = progress_line(ev) {
                    let _ = events.send(TuneEvent::Progress(line));
                }
            },
        )
        .await?;
        st.trials += round.passes;
        st.experiment_trials += round.trials;
        st.pace.record(round.wall_s, round.passes, round.work_s);
        let per_combo: Vec<_> = round.statements.values().cloned().collect();
        st.cache.after(round.warmth, &per_combo);
        st.runs.push(round.run_id.clone());
        if let Some(n) = round.nodes {
            st.plan_nodes = Some(st.plan_nodes.map_or(n, |m| m.max(n)));
        }
        super::sampled::record(&mut st.sampled, &round.notes);
        // The run's own findings are about one trial per value; only its troubles are news.
        for n in round.notes.iter().filter(|n| n.contains("failed")) {
            self.emit(TuneEvent::Note(n.clone()));
        }
        Ok(round)
    }

    /// The rules of each race: the tune's error split over its races
    /// ([`super::family::race_rules`]).
    pub(super) fn race_rules(&self, st: &TuneState) -> Rules {
        super::family::race_rules(&self.rules, st.races())
    }
}

/// A line for the running trial: its phase and progress.
fn progress_line(ev: &RunEvent) -> Option<String> {
    match ev {
        RunEvent::Phase { trial, phase } => Some(match trial {
            Some(t) => format!("[{}/{}] {} · {phase}", t.index, t.total, t.label),
            None => phase.clone(),
        }),
        _ => None,
    }
}
