//! What runs on the sandbox's standby beside an experiment's trials (ingest's, query's
//! throughput trials): a `--standby-fault`, set up once for the run with the note that says
//! what it does, run beside each trial's load, and put back when the run ends (at the
//! trial's distance when the run sweeps it, see `Injector::at_distance`).

use std::future::Future;
use std::time::Instant;

use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::standby_fault::{FaultKind, FaultWindow, Injector, StandbyFault};
use super::{RunCtx, RunError};

/// Where a fault runs, in its note's words: beside what (`in each trial`), what its time counts
/// from (`the load`), and before and after what the standby streams (`every trial`).
#[derive(Clone, Copy)]
pub(crate) struct FaultWords<'a> {
    pub each: &'a str,
    pub load: &'a str,
    pub around: &'a str,
}

/// Beside each trial's load (ingest, query throughput).
pub(crate) const TRIALS: FaultWords<'static> = FaultWords {
    each: "in each trial",
    load: "the load",
    around: "every trial",
};

/// The standby fault of the run, refused before anything is created when the target is not
/// pglab's sandbox with a standby running.
pub(crate) async fn fault_of(
    ctx: &RunCtx,
    fault: Option<StandbyFault>,
) -> Result<Option<Injector>, RunError> {
    fault_beside(ctx, fault, TRIALS).await
}

/// [`fault_of`], its note in `words`.
pub(crate) async fn fault_beside(
    ctx: &RunCtx,
    fault: Option<StandbyFault>,
    words: FaultWords<'_>,
) -> Result<Option<Injector>, RunError> {
    let Some(fault) = fault else {
        return Ok(None);
    };
    let session = ctx.session().await?;
    let f = Injector::for_run(ctx, fault, &session).await?;
    ctx.note(standby_fault_note(&f, words)).await;
    Ok(Some(f))
}

/// What the fault does and what it means for a commit that waits for the standby.
fn standby_fault_note(f: &Injector, w: FaultWords) -> String {
    let after = match f.fault.for_s {
        Some(s) => format!("{s} s later"),
        None => "when the trial's time limit ends".into(),
    };
    let what = match f.fault.kind {
        FaultKind::Stop => format!(
            "stops {} s into {} (pg_ctl stop -m fast, its relay too) and is started again {after}",
            f.fault.at_s, w.load
        ),
        FaultKind::PauseReplay => format!(
            "pauses its replay {} s into {} (pg_wal_replay_pause) and resumes it {after}",
            f.fault.at_s, w.load
        ),
    };
    format!(
        "standby fault {}: {} {} {what}; while it is gone, a commit at a level that waits for it (stopped: remote_write, on, remote_apply; paused replay: remote_apply) waits until it is back, or until a statement_timeout or Ctrl-C cancels the wait (the commit then stays local, with a WARNING); the standby is put back and streaming before and after {}",
        f.fault.text(),
        w.each,
        f.standby_name(),
        w.around
    )
}

/// At the end of a run (after an error or Ctrl-C too): the standby running and replaying.
pub(crate) async fn put_back(ctx: &RunCtx, fault: Option<&Injector>) {
    if let Some(f) = fault
        && let Err(e) = f.restore().await
    {
        ctx.note(e).await;
    }
}

/// The load, with the fault running beside it when there is one: `started` gives the load's
/// start, `limit_s` its time limit; the fault ends at the latest when the load has.
pub(crate) async fn beside<T>(
    ctx: &RunCtx,
    control: &Client,
    fault: Option<&Injector>,
    when: (impl Future<Output = Option<Instant>>, Option<f64>),
    loading: impl Future<Output = T>,
) -> (T, Option<FaultWindow>) {
    let Some(f) = fault else {
        return (loading.await, None);
    };
    beside_signalled(ctx, control, f, when, (loading, &CancellationToken::new())).await
}

/// [`beside`] with the fault `f` always, telling `applied` once the fault is in place (or
/// will not be), so that a load may wait for it before it begins.
pub(crate) async fn beside_signalled<T>(
    ctx: &RunCtx,
    control: &Client,
    f: &Injector,
    when: (impl Future<Output = Option<Instant>>, Option<f64>),
    (loading, applied): (impl Future<Output = T>, &CancellationToken),
) -> (T, Option<FaultWindow>) {
    let loaded = CancellationToken::new();
    let loading = async {
        let l = loading.await;
        loaded.cancel();
        l
    };
    let during = f.during(ctx, control, when, (&loaded, applied));
    let (l, w) = tokio::join!(loading, during);
    (l, Some(w))
}
