//! The tune's last phase: the tuned set (and pgtune's) against the starting configuration,
//! every side restarted and warmed up the same way, the order rotating round by round, saved
//! after every round.

use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::confirm::{self, Confirm, Side};
use super::engine::{End, TuneEvent, Tuner};
use super::objective::Objective;
use super::phase::TunePhase;
use super::rounds::{self, Stop};
use super::state::{PathPoint, TuneState};
use crate::measure::interval::estimate;

impl Tuner {
    /// Run the confirmation `c` (as the state saved it) to its end: the tune is done, or it
    /// ends here cancelled or failed with the confirmation saved for `--resume`.
    pub(super) async fn confirm(
        &self,
        st: &mut TuneState,
        mut c: Confirm,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> End {
        if c.sides().len() < 2 {
            st.phase = TunePhase::Done(None);
            self.save(st, budget);
            return End::Done;
        }
        // Every side is applied and warmed up the same way: warm-up for all when any side
        // needs a restart.
        let names: Vec<&str> = [Side::Start, Side::Tuned, Side::Formula]
            .into_iter()
            .flat_map(|side| c.settings(side).iter().map(|(n, _)| n.as_str()))
            .collect();
        let warmup = self.uses_restart(st, &names)
            || names
                .iter()
                .any(|n| is_restart_setting(&st.formula, n, st.on_sandbox));
        let obj = Objective::of(&st.spec);
        plan_rounds(st, &mut c, budget);
        let mut end = End::Done;
        while c.rounds < c.last_round() {
            match self.confirm_round(st, &mut c, warmup, budget, cancel).await {
                Ok(true) => {
                    if c.look_due() {
                        c.judge(obj.better, &self.rules);
                        if c.decided() {
                            break;
                        }
                    }
                    if c.join_formula() {
                        self.emit(TuneEvent::Note(format!(
                            "the tuned set confirmed against the start in {} rounds; pgtune's set joins the rounds now",
                            c.rounds
                        )));
                    }
                }
                Ok(false) => break,
                Err(Stop::Cancelled) => {
                    st.phase = TunePhase::Confirming(Box::new(c));
                    self.save(st, budget);
                    return End::Cancelled;
                }
                Err(Stop::BudgetOut) => break,
                Err(Stop::Failed(e)) => {
                    end = End::Failed(e);
                    break;
                }
            }
        }
        c.judge(obj.better, &self.rules);
        self.confirm_path(st, &c);
        self.emit(TuneEvent::Confirm(Box::new(c.clone())));
        st.phase = if end == End::Done {
            TunePhase::Done(Some(Box::new(c)))
        } else {
            TunePhase::Confirming(Box::new(c))
        };
        self.save(st, budget);
        end
    }

    /// One round of the confirmation, every side once in the round's order: Ok(false) when
    /// the budget holds no further round (said in a note).
    async fn confirm_round(
        &self,
        st: &mut TuneState,
        c: &mut Confirm,
        warmup: bool,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<bool, Stop> {
        let order = c.order();
        let fits = st
            .pace
            .estimate(order.len())
            .is_none_or(|e| e <= budget.remaining());
        if !fits || budget.is_out() {
            let note = format!(
                "the confirmation ran {} of its {} rounds: the budget held no more",
                c.rounds,
                c.last_round()
            );
            self.emit(TuneEvent::Note(note.clone()));
            st.notes.push(note);
            return Ok(false);
        }
        let mut measures = Vec::new();
        let mut statements = Vec::new();
        for side in order {
            let spec = rounds::round_spec(&st.spec, c.settings(side), None, warmup);
            let mut r = self.one_run(st, spec, budget, cancel).await?;
            match r.measures.get(&0) {
                Some(m) => measures.push((side, *m)),
                None => return Ok(false),
            }
            statements.push((side, r.statements.remove(&0).unwrap_or_default()));
        }
        c.add_measures(&measures);
        super::statements::add_round(&mut c.statements, &statements);
        self.emit(TuneEvent::Confirm(Box::new(c.clone())));
        st.phase = TunePhase::Confirming(Box::new(c.clone()));
        self.save(st, budget);
        Ok(true)
    }

    /// The confirmation's configurations on the search path (the chart).
    fn confirm_path(&self, st: &mut TuneState, c: &Confirm) {
        for (label, trials, carried) in [
            ("starting configuration", &c.start_trials, Vec::new()),
            ("tuned set", &c.tuned_trials, c.tuned.clone()),
            ("pgtune's set", &c.formula_trials, c.formula.clone()),
        ] {
            if let Some(e) = estimate(trials, self.rules.confidence) {
                st.path.push(PathPoint {
                    label: label.into(),
                    setting: "confirmation".into(),
                    carried,
                    median: e.median,
                    low: e.ci_low,
                    high: e.ci_high,
                    level: e.level,
                    trials: e.n,
                    dropped: false,
                });
            }
        }
    }
}

/// Before the first round: whether pgtune's set waits for the tuned set's verdict
/// ([`super::confirm_staged`]; a round of three sides with pgtune's restarts pays two warm-ups
/// more), then the looks the budget affords.
fn plan_rounds(st: &TuneState, c: &mut Confirm, budget: &Budget) {
    let restarts = c
        .formula
        .iter()
        .any(|(n, _)| is_restart_setting(&st.formula, n, st.on_sandbox));
    let three = affordable_rounds(st, c.sides().len() + if restarts { 2 } else { 0 }, budget);
    c.stage(restarts, three, affordable_rounds(st, 2, budget));
    c.plan(affordable_rounds(st, c.sides().len(), budget));
}

/// The confirmation rounds of `configs` configurations each the budget left affords at the
/// pace so far ([`confirm::ROUNDS`] when the pace is not known yet): its looks are planned
/// from this, before any of its trials.
fn affordable_rounds(st: &TuneState, configs: usize, budget: &Budget) -> usize {
    match st.pace.estimate(configs) {
        Some(round) if !round.is_zero() => {
            (budget.remaining().as_secs_f64() / round.as_secs_f64()).floor() as usize
        }
        _ => confirm::ROUNDS,
    }
}

/// Whether `name` of the formula's set needs a restart on the sandbox (`shared_buffers`,
/// `wal_buffers`): known from the setting, since the formula's settings are not in the plan.
fn is_restart_setting(formula: &[(String, String)], name: &str, on_sandbox: bool) -> bool {
    on_sandbox && formula.iter().any(|(n, _)| n == name) && super::formula::needs_restart(name)
}
