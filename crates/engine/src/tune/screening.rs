//! The tune's first phase: the screening's rounds ([`super::screen`]), each an ordinary run of
//! the workload with a group's two-level factorial as its `--set` sweep, saved after every
//! round like a race's; then the plan ordered for the races, the settings that moved first.

use tokio_util::sync::CancellationToken;

use super::budget::Budget;
use super::engine::{End, TuneEvent, Tuner};
use super::phase::TunePhase;
use super::rounds::{self, Stop};
use super::screen::{Screen, factor_of};
use super::state::TuneState;

impl Tuner {
    /// Run the screening until it is done: None to go on with the races, Some when the tune
    /// ends here (cancelled, failed). A budget that holds no further screening round and the
    /// confirmation ends the screening with what it has: a setting without two rounds is
    /// not raced ("not searched").
    pub(super) async fn screen(
        &self,
        st: &mut TuneState,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Option<End> {
        while let TunePhase::Screening(saved) = &st.phase {
            if cancel.is_cancelled() {
                self.save(st, budget);
                return Some(End::Cancelled);
            }
            // The round works on a copy; the state keeps the screening as last saved until
            // the round is over.
            let mut screen = saved.clone();
            let Some(gi) = screen.next_group() else {
                self.finish_screen(st, screen, budget, None);
                break;
            };
            if !st.round_fits(screen.groups[gi].configs(), budget) {
                let why = "the budget holds no further round";
                self.finish_screen(st, screen, budget, Some(why));
                break;
            }
            let round = self.screen_round(st, &mut screen, gi, budget, cancel).await;
            if let Err(Stop::BudgetOut) = round {
                let why = "the budget ran out during a round";
                self.finish_screen(st, screen, budget, Some(why));
                break;
            }
            st.phase = TunePhase::Screening(screen);
            self.save(st, budget);
            match round {
                Err(Stop::Cancelled) => return Some(End::Cancelled),
                Err(Stop::Failed(e)) => return Some(End::Failed(e)),
                Ok(()) | Err(Stop::BudgetOut) => {}
            }
        }
        None
    }

    /// The screening is over: effects ranked and kept in the state, the plan in race order,
    /// what was not screened said in a note; the races are next.
    fn finish_screen(
        &self,
        st: &mut TuneState,
        mut screen: Screen,
        budget: &Budget,
        why: Option<&str>,
    ) {
        screen.finish(self.rules.margin());
        let unscreened: Vec<String> = st
            .plan
            .iter()
            .filter(|p| screen.effect(&p.name).is_none())
            .map(|p| p.name.clone())
            .collect();
        let event = TuneEvent::Screen(screen.clone());
        st.screen = Some(screen);
        st.phase = TunePhase::Racing(None);
        st.order_by_screen();
        if !unscreened.is_empty() {
            let note = format!(
                "not screened ({}): {}",
                why.unwrap_or("no round measured both ends"),
                unscreened.join(", ")
            );
            self.emit(TuneEvent::Note(note.clone()));
            st.notes.push(note);
        }
        self.emit(event);
        self.save(st, budget);
    }

    /// One round of group `gi`: every configuration of its factorial once, in the round's
    /// order.
    async fn screen_round(
        &self,
        st: &mut TuneState,
        screen: &mut Screen,
        gi: usize,
        budget: &Budget,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
        let g = &screen.groups[gi];
        let r = g.rounds.len();
        let order = g.order(r);
        let warmup = self.uses_restart(st, &g.names());
        let spec = rounds::group_spec(&st.spec, &st.carried(), &order, warmup);
        self.emit(TuneEvent::Round {
            setting: format!("screening {}", g.names().join(" × ")),
            round: r + 1,
            order: (0..g.configs())
                .map(|i| g.label(g.config_of(r, i)))
                .collect(),
        });
        let configs = g.configs();
        let round = match self.one_run(st, spec, budget, cancel).await {
            Err(Stop::Failed(e)) => {
                return self.screen_failing(st, screen, gi, budget, cancel, e).await;
            }
            other => other?,
        };
        if !screen.groups[gi].add_round(&round.measures) {
            return Err(Stop::Failed(format!(
                "screening round {} measured {} of its {configs} configurations",
                r + 1,
                round.measures.len()
            )));
        }
        self.emit(TuneEvent::Screen(screen.clone()));
        Ok(())
    }

    /// A screening round failed: each end of the group's settings runs alone; the ones that
    /// fail are dropped from the plan with the server's reason and the group starts over
    /// with the ends left. When none fails alone the failure is the workload's and ends the
    /// tune; so does a value in effect that fails.
    async fn screen_failing(
        &self,
        st: &mut TuneState,
        screen: &mut Screen,
        gi: usize,
        budget: &Budget,
        cancel: &CancellationToken,
        error: String,
    ) -> Result<(), Stop> {
        let factors = screen.groups[gi].factors.clone();
        let mut dropped = 0;
        for f in &factors {
            let ends: Vec<String> = [&f.low, &f.high]
                .into_iter()
                .filter(|v| **v != f.start)
                .cloned()
                .collect();
            for (value, why) in self
                .failing_alone(st, budget, cancel, &f.setting, &ends)
                .await?
            {
                let sentence = format!(
                    "{}={value} dropped: it failed on its own ({why}); the tune goes on without it",
                    f.setting
                );
                if let Some(p) = st.plan.iter_mut().find(|p| p.name == f.setting) {
                    p.candidates.retain(|(v, _)| *v != value);
                }
                st.notes.push(sentence.clone());
                self.emit(TuneEvent::Dropped {
                    setting: f.setting.clone(),
                    value,
                    sentence,
                });
                dropped += 1;
            }
        }
        if dropped == 0 {
            return Err(Stop::Failed(error));
        }
        st.plan.retain(|p| p.candidates.len() >= 2);
        let plan = &st.plan;
        let g = &mut screen.groups[gi];
        g.factors = g
            .factors
            .iter()
            .filter_map(|f| plan.iter().find(|p| p.name == f.setting))
            .filter_map(factor_of)
            .collect();
        g.rounds.clear();
        if g.factors.is_empty() {
            screen.groups.remove(gi);
        }
        Ok(())
    }
}
