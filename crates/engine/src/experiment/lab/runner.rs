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
use super::whatif::SettingsSweep;
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

/// The frame around a run: read the host, open the server and plan its settings, run the
/// kind's trials, then clean up, put the settings back and record, whatever happened.
async fn run(
    target: Arc<Target>,
    mut spec: ExperimentSpec,
    mut opts: RunOptions,
    emit: Emitter,
    cancel: CancellationToken,
) -> RunEvent {
    if opts.statement_timeout.is_none() {
        opts.statement_timeout = spec.default_statement_timeout();
    }
    let run_id = crate::sql::lab::new_run_id();
    let local = opts.local_data_dir.clone();
    let host = tokio::task::spawn_blocking(move || HostSnapshot::read(local.as_deref()))
        .await
        .unwrap_or_else(|_| HostSnapshot::read(None));
    let mut report = new_report(&target, &spec, &opts, &host, &run_id);
    let recorder = opts.recorder.clone();
    let open = Opening {
        target,
        opts,
        emit,
        cancel,
        run_id,
        host,
    };
    let (ctx, control) = match open.prepare(&mut spec, &mut report).await {
        Ok(opened) => opened,
        Err(why) => return failed(recorder.as_deref(), report, why),
    };
    let result = run_trials(&ctx, &spec, &mut report).await;
    finish(ctx, control, report, result).await
}

/// The record a run fills, before anything is known of the server.
fn new_report(
    target: &Target,
    spec: &ExperimentSpec,
    opts: &RunOptions,
    host: &HostSnapshot,
    run_id: &str,
) -> RunReport {
    let started_at = Utc::now();
    RunReport {
        schema_version: SCHEMA_VERSION,
        run_id: run_id.to_string(),
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
        body: empty_body(spec),
    }
}

/// A run that ends before its first trial: recorded as failed, with the reason.
fn failed(recorder: Option<&dyn Recorder>, mut report: RunReport, error: String) -> RunEvent {
    report.outcome = Outcome::Failed;
    report.error = Some(error.clone());
    report.finished_at = Utc::now();
    record(recorder, &report);
    RunEvent::Failed {
        error,
        report: Box::new(report),
    }
}

/// A spec whose settings sweep was rewritten (a synchronous standby, `all` and `N%ram` written
/// out for this server): the record says what runs.
fn respec(report: &mut RunReport, spec: &mut ExperimentSpec, sweep: SettingsSweep) {
    spec.set_settings(sweep);
    report.spec_key = spec.spec_key();
    report.body = empty_body(spec);
}

/// What a run has before it touches the server.
struct Opening {
    target: Arc<Target>,
    opts: RunOptions,
    emit: Emitter,
    cancel: CancellationToken,
    run_id: String,
    host: HostSnapshot,
}

