//! The tune's middle phase: setting by setting, race the candidate values (see
//! [`super::race`]; a pair that moved together races as one, [`super::pair`]), carry the value
//! each race shows into the next, stop when the budget would not hold another round and the
//! confirmation. The state is saved after every round with the race under way
//! ([`TunePhase::Racing`]), so a cancelled tune resumes where it stopped.

use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::confirm::{self, Confirm};
use super::decide::{Decision, Why};
use super::engine::{End, TuneEvent, Tuner};
use super::looks;
use super::objective::Objective;
use super::phase::{RaceUnderWay, TunePhase};
use super::race::Race;
use super::rounds::{self, Stop};
use super::state::{PathPoint, TuneState};
use crate::measure::interval::estimate;
use crate::measure::rules::Rules;
use crate::measure::verdict::Better;

impl Tuner {
    /// Run the races until they end: None to go on with the confirmation, Some when the tune
    /// ends here (cancelled, failed). A race runs on its own copy during a round; the state
    /// keeps the race as last saved until the round is over.
    pub(super) async fn race(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Option<End> {
        let obj = Objective::of(&st.spec);
        let rules = self.race_rules(st);
        while let TunePhase::Racing(under_way) = &st.phase {
            if cancel.is_cancelled() {
                self.save(st, budget);
                return Some(End::Cancelled);
            }
            let mut run = match under_way {
                Some(run) => run.clone(),
                None => match start_race(st, obj.better, budget) {
                    Some(run) => Box::new(run),
                    None => {
                        self.close_rest(st, None);
                        self.note_search_ended(st, budget);
                        to_confirmation(st);
                        break;
                    }
                },
            };
            let used = budget.spent().as_secs_f64() - run.started_s;
            let next = looks::next_round_s(&run.race, &st.pace, used);
            plan_looks(&mut run, &rules, used, next);
            let race = &run.race;
            let over_share = race.rounds >= looks::FIRST_LOOK
                && st.races_left() > 1
                && used + next > run.share_s;
            if over_share || race.settled(obj.better, &rules) {
                self.decide(st, run.race);
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
                let why = "the budget holds no further round and the confirmation";
                self.stop_search(st, run.race, why);
                self.save(st, budget);
                break;
            }
            let round = self.race_round(st, &mut run.race, budget, cancel).await;
            if let Err(Stop::BudgetOut) = round {
                self.stop_search(st, run.race, "the budget ran out during a round");
                self.save(st, budget);
                break;
            }
            st.phase = TunePhase::Racing(Some(run));
            self.save(st, budget);
            match round {
                Err(Stop::Cancelled) => return Some(End::Cancelled),
                Err(Stop::Failed(e)) => return Some(End::Failed(e)),
                Ok(()) | Err(Stop::BudgetOut) => {}
            }
        }
        None
    }

    /// One round of `race`: its values (a pair's grid) in one run, then its look.
    async fn race_round(
        &self,
        st: &mut TuneState,
        race: &mut Race,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
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
                return self.drop_failing(st, race, budget, cancel, &order, e).await;
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
        race.add_round(&measures);
        let rules = self.race_rules(st);
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
        race: &mut Race,
        budget: &Budget,
        cancel: &CancellationToken,
        order: &[String],
        error: String,
    ) -> Result<(), Stop> {
        let setting = race.setting.clone();
        let failing = self
            .failing_alone(st, budget, cancel, &setting, order)
            .await?;
        if failing.is_empty() || failing.len() == order.len() {
            return Err(Stop::Failed(error));
        }
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
                setting: setting.clone(),
                value,
                sentence,
            });
        }
        self.emit(TuneEvent::Race(race.clone()));
        Ok(())
    }

    /// End `race`: its decision, its candidates on the search path; the next race is due.
    fn decide(&self, st: &mut TuneState, race: Race) {
        st.phase = TunePhase::Racing(None);
        let rules = self.race_rules(st);
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

    /// The budget stops the search: `race` is decided with what it has; the settings not
    /// reached are recorded as not searched; the confirmation is next.
    fn stop_search(&self, st: &mut TuneState, race: Race, why: &str) {
        self.decide(st, race);
        self.close_rest(st, Some(why));
        to_confirmation(st);
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
}

/// The next race, started now: the setting up next (or the pair it starts), with an equal
/// share of what the confirmation leaves for each setting left (a pair's race the shares of
/// both). None: every setting is decided.
fn start_race(st: &TuneState, better: Better, budget: &Budget) -> Option<RaceUnderWay> {
    let p = st.next_setting()?;
    let single = Race::new(&p.name, p.candidates.clone());
    let race = super::pair::race_for(st, better).unwrap_or(single);
    let members = super::pair::names(&race.setting).len();
    let reserve = st
        .pace
        .estimate(st.confirm_sides() * confirm::ROUNDS)
        .unwrap_or_default();
    let left = st.races_left().max(members);
    Some(RaceUnderWay {
        race,
        started_s: budget.spent().as_secs_f64(),
        share_s: budget.remaining().saturating_sub(reserve).as_secs_f64() * members as f64
            / left as f64,
    })
}

/// Before the first look: plan the looks the race's share affords at the pace so far (the
/// race's error is split evenly over them).
fn plan_looks(run: &mut RaceUnderWay, rules: &Rules, used: f64, next: f64) {
    let race = &mut run.race;
    if race.planned_looks == 0
        && race.looks == 0
        && race.rounds + 1 >= looks::FIRST_LOOK
        && next > 0.0
    {
        let left = (run.share_s - used).max(0.0);
        let rounds = race.rounds + (left / next).floor() as usize;
        race.plan_looks(rules.confidence, rounds);
    }
}

/// The races are over: the confirmation of the tuned set is next.
fn to_confirmation(st: &mut TuneState) {
    let c = Confirm::new(st.carried(), st.formula.clone());
    st.phase = TunePhase::Confirming(Box::new(c));
}
