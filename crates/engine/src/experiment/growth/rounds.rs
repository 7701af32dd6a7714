//! Measuring a growth step by rounds: writes, then reads, each combination of swept settings
//! taking its turn in every round, so no value's repeats all fall in one restart block.

use std::collections::BTreeMap;
use std::time::Instant;

use rand_chacha::ChaCha8Rng;

use super::run::{Growth, sessions};
use super::step::StepMeasure;
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::whatif::{Entered, round_blocks};
use crate::experiment::lab::{RunCtx, RunError};

/// One combination's measurements of a step and the settings its session showed.
pub(super) type Measured = Option<(StepMeasure, BTreeMap<String, String>)>;

/// What one combination does in a round.
#[derive(Clone, Copy)]
struct Turn {
    combo: usize,
    reading: bool,
    round: u32,
}

/// Every combination of swept settings measures the same step, reading the same versions;
/// the order of the restart blocks alternates direction from step to step, so a step starts
/// where the last one ended. The growth runs under the first of them (its timings are
/// recorded with that combination's step).
pub(super) fn combo_order(ctx: &RunCtx, combos: usize, step_no: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..combos).collect();
    order.sort_by_key(|&c| (ctx.whatif.plan.block_of(c), c));
    if step_no % 2 == 1 {
        order.reverse();
    }
    order
}

impl Growth<'_> {
    /// Writes, then reads, by rounds; in every round each combination takes its turn
    /// (restart blocks ABAB…, or rotating with three or more), so no value's repeats all
    /// fall in one block. A combination's sizes are read when it first gets its turn.
    pub(super) async fn measure(
        &mut self,
        order: &[usize],
        read_rng: ChaCha8Rng,
        trials: &[Option<TrialRef>],
    ) -> Result<Vec<Measured>, RunError> {
        let combos = self.spec.set.combo_count();
        let blocks = self.ctx.whatif.plan.blocks(combos);
        let mut distinct: Vec<usize> = Vec::new();
        for &c in order {
            if !distinct.contains(&blocks[c]) {
                distinct.push(blocks[c]);
            }
        }
        let mut m: Vec<Measured> = (0..combos).map(|_| None).collect();
        for reading in [false, true] {
            let mut round = 1;
            loop {
                let mut any = false;
                for b in round_blocks(&distinct, round as usize - 1) {
                    for &c in order.iter().filter(|&&c| blocks[c] == b) {
                        let turn = Turn {
                            combo: c,
                            reading,
                            round,
                        };
                        any |= self.take_turn(&mut m[c], turn, &read_rng, trials).await?;
                    }
                }
                if !any {
                    break;
                }
                round += 1;
            }
        }
        Ok(m)
    }

    /// One combination's turn in a round: the designs still to write (or read) do so under
    /// its settings. False when none is left.
    async fn take_turn(
        &mut self,
        m: &mut Measured,
        turn: Turn,
        read_rng: &ChaCha8Rng,
        trials: &[Option<TrialRef>],
    ) -> Result<bool, RunError> {
        let (ctx, spec) = (self.ctx, self.spec);
        let Turn {
            combo,
            reading,
            round,
        } = turn;
        let started = m.as_ref().map(|(s, _)| s);
        let who = if reading {
            StepMeasure::readers(started, spec, round)
        } else {
            StepMeasure::writers(started, spec, round)
        };
        if who.is_empty() {
            return Ok(false);
        }
        if spec.set.combo_count() > 1 {
            self.enter_turn(combo).await?;
        }
        if m.is_none() {
            let shown = ctx.shown_settings(&self.client).await?;
            let sm = StepMeasure::start(ctx, &self.client, &self.states, read_rng.clone()).await?;
            *m = Some((sm, shown));
        }
        let Some((sm, _)) = m.as_mut() else {
            return Ok(true);
        };
        if reading {
            let cold = self.cold.as_ref();
            sm.read(ctx, &self.client, &self.states, cold, (&who, round), trials)
                .await?;
        } else if let (Some(f), 1) = (self.fault, round) {
            self.write_beside_fault(f, sm, &who, trials).await?;
        } else {
            let turn = Instant::now();
            sm.write(
                ctx,
                &self.client,
                spec,
                &mut self.states,
                (&who, round, turn),
                trials,
            )
            .await?;
        }
        Ok(true)
    }

    /// Enter a combination's settings, and its distance when the run sweeps it.
    pub(super) async fn enter_combo(&self, combo: usize) -> Result<Entered, RunError> {
        let entered = self.ctx.enter_combo(combo).await?;
        if let Some(d) = self.distance {
            d.follow(self.ctx).await?;
            // A standby the fault stops comes back at this combination's distance.
            let rtt = crate::experiment::lab::standby_rtt::rtt_of(&self.ctx.whatif.combo());
            if let (Some(f), Some(rtt)) = (self.fault, rtt) {
                f.at_distance(rtt);
            }
        }
        Ok(entered)
    }

    /// Enter a combination for its turn: restart or reload as its settings need (new
    /// sessions after a restart), then its session settings.
    async fn enter_turn(&mut self, combo: usize) -> Result<(), RunError> {
        let ctx = self.ctx;
        if let Entered::Restarted { .. } = self.enter_combo(combo).await? {
            (self.client, self.watcher) = sessions(ctx).await?;
        }
        ctx.whatif
            .plan
            .session_settings(combo)
            .apply(&self.client)
            .await
            .map_err(|e| ctx.error(e))
    }
}