impl Opening {
    /// Connect, refuse what must not run, plan the settings, hold the what-if lock and ensure
    /// the lab schema: the context trials run in, and the control session that holds the
    /// run's lock until the end. Past the what-if lock, a refusal puts the settings back.
    async fn prepare(
        self,
        spec: &mut ExperimentSpec,
        report: &mut RunReport,
    ) -> Result<(RunCtx, tokio_postgres::Client), String> {
        let target = self.target.clone();
        let control = target.connect().await.map_err(|e| e.to_string())?;
        let server = snapshot::read(&control, &target)
            .await
            .map_err(|e| e.to_string())?;
        report.server = Some(server.fingerprint());
        let on_sandbox = target.is_sandbox() && self.opts.sandbox.is_some();
        super::preflight::may_run(&server, spec, on_sandbox)?;
        // Held for the whole run: `pglab clean` leaves the tables of a live run alone.
        super::leftovers::hold_run_lock(&control, &self.run_id).await?;
        let dead = dead_runs(&control, spec, &self.opts.schema, on_sandbox).await;
        let sandbox = self.opts.sandbox.clone().filter(|_| on_sandbox);
        let sync_note = with_sync_standby(spec, report, sandbox.as_ref());
        let reach = super::whatif::Reach::of(on_sandbox, server.citus.is_some());
        let (plan, standby_note) = plan_settings(&control, spec, reach).await?;
        if !plan.is_empty() && &plan.sweep != spec.settings() {
            respec(report, spec, plan.sweep.clone());
        }
        let replay = leave_out(&control, spec, report, &self.opts.schema, on_sandbox).await?;
        if let Some(why) = sandbox
            .as_ref()
            .and_then(|sb| super::whatif::sandbox_conflict(sb, &plan))
        {
            return Err(why);
        }
        // pglab's own sandbox (Citus included) is the one server that is pglab's to checkpoint.
        let checkpoint = super::checkpoint::CheckpointPlan::decide(
            spec.checkpoint_mode(),
            target.is_sandbox(),
            server.can_checkpoint,
        );
        let mut ctx = RunCtx::new(
            target,
            self.emit,
            self.cancel,
            self.run_id,
            self.opts,
            server,
            self.host,
        );
        ctx.whatif = super::whatif::Applier::new(plan, sandbox.clone());
        ctx.checkpoint = checkpoint;
        enter(
            &ctx,
            &control,
            spec,
            sandbox.as_ref(),
            on_sandbox,
            sync_note,
        )
        .await?;
        if let Some(note) = standby_note {
            ctx.note(note).await;
        }
        for said in dead.into_iter().chain(replay) {
            ctx.note(said).await;
        }
        Ok((ctx, control))
    }
}

/// Runs killed outright before this one left their tables on a server pglab did not start:
/// found (and, by a run that writes there itself, dropped) before anything of this run is
/// made. The sentences to say.
async fn dead_runs(
    control: &tokio_postgres::Client,
    spec: &ExperimentSpec,
    schema: &str,
    on_sandbox: bool,
) -> Vec<String> {
    if on_sandbox {
        return Vec::new();
    }
    // Only a run let write here (`writes = lab`) drops anything.
    let writes = spec.writes_on_foreign_servers()
        && super::lab_writes::check(spec, schema, true, false).is_ok();
    super::leftovers_dead::sweep(control, schema, writes).await
}

/// A captured workload's replay: the statements that cannot run here are left out of the
/// spec (and the record) before the first trial; the sentences to say, one per statement left
/// out and the coverage. Err: the replay cannot go on (the server, or nothing left).
async fn leave_out(
    control: &tokio_postgres::Client,
    spec: &mut ExperimentSpec,
    report: &mut RunReport,
    schema: &str,
    on_sandbox: bool,
) -> Result<Vec<String>, String> {
    use crate::experiment::query::replay_skip;
    let ExperimentSpec::Query(q) = &*spec else {
        return Ok(Vec::new());
    };
    let Some(coverage) = replay_skip::check(control, q, schema, on_sandbox)
        .await
        .map_err(|e| e.to_string())?
    else {
        return Ok(Vec::new());
    };
    *spec = ExperimentSpec::Query(Box::new(replay_skip::without(q, &coverage)));
    report.spec_key = spec.spec_key();
    report.body = empty_body(spec);
    let said = coverage.sentences();
    if let super::record::ReportBody::Query(r) = &mut report.body {
        r.replay = Some(coverage);
    }
    Ok(said)
}

/// The run's settings checked against the server; a run that reads on a standby applies its
/// standby settings there, one that does not is told they change nothing on the primary.
async fn plan_settings(
    control: &tokio_postgres::Client,
    spec: &ExperimentSpec,
    reach: super::whatif::Reach,
) -> Result<(super::whatif::WhatIf, Option<String>), String> {
    let mut plan = super::whatif::check(control, spec.settings(), reach)
        .await
        .map_err(|problems| problems.join("; "))?;
    let note = if spec.reads_on_standby() {
        super::standby_settings::move_to_standby(&mut plan);
        None
    } else {
        super::standby_settings::on_primary_note(&plan)
    };
    Ok((plan, note))
}

