//! pgtune's set later, when its restarts would starve the confirmation. pgtune's set usually
//! holds `shared_buffers`: on the sandbox every round then restarts the server twice (into
//! pgtune's value and back) and pays two warm-ups, so a round of three sides costs about five
//! passes. On a workload whose pass takes 15–25 s an 8-minute budget held two such rounds,
//! fewer than any verdict needs, and the tuned set — the tune's answer — stayed "too few
//! trials" although its own gain was large.
//!
//! So when the budget left holds fewer than [`ROUNDS`] rounds of all three sides, the tuned
//! set is confirmed against the start first, in paired rounds of two sides on a warm cache
//! (no restart, no warm-up), until its verdict is decided at a look or its planned rounds are
//! run; that verdict is kept. pgtune's set then joins the rounds with what the budget has
//! left, and is compared with the start and the tuned set over the rounds it ran in (fewer
//! rounds: often "too few trials", said so, and any statement it is shown to slow is named).

use super::confirm::{Confirm, MIN_ROUNDS, ROUNDS};

impl Confirm {
    /// Whether pgtune's set is waiting for the tuned set's verdict.
    pub(crate) fn formula_waits(&self) -> bool {
        self.formula_later && self.formula_from.is_none()
    }

    /// Decide, before the first round, whether pgtune's set waits: there is a tuned set and a
    /// pgtune set that restarts the server, and the budget holds fewer than [`ROUNDS`] rounds
    /// of three sides (`three_sided` rounds, their restarts and warm-ups counted) but at least
    /// [`MIN_ROUNDS`] of the two.
    pub(crate) fn stage(&mut self, restarts: bool, three_sided: usize, two_sided: usize) {
        if self.rounds == 0
            && restarts
            && !self.tuned.is_empty()
            && !self.formula.is_empty()
            && three_sided < ROUNDS
            && two_sided >= MIN_ROUNDS
        {
            self.formula_later = true;
        }
    }

    /// After a round: pgtune's set joins once the tuned set's verdict is decided (at a look)
    /// or its planned rounds are run; the tuned verdict is kept when decided. True when it
    /// joined now.
    pub(crate) fn join_formula(&mut self) -> bool {
        if !self.formula_waits() {
            return false;
        }
        let decided = self.comparison.as_ref().is_some_and(|c| c.conclusive());
        if !(decided && self.look_due() || self.rounds >= self.last_round()) {
            return false;
        }
        self.tuned_settled = decided;
        self.formula_from = Some(self.rounds);
        true
    }

    /// What the confirmation did with pgtune's set when it waited, in words (None when it
    /// was measured every round).
    pub(crate) fn formula_stage_text(&self) -> Option<String> {
        if !self.formula_later {
            return None;
        }
        Some(match self.formula_from {
            None => format!(
                "pgtune's set not measured: its restarts would have left too few rounds, so the tuned set was confirmed against the start first ({} rounds) and the budget held no round after",
                self.rounds
            ),
            Some(k) => format!(
                "pgtune's set measured in the last {} of the {} rounds only: its restarts would have left too few rounds, so the tuned set was confirmed against the start first ({k} rounds)",
                self.rounds - k,
                self.rounds
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::confirm::Side;
    use super::*;
    use crate::measure::rules::Rules;
    use crate::measure::verdict::{Better, Verdict};

    fn round(c: &mut Confirm, start: f64, tuned: f64, formula: f64, wobble: f64) {
        let m: Vec<(Side, f64)> = c
            .order()
            .into_iter()
            .map(|s| {
                let v = match s {
                    Side::Start => start,
                    Side::Tuned => tuned,
                    Side::Formula => formula,
                };
                (s, v * wobble)
            })
            .collect();
        c.add_measures(&m);
    }

    /// A budget of two three-sided rounds confirms the tuned set (×0.66) in two-sided rounds
    /// first; pgtune's set joins after the tuned verdict, its comparisons over its own rounds.
    #[test]
    fn the_tuned_set_is_confirmed_first_when_pgtunes_restarts_would_starve_it() {
        let set = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        let mut c = Confirm::new(set("work_mem", "128MB"), set("shared_buffers", "4GB"));
        c.stage(true, 2, 10);
        c.plan(10);
        assert!(c.formula_waits());
        assert_eq!(c.sides(), [Side::Start, Side::Tuned]);
        let wobble = [1.0, 0.98, 1.03, 0.99, 1.01, 1.0, 1.02, 0.97];
        let mut joined_at = None;
        for w in wobble {
            if c.rounds >= c.last_round() {
                break;
            }
            round(&mut c, 15.0, 9.9, 20.0, w);
            if c.look_due() {
                c.judge(Better::Lower, &Rules::default());
            }
            if c.join_formula() {
                joined_at = Some(c.rounds);
            }
        }
        c.judge(Better::Lower, &Rules::default());
        assert_eq!(joined_at, Some(ROUNDS), "joined at the first decided look");
        assert!(c.tuned_settled);
        assert_eq!(c.comparison.as_ref().unwrap().verdict, Verdict::Faster);
        assert_eq!(c.formula_trials.len(), 3);
        // Three rounds of pgtune's set: its ratio against the start is taken over those.
        let f = c.formula_comparison.as_ref().unwrap();
        assert!((f.ratio - 20.0 / 15.0).abs() < 0.01, "{f:?}");
        let text = c.formula_stage_text().unwrap();
        assert!(text.contains("last 3 of the 8 rounds"), "{text}");
        // A budget that holds the three sides, or a pgtune set without a restart: every round.
        let mut all = Confirm::new(set("work_mem", "128MB"), set("shared_buffers", "4GB"));
        all.stage(true, ROUNDS, 10);
        assert!(!all.formula_waits() && all.formula_stage_text().is_none());
        all.stage(false, 1, 10);
        assert!(!all.formula_waits());
    }

    /// Undecided by its planned rounds, the tuned set still lets pgtune's set join; a budget
    /// that ends first says pgtune's set was not measured.
    #[test]
    fn pgtunes_set_joins_after_the_planned_rounds_or_is_said_not_measured() {
        let set = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        let mut c = Confirm::new(set("work_mem", "128MB"), set("shared_buffers", "4GB"));
        c.stage(true, 1, 6);
        c.plan(6);
        for i in 0..c.last_round() {
            let w = if i % 2 == 0 { 0.8 } else { 1.25 };
            round(&mut c, 15.0, 15.0 * w, 20.0, 1.0);
            c.judge(Better::Lower, &Rules::default());
            assert_eq!(c.join_formula(), c.rounds >= 6, "round {}", c.rounds);
        }
        assert!(!c.tuned_settled && c.formula_from == Some(6));
        let mut none = Confirm::new(set("work_mem", "128MB"), set("shared_buffers", "4GB"));
        none.stage(true, 0, 4);
        round(&mut none, 15.0, 10.0, 20.0, 1.0);
        let text = none.formula_stage_text().unwrap();
        assert!(text.starts_with("pgtune's set not measured"), "{text}");
    }
}
