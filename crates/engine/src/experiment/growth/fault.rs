//! `--standby-fault` on growth: at every step, beside each combination's first write round
//! (one new version of each design), the sandbox's synchronous standby stops or pauses its
//! replay, `at` seconds after the round began, for `for` seconds — or until the round's
//! writes have ended, whichever comes first (a fault due after they ended does not happen).
//! At `at=0s` the fault is in place before the round's first write begins, so every write of
//! the round meets it, however short the writes.
//! A commit at a level that waits for the standby waits until it is back; the round records
//! how long commits waited meanwhile ([`GrowthFault`]).
//!
//! Everything is put back on every path: before the round the standby runs and streams; after
//! it (however it ended: done, an error, a cancel) it is started again or its replay resumed,
//! and the round waits until it streams; once more when the run ends (`run`), and after a
//! kill -9 by the next start.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::commits::GrowthFault;
use super::run::Growth;
use super::step::StepMeasure;
use crate::experiment::lab::RunError;
use crate::experiment::lab::event::TrialRef;
use crate::experiment::lab::standby_beside::{self, FaultWords};
use crate::experiment::lab::standby_fault::Injector;

/// The fault's note: beside each combination's first write round of every step.
pub(super) const WORDS: FaultWords<'static> = FaultWords {
    each: "at every step, beside each combination's first write round,",
    load: "the round",
    around: "every such round (at 0 s the fault is in place before the round's first write; the round's writes ending end it too)",
};

impl Growth<'_> {
    /// The first write round of `sm`'s combination at this step, with the fault `f` beside
    /// it; its record lands in `sm.fault`.
    pub(super) async fn write_beside_fault(
        &mut self,
        f: &Injector,
        sm: &mut StepMeasure,
        who: &[usize],
        trials: &[Option<TrialRef>],
    ) -> Result<(), RunError> {
        let (ctx, spec) = (self.ctx, self.spec);
        let trial = who.first().and_then(|&i| trials[i].clone());
        // The run's session writes; the fault watches the standby from one of its own.
        let control = ctx.session().await?;
        ctx.emit
            .phase(trial, "standby streaming before the fault")
            .await;
        f.ready(ctx, &control).await?;
        // Due at once, the fault is in place before the first write begins.
        let applied = CancellationToken::new();
        let first = f.fault.at_s <= 0.0;
        let turn = Instant::now();
        let writing = async {
            if first {
                applied.cancelled().await;
            }
            let (states, round) = (&mut self.states, (who, 1, turn));
            sm.write(ctx, &self.client, spec, states, round, trials)
                .await
        };
        let when = (async move { Some(turn) }, None);
        let (written, window) =
            standby_beside::beside_signalled(ctx, &control, f, when, (writing, &applied)).await;
        let put_back = f.ready(ctx, &control).await;
        written?;
        put_back?;
        sm.fault = window.map(|w| GrowthFault::of(w, 1, &sm.log));
        Ok(())
    }
}