/// With sandbox standbys, a sweep of synchronous commit levels names them as synchronous:
/// the spec and the record say so, and the note why.
fn with_sync_standby(
    spec: &mut ExperimentSpec,
    report: &mut RunReport,
    sandbox: Option<&crate::server::sandbox::Sandbox>,
) -> Option<String> {
    let (sweep, note) = super::sync_standby::with_sync_standby(spec, sandbox?)?;
    respec(report, spec, sweep);
    tracing::info!("{note}");
    Some(note)
}

/// Take the what-if lock and the lab schema. A run that reloads or restarts the sandbox holds
/// the what-if lock from here, before its first trial (before its dataset, even): a pglab
/// starting meanwhile is refused rather than measuring settings this run is about to change.
/// One that got in just before is seen by its lease, and this run gives way.
async fn enter(
    ctx: &RunCtx,
    control: &tokio_postgres::Client,
    spec: &ExperimentSpec,
    sandbox: Option<&crate::server::sandbox::Sandbox>,
    on_sandbox: bool,
    sync_note: Option<String>,
) -> Result<(), String> {
    ctx.whatif.begin(&ctx.target).await?;
    if let Some(why) = sandbox.and_then(|sb| super::whatif::users_conflict(sb, &ctx.whatif.plan)) {
        let _ = ctx.whatif.restore(&ctx.target).await;
        return Err(why);
    }
    if let Some(note) = sync_note {
        ctx.note(note).await;
    }
    // Generated tables on a server pglab did not start only with `writes = lab`, whichever
    // front end started the run (the gate said so before; this holds for any caller).
    if !ctx.on_pglab_server()
        && let Err(w) = super::lab_writes::check(spec, &ctx.opts.schema, true, false)
    {
        let _ = ctx.whatif.restore(&ctx.target).await;
        return Err(w.to_string());
    }
    // A query on a server pglab did not start writes nothing there: no lab schema.
    let needs_schema = on_sandbox || spec.writes_on_foreign_servers();
    if needs_schema && let Err(e) = ctx.ensure_schema(control).await {
        let _ = ctx.whatif.restore(&ctx.target).await;
        return Err(e.to_string());
    }
    Ok(())
}

/// The kind's trials. A panic inside the experiment (a bug) ends the run like a failure: the
/// cleanup and the settings' restore after it still run before the what-if lock is released.
async fn run_trials(
    ctx: &RunCtx,
    spec: &ExperimentSpec,
    report: &mut RunReport,
) -> Result<(), RunError> {
    let body = async { each_kind!(spec, s => run_kind(ctx, s, &mut report.body).await) };
    match AssertUnwindSafe(body).catch_unwind().await {
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
    }
}

/// After the trials, whatever happened: drop the run's tables, release the run's lock (the
/// control session), put the settings back, say both, and record the run with its outcome.
async fn finish(
    ctx: RunCtx,
    control: tokio_postgres::Client,
    mut report: RunReport,
    result: Result<(), RunError>,
) -> RunEvent {
    clean_up(&ctx).await;
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
    let recorder = ctx.opts.recorder.as_deref();
    match result {
        Ok(()) => {
            report.outcome = Outcome::Finished;
            record(recorder, &report);
            RunEvent::Finished(Box::new(report))
        }
        Err(RunError::Cancelled) => {
            report.outcome = Outcome::Cancelled;
            record(recorder, &report);
            RunEvent::Cancelled(Box::new(report))
        }
        Err(e) => failed(recorder, report, e.to_string()),
    }
}

/// This run's transient tables go; a fresh session does it because the experiment's own may
/// be the one that broke.
async fn clean_up(ctx: &RunCtx) {
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
    match ctx.drop_made_schema().await {
        Ok(Some(said)) => ctx.note(said).await,
        Ok(None) => {}
        Err(e) => {
            ctx.note(format!(
                "the lab schema this run created is still there ({e}); `pglab clean` removes what is in it"
            ))
            .await
        }
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
