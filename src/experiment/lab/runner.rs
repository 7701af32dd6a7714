//! Spawning an experiment: the common frame around every run — connect, read the server and
//! host, refuse what must not run, ensure the lab schema (not for a query on a server pglab
//! did not start: it writes nothing there), run, clean up, record, report.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use chrono::Utc;
use futures_util::FutureExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::context::{RunCtx, RunError, RunOptions};
use super::event::{CHANNEL_CAPACITY, Emitter, RunEvent, RunHandle};
use super::experiment::{Experiment, each_kind};
use super::record::{Outcome, Recorder, ReportBody, RunReport, SCHEMA_VERSION};
use super::spec::ExperimentSpec;
use crate::host::HostSnapshot;
use crate::server::{Target, snapshot};

/// Start an experiment on its own task. Events arrive on the handle; cancel with its token.
pub fn spawn(target: Arc<Target>, spec: ExperimentSpec, opts: RunOptions) -> RunHandle {
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let task = tokio::spawn(async move {
        let emit = Emitter::new(tx);
        let final_event = run(target, spec, opts, emit.clone(), c).await;
        emit.send(final_event).await;
    });
    RunHandle {
        events: rx,
        cancel,
        task,
    }
}

fn empty_body(spec: &ExperimentSpec) -> ReportBody {
    each_kind!(spec, s => empty_body_of(s))
}

fn empty_body_of<K: Experiment>(spec: &K) -> ReportBody {
    K::into_body(spec.new_report())
}

/// Run a kind's trials, filling its report inside `body` as results arrive (what it filled
/// before a failure, a cancel or a panic stays there).
async fn run_kind<K: Experiment>(
    ctx: &RunCtx,
    spec: &K,
    body: &mut ReportBody,
) -> Result<(), RunError> {
    match K::report_in(body) {
        Some(report) => spec.run(ctx, report).await,
        None => Err(RunError::failed("internal: report does not match the spec")),
    }
}

