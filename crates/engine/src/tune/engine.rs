//! The search: setting by setting, race the candidate values (see [`super::race`]), carry the
//! value each race shows into the next, stop when the budget would not hold another round and
//! the confirmation, then confirm the tuned set against the starting configuration. The state
//! is saved after every round, so a cancelled tune resumes where it stopped.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::confirm::{self, Confirm};
use super::decide::{Decision, Why};
use super::looks;
use super::objective::Objective;
use super::race::Race;
use super::rounds::{self, Round, Stop};
use super::state::{self, PathPoint, TuneState};
use crate::experiment::lab::whatif::Apply;
use crate::experiment::{RunEvent, RunOptions};
use crate::measure::interval::estimate;
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

    /// Run the tune from `st` until it is done, cancelled or failed; the budget's end leads to
    /// the confirmation (or the end) like a finished search.
    pub async fn run(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> End {
        if let Some(end) = self.before_races(st, budget, cancel).await {
            return end;
        }
        let obj = Objective::of(&st.spec);
        let rules = self.race_rules(st);
        while st.confirm.is_none() {
            if cancel.is_cancelled() {
                self.save(st, budget);
                return End::Cancelled;
            }
            if st.race.is_none() {
                let Some(p) = st.next_setting() else {
                    self.close_rest(st, None);
                    self.note_search_ended(st, budget);
                    break;
                };
                let single = Race::new(&p.name, p.candidates.clone());
                let race = super::pair::race_for(st, obj.better).unwrap_or(single);
                // Each setting left gets an equal share of what the confirmation leaves (a
                // pair's race the shares of both).
                let members = super::pair::names(&race.setting).len();
                st.race = Some(race);
                let reserve = st
                    .pace
                    .estimate(st.confirm_sides() * confirm::ROUNDS)
                    .unwrap_or_default();
                let left = st.races_left().max(members);
                st.race_started_s = budget.spent().as_secs_f64();
                st.race_share_s = budget.remaining().saturating_sub(reserve).as_secs_f64()
                    * members as f64
                    / left as f64;
            }
            let used = budget.spent().as_secs_f64() - st.race_started_s;
            let next = looks::next_round_s(st, used);
            // Before the first look: plan the looks the race's share affords at the pace so
            // far (the race's error is split evenly over them).
            if let Some(race) = st.race.as_mut()
                && race.planned_looks == 0
                && race.looks == 0
                && race.rounds + 1 >= looks::FIRST_LOOK
                && next > 0.0
            {
                let left = (st.race_share_s - used).max(0.0);
                let rounds = race.rounds + (left / next).floor() as usize;
                race.plan_looks(rules.confidence, rounds);
            }
            let race = st.race.as_ref().expect("a race");
            let over_share = race.rounds >= looks::FIRST_LOOK
                && st.races_left() > 1
                && used + next > st.race_share_s;
            if over_share || race.settled(obj.better, &rules) {
                self.decide(st);
                self.save(st, budget);
                continue;
            }
            // A pair's round runs its whole grid (a product), dropped values too.
            let alive = if super::pair::is_pair(race) {
                race.candidates.len()
            } else {
                race.alive().count()
            };
            if !st.round_fits(alive, budget) {
                self.stop_search(st, "the budget holds no further round and the confirmation");
                self.save(st, budget);
                break;
            }
            match self.race_round(st, budget, cancel).await {
                Ok(()) => self.save(st, budget),
                Err(Stop::BudgetOut) => {
                    self.stop_search(st, "the budget ran out during a round");
                    self.save(st, budget);
                    break;
                }
                Err(Stop::Cancelled) => {
                    self.save(st, budget);
                    return End::Cancelled;
                }
                Err(Stop::Failed(e)) => {
                    self.save(st, budget);
                    return End::Failed(e);
                }
            }
        }
        let end = self.confirm(st, budget, cancel).await;
        self.say_cost(st);
        end
    }

    /// The plans (query workloads), then the screening: Some when the tune ends there.
    async fn before_races(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Option<End> {
        if let Some(end) = self.read_plans(st, budget, cancel).await {
            self.save(st, budget);
            return Some(end);
        }
        self.screen(st, budget, cancel).await
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

    async fn race_round(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
        let race = st.race.as_ref().expect("a race");
        let setting = race.setting.clone();
        let pair = super::pair::is_pair(race);
        let carried = st.carried();
        let raced = super::pair::names(&setting);
        let mut names: Vec<&str> = carried.iter().map(|(n, _)| n.as_str()).collect();
        names.extend(raced.iter().map(String::as_str));
        let warmup = self.uses_restart(st, &names);
        // A pair's round is the product of its two settings' values; a setting's, its values.
        let (spec, order) = if pair {
            let (axes, labels) = super::pair::round(race);
            (
                rounds::group_spec(&st.spec, &carried, &axes, warmup),
                labels,
            )
        } else {
            let order = race.next_order();
            let one = Some((setting.as_str(), order.as_slice()));
            (rounds::round_spec(&st.spec, &carried, one, warmup), order)
        };
        let round_no = race.rounds + 1;
        self.emit(TuneEvent::Round {
            setting: setting.clone(),
            round: round_no,
            order: order.clone(),
        });
        let round = match self.one_run(st, spec, budget, cancel).await {
            Err(Stop::Failed(e)) if order.len() > 1 && !pair => {
                return self
                    .drop_failing(st, budget, cancel, &setting, &order, e)
                    .await;
            }
            other => other?,
        };
        let measures: Vec<(String, f64)> = order
            .iter()
            .enumerate()
            .filter_map(|(i, v)| round.measures.get(&i).map(|m| (v.clone(), *m)))
            .collect();
        if measures.len() < order.len() {
            return Err(Stop::Failed(format!(
                "round {round_no} of {setting} measured {} of its {} values",
                measures.len(),
                order.len()
            )));
        }
        let obj = Objective::of(&st.spec);
        st.race.as_mut().expect("a race").add_round(&measures);
        let rules = self.race_rules(st);
        let race = st.race.as_mut().expect("a race");
        for v in race.look(obj.better, &rules) {
            let c = race.candidates.iter().find(|c| c.value == v);
            let sentence = c
                .and_then(|c| c.dropped.as_ref())
                .map(|d| {
                    format!(
                        "{setting}={v} dropped after round {}: {} than {setting}={} ({}, {:.2}%-confidence interval {}…{}, family-wise and sequentially corrected)",
                        d.round,
                        d.comparison.verdict,
                        d.against,
                        super::output::ratio_text(d.comparison.ratio),
                        d.confidence * 100.0,
                        super::output::ratio_text(d.comparison.ratio_low),
                        super::output::ratio_text(d.comparison.ratio_high),
                    )
                })
                .unwrap_or_default();
            self.emit(TuneEvent::Dropped {
                setting: setting.clone(),
                value: v,
                sentence,
            });
        }
        self.emit(TuneEvent::Race(race.clone()));
        Ok(())
    }

    /// A round failed: run each of its values alone to find the ones that fail (a
    /// `shared_buffers` the server cannot start with, a value this server refuses), drop them
    /// with the server's reason, and go on with the others. The failed round's measures are
    /// not used. When no value fails alone, or every one does, the failure is the workload's
    /// and ends the tune as before.
    async fn drop_failing(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
        setting: &str,
        order: &[String],
        error: String,
    ) -> Result<(), Stop> {
        let failing = self
            .failing_alone(st, budget, cancel, setting, order)
            .await?;
        if failing.is_empty() || failing.len() == order.len() {
            return Err(Stop::Failed(error));
        }
        let race = st.race.as_mut().expect("a race");
        for (value, why) in failing {
            if value == race.start {
                return Err(Stop::Failed(format!(
                    "{setting}={value}, the value in effect, failed on its own: {why}"
                )));
            }
            race.candidates.retain(|c| c.value != value);
            let sentence = format!(
                "{setting}={value} dropped: it failed on its own ({why}); the race goes on without it"
            );
            st.notes.push(sentence.clone());
            self.emit(TuneEvent::Dropped {
                setting: setting.to_string(),
                value,
                sentence,
            });
        }
        self.emit(TuneEvent::Race(race.clone()));
        Ok(())
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

    /// End the race under way: its decision, its candidates on the search path.
    fn decide(&self, st: &mut TuneState) {
        let rules = self.race_rules(st);
        let Some(race) = st.race.take() else { return };
        let obj = Objective::of(&st.spec);
        let d = race.decide(obj.better, &rules);
        let carried = st.carried();
        for c in &race.candidates {
            if let Some(e) = estimate(&c.trials, self.rules.confidence) {
                st.path.push(PathPoint {
                    label: if super::pair::is_pair(&race) {
                        c.value.clone()
                    } else {
                        format!("{}={}", race.setting, c.value)
                    },
                    setting: race.setting.clone(),
                    carried: carried.clone(),
                    median: e.median,
                    low: e.ci_low,
                    high: e.ci_high,
                    level: e.level,
                    trials: e.n,
                    dropped: c.dropped.is_some(),
                });
            }
        }
        let split = if super::pair::is_pair(&race) {
            super::pair::split(d)
        } else {
            vec![d]
        };
        for d in split {
            self.emit(TuneEvent::Decided(d.clone()));
            st.decisions.push(d);
        }
    }

    /// The budget stops the search: the race under way is decided with what it has; the
    /// settings not reached are recorded as not searched.
    /// Every race ended before the budget did: say so, with what is left (the confirmation
    /// still runs on it).
    fn note_search_ended(&self, st: &mut TuneState, budget: &Budget) {
        let races = st.raced_settings();
        if races == 0 || st.decisions.iter().any(|d| d.why == Why::PlanGuided) {
            return;
        }
        let note = format!(
            "the search ended with {} of the budget left: the race{} of its {races} setting{} ended, each with one value left, every value left shown equivalent to the best, or its last planned look taken (a race decides only at the looks its error was split over, so further rounds would buy no decision)",
            crate::measure::units::format_seconds(budget.remaining().as_secs_f64()),
            if races == 1 { "" } else { "s" },
            if races == 1 { "" } else { "s" }
        );
        self.emit(TuneEvent::Note(note.clone()));
        st.notes.push(note);
    }

    fn stop_search(&self, st: &mut TuneState, why: &str) {
        self.decide(st);
        self.close_rest(st, Some(why));
    }

    /// Every setting without a decision gets one that keeps its value: the races not reached
    /// (said in a note with `why`), and the settings the screening saw no effect of.
    fn close_rest(&self, st: &mut TuneState, why: Option<&str>) {
        let races = st.raced_settings();
        let rest: Vec<(String, String)> = st.plan[st.decisions.len().min(st.plan.len())..]
            .iter()
            .map(|p| {
                let start = p
                    .candidates
                    .first()
                    .map(|c| c.0.clone())
                    .unwrap_or_default();
                (p.name.clone(), start)
            })
            .collect();
        let not_reached: Vec<String> = rest
            .iter()
            .take(races.saturating_sub(st.decisions.len()))
            .map(|(n, _)| n.clone())
            .collect();
        for (name, start) in rest {
            st.decisions.push(Decision {
                setting: name,
                start: start.clone(),
                value: start,
                why: Why::NotShown,
                comparison: None,
                confidence: self.rules.confidence,
                rounds: 0,
                trials: 0,
            });
        }
        if let Some(why) = why
            && !not_reached.is_empty()
        {
            let note = format!("not searched ({why}): {}", not_reached.join(", "));
            self.emit(TuneEvent::Note(note.clone()));
            st.notes.push(note);
        }
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