async fn run(
    target: Arc<Target>,
    mut spec: ExperimentSpec,
    mut opts: RunOptions,
    emit: Emitter,
    cancel: CancellationToken,
) -> RunEvent {
    let started_at = Utc::now();
    if opts.statement_timeout.is_none() {
        opts.statement_timeout = spec.default_statement_timeout();
    }
    let run_id = crate::sql::lab::new_run_id();
    let local = opts.local_data_dir.clone();
    let host = tokio::task::spawn_blocking(move || HostSnapshot::read(local.as_deref()))
        .await
        .unwrap_or_else(|_| HostSnapshot::read(None));
    let mut report = RunReport {
        schema_version: SCHEMA_VERSION,
        run_id: run_id.clone(),
        pglab_version: env!("CARGO_PKG_VERSION").into(),
        outcome: Outcome::Failed,
        error: None,
        started_at,
        finished_at: started_at,
        preset: opts.preset.clone(),
        tune: opts.tune.clone(),
        target: target.describe(),
        server: None,
        host: host.fingerprint(),
        spec_key: spec.spec_key(),
        notes: Vec::new(),
        whatif: None,
        body: empty_body(&spec),
    };
    let recorder = opts.recorder.clone();
    let fail = |mut report: RunReport, error: String| {
        report.outcome = Outcome::Failed;
        report.error = Some(error.clone());
        report.finished_at = Utc::now();
        record(recorder.as_deref(), &report);
        RunEvent::Failed {
            error,
            report: Box::new(report),
        }
    };

    let control = match target.connect().await {
        Ok(c) => c,
        Err(e) => return fail(report, e.to_string()),
    };
    let server = match snapshot::read(&control, &target).await {
        Ok(s) => s,
        Err(e) => return fail(report, e.to_string()),
    };
    report.server = Some(server.fingerprint());
    let on_sandbox = target.is_sandbox() && opts.sandbox.is_some();
    if let Err(why) = super::preflight::may_run(&server, &spec, on_sandbox) {
        return fail(report, why);
    }
    // Held for the whole run: `pglab clean` leaves the tables of a live run alone.
    if let Err(e) = super::leftovers::hold_run_lock(&control, &run_id).await {
        return fail(report, e);
    }
    let sync_standby = opts
        .sandbox
        .as_ref()
        .filter(|_| on_sandbox)
        .and_then(|sb| super::sync_standby::with_sync_standby(&spec, sb));
    if let Some((sweep, note)) = &sync_standby {
        spec.set_settings(sweep.clone());
        report.spec_key = spec.spec_key();
        report.body = empty_body(&spec);
        tracing::info!("{note}");
    }
    let reach = super::whatif::Reach::of(on_sandbox, server.citus.is_some());
    let plan = match super::whatif::plan::check(&control, spec.settings(), reach).await {
        Ok(p) => p,
        Err(problems) => return fail(report, problems.join("; ")),
    };
    if !plan.is_empty() && &plan.sweep != spec.settings() {
        spec.set_settings(plan.sweep.clone());
        report.spec_key = spec.spec_key();
        report.body = empty_body(&spec);
    }
    let sandbox = opts.sandbox.clone();
    if let Some(sb) = sandbox.as_ref().filter(|_| on_sandbox)
        && let Some(why) = super::whatif::sandbox_conflict(sb, &plan)
    {
        return fail(report, why);
    }
    // pglab's own sandbox (Citus included) is the one server that is pglab's to checkpoint.
    let checkpoint = super::checkpoint::CheckpointPlan::decide(
        spec.checkpoint_mode(),
        target.is_sandbox(),
        server.can_checkpoint,
    );
    let mut ctx = RunCtx::new(target, emit, cancel, run_id, opts, server, host);
    ctx.whatif = super::whatif::Applier::new(plan, sandbox.clone().filter(|_| on_sandbox));
    ctx.checkpoint = checkpoint;
    // A run that reloads or restarts the sandbox holds the what-if lock from here, before its
    // first trial (before its dataset, even): a pglab starting meanwhile is refused rather
    // than measuring settings this run is about to change. One that got in just before is
    // seen by its lease, and this run gives way.
    if let Err(e) = ctx.whatif.begin(&ctx.target).await {
        return fail(report, e);
    }
    if let Some(sb) = sandbox.as_ref().filter(|_| on_sandbox)
        && let Some(why) = super::whatif::users_conflict(sb, &ctx.whatif.plan)
    {
        let _ = ctx.whatif.restore(&ctx.target).await;
        return fail(report, why);
    }
    if let Some((_, note)) = sync_standby {
        ctx.note(note).await;
    }
    // A query on a server pglab did not start writes nothing there: no lab schema (its
    // setup makes temporary tables on the measuring session, its results stay in pglab's
    // own data directory).
    let needs_schema = on_sandbox || spec.writes_on_foreign_servers();
    if needs_schema && let Err(e) = ctx.ensure_schema(&control).await {
        let _ = ctx.whatif.restore(&ctx.target).await;
        return fail(report, e.to_string());
    }

    // A panic inside the experiment (a bug) ends the run like a failure: the cleanup and the
    // settings' restore below still run before the what-if lock is released.
    let body = async { each_kind!(&spec, s => run_kind(&ctx, s, &mut report.body).await) };
    let result = match AssertUnwindSafe(body).catch_unwind().await {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            tracing::error!("the run panicked: {what}");
            Err(RunError::Failed(format!(
                "internal error, a bug in pglab ({what}): the run was stopped and is cleaned up"
            )))
        }
    };
    // Whatever happened, this run's transient tables go; a fresh session does it because the
    // experiment's own may be the one that broke.
    match ctx.drop_run_tables().await {
        Ok(dropped) if !dropped.is_empty() => {
            ctx.note(format!("cleaned up: dropped {}", dropped.join(", ")))
                .await
        }
        Ok(_) => {}
        Err(e) => {
            ctx.note(format!(
                "cleanup failed ({e}); run `pglab clean` when the server is back"
            ))
            .await
        }
    }
    drop(control);
    // The sandbox's own settings come back whatever happened; the sentence says how.
    match ctx.whatif.restore(&ctx.target).await {
        Ok(Some(said)) => ctx.note(said).await,
        Ok(None) => {}
        Err(e) => {
            ctx.note(format!(
                "putting back the sandbox's settings failed ({e}); the next pglab start puts them back"
            ))
            .await
        }
    }
    if let Some(rec) = ctx.whatif.record().await {
        if let Some(said) = restarts_sentence(&rec.restarts) {
            ctx.note(said).await;
        }
        report.whatif = Some(rec);
    }
    report.notes = ctx.take_notes();
    report.finished_at = Utc::now();
    match result {
        Ok(()) => {
            report.outcome = Outcome::Finished;
            record(ctx.opts.recorder.as_deref(), &report);
            RunEvent::Finished(Box::new(report))
        }
        Err(RunError::Cancelled) => {
            report.outcome = Outcome::Cancelled;
            record(ctx.opts.recorder.as_deref(), &report);
            RunEvent::Cancelled(Box::new(report))
        }
        Err(RunError::Failed(e)) => fail(report, e),
    }
}

/// "2 restarts of the sandbox, 0.21 s and 0.31 s; …" or, from three on, their median with the
/// range (None for one restart or none: the restore note says that one).
fn restarts_sentence(restarts: &[f64]) -> Option<String> {
    let s = crate::measure::stats::Summary::of(restarts)?;
    let tail = "none is part of a trial's time";
    match s.n {
        0 | 1 => None,
        2 => Some(format!(
            "2 restarts of the sandbox, {:.2} s and {:.2} s; {tail}",
            s.min, s.max
        )),
        n => Some(format!(
            "{n} restarts of the sandbox, median {:.2} s (min {:.2}, max {:.2}); {tail}",
            s.median, s.min, s.max
        )),
    }
}

fn record(recorder: Option<&dyn Recorder>, report: &RunReport) {
    if let Some(r) = recorder
        && let Err(e) = r.record(report)
    {
        tracing::error!("could not record run {}: {e}", report.run_id);
    }
}

#[cfg(test)]
mod tests {
    use super::restarts_sentence;

    #[test]
    fn restarts_are_summed_up_with_a_true_median() {
        assert_eq!(restarts_sentence(&[0.2]), None);
        assert_eq!(
            restarts_sentence(&[0.31, 0.21]).unwrap(),
            "2 restarts of the sandbox, 0.21 s and 0.31 s; none is part of a trial's time"
        );
        assert_eq!(
            restarts_sentence(&[0.31, 0.21, 0.25, 0.40]).unwrap(),
            "4 restarts of the sandbox, median 0.28 s (min 0.21, max 0.40); none is part of a trial's time"
        );
    }
}
