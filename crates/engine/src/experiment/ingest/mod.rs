//! ingest: rows/s as the loading method, the batch size, the number of concurrent clients and
//! `synchronous_commit` vary (the second founding experiment: a document store's bulk-insert
//! benchmark, asked of PostgreSQL).
//!
//! Each trial loads `rows` rows into `(id bigint, payload text|jsonb)` in the lab schema — a
//! fresh table per trial, or one table for the whole run with `append` — by one of:
//! `insert` (a commit per row), `insert-tx` (B prepared inserts per transaction), `values`
//! (one `INSERT … VALUES` of B rows), `copy` (binary `COPY` of B rows). Every client has its
//! own session. Measured: rows/s, batch latency percentiles, rows/s per second of the trial
//! (decay), WAL bytes per row and commits; for `insert` waiting for every flush, commits/s
//! as a fraction of the disk's fsync rate.
//!
//! Every configuration runs `repeat` times (default 4), by rounds so that drift spreads over all
//! configurations, each trial after a `CHECKPOINT` when the role may run one. With `auto`,
//! rounds after the third hold only the configurations some verdict still needs, up to
//! `max-repeat`. The summary (`summary`) states every finding in the statistics core's words.
//!
//! The fsync rate comes from the spec's `fsync_ops_per_s` when the caller has a probe result
//! (the TUI's Host pane); otherwise, when the server's data directory is local and some trial
//! is `insert` with a synchronous_commit that waits for the flush, the run probes it for 2 s
//! (`host::probe::fsync_latency`) after the trials, so the probe's writes disturb none.

pub(crate) mod citus_copy;
mod client;
mod client_cpu;
mod eta;
mod experiment;
mod facts;
mod kinds;
mod meter;
mod payload;
mod plan;
mod pq_loader;
#[cfg(test)]
mod record_schema_tests;
mod report;
mod samples;
mod spec;
pub(crate) mod summary;
pub(crate) mod sync_levels;
pub(crate) mod table;
mod trial;
mod verdicts;
mod whatif;
mod worker;

pub use client::open_session;
pub use kinds::{Method, PayloadType, SyncCommit};
pub(crate) use plan::TrialPlan;
pub use report::{COLUMNS, FsyncRef, IngestReport, IngestTrial, LatencyMs, StopReason};
pub use spec::{FIELDS, IngestSpec};
#[cfg(test)]
pub(crate) use summary::tests::trial as test_trial;
pub(crate) use summary::{ConfigStat, IngestGroup};
pub use trial::split_rows;
pub use verdicts::Question;

use std::time::Duration;

use super::lab::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::{RunCtx, RunError};
use crate::experiment::lab::decision::Repeat;
use crate::experiment::lab::standby_beside;
use crate::experiment::lab::standby_fault::Injector;
use crate::experiment::lab::standby_rtt::{self, Distance};
use crate::host::probe::{FsyncSpec, ProbeError, fsync_latency};
use crate::measure::units::format_count;

/// How long the run probes the disk's fsync rate when it has to.
const FSYNC_PROBE: Duration = Duration::from_secs(2);

fn layout() -> ResultLayout {
    ResultLayout {
        x_label: "batch size".into(),
        x_unit: "rows".into(),
        x_log: true,
        y_label: "rows/s".into(),
        y_unit: "rows/s".into(),
        y_log: true,
        y_better: crate::measure::verdict::Better::Higher,
        columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
        x_names: Vec::new(),
        ..Default::default()
    }
}

fn describe(spec: &IngestSpec, trials: usize) -> String {
    let list = |v: Vec<String>| v.join(",");
    let t = spec.to_text();
    format!(
        "ingest · {} rows × {} · {} · batch {} · clients {} · sync {} · payload {} {}{}{}",
        format_count(spec.rows as f64),
        match spec.repeat {
            Repeat::Auto => format!(
                "up to {trials} trials (auto: {}..{} per configuration, until decided)",
                spec.repeat.initial(),
                spec.rounds()
            ),
            Repeat::Fixed(n) => format!("{trials} trials ({n} per configuration)"),
        },
        list(
            spec.methods
                .iter()
                .map(|m| m.as_str().to_string())
                .collect()
        ),
        t["batch"],
        t["clients"],
        t["sync-commit"],
        spec.payload.text,
        spec.payload_type.as_str(),
        if spec.indexes > 0 {
            format!(" · {} indexes", spec.indexes)
        } else {
            String::new()
        },
        match spec.duration_s {
            Some(_) => format!(" · at most {} each", t["duration"]),
            None => String::new(),
        }
    )
}

/// The fsync rate to compare `insert` commits with: the spec's, or a 2 s probe of the local
/// data directory when some trial needs it.
async fn fsync_rate(ctx: &RunCtx, spec: &IngestSpec) -> Result<Option<FsyncRef>, RunError> {
    if let Some(ops) = spec.fsync_ops_per_s {
        return Ok(Some(FsyncRef {
            ops_per_s: ops,
            source: "spec".into(),
        }));
    }
    let needed = spec
        .plan()
        .iter()
        .any(|p| p.method == Method::Insert && p.sync.waits_for_flush());
    if !needed {
        return Ok(None);
    }
    // Never in the server's own data directory: only where pglab owns the directory.
    let Some(dir) = ctx.opts.probe_dir.clone() else {
        ctx.note("insert commits are not compared with the disk's fsync rate: pglab has no directory of its own on the server's device (name one with --probe-dir, or probe on the server's host)").await;
        return Ok(None);
    };
    ctx.emit
        .phase(None, "probing the disk's fsync rate (2 s)")
        .await;
    let cancel = ctx.cancel.clone();
    let probe = FsyncSpec {
        dir,
        duration: FSYNC_PROBE,
        block_bytes: 0,
    };
    let r = tokio::task::spawn_blocking(move || fsync_latency(&probe, &cancel, &mut |_| {})).await;
    match r {
        Ok(Ok(r)) => Ok(Some(FsyncRef {
            ops_per_s: r.ops_per_s,
            source: "probe".into(),
        })),
        Ok(Err(ProbeError::Cancelled)) => Err(RunError::Cancelled),
        Ok(Err(e)) => {
            ctx.note(format!("fsync probe skipped: {e}")).await;
            Ok(None)
        }
        Err(e) => {
            ctx.note(format!("fsync probe skipped: {e}")).await;
            Ok(None)
        }
    }
}

pub(crate) async fn run(
    ctx: &RunCtx,
    spec: &IngestSpec,
    report: &mut IngestReport,
) -> Result<(), RunError> {
    let mut confounders = Vec::new();
    let fault = standby_beside::fault_of(ctx, spec.fault).await?;
    let distance = Distance::for_run(ctx, &spec.set)?;
    let beside = Beside {
        fault: fault.as_ref(),
        distance: distance.as_ref(),
    };
    let result = trials(ctx, spec, report, &mut confounders, beside).await;
    standby_beside::put_back(ctx, fault.as_ref()).await;
    standby_rtt::put_back(ctx, distance.as_ref()).await;
    report.summarize(&confounders);
    if result.is_ok() {
        // Probed after the trials, so that its writes cannot disturb a measurement.
        match fsync_rate(ctx, spec).await {
            Ok(f) => {
                report.fsync = f;
                report.apply_fsync();
                report.summarize(&confounders);
            }
            Err(e) => return Err(e),
        }
    }
    // The findings the report gives, as notes: the TUI's run pane and the headless progress
    // show the same sentences (also for a cancelled run's partial results).
    for f in report.summary.findings.clone() {
        ctx.note(f).await;
    }
    result
}

/// What runs beside the trials on the sandbox's standbys: a fault, a swept distance.
#[derive(Clone, Copy)]
struct Beside<'a> {
    fault: Option<&'a Injector>,
    distance: Option<&'a Distance>,
}

/// Enter `p`'s combination of swept settings — a restart ends every session, so the run's
/// own one starts again (warmed up when asked) — and its standbys' distance.
async fn enter(
    ctx: &RunCtx,
    spec: &IngestSpec,
    p: &TrialPlan,
    control: &mut tokio_postgres::Client,
    beside: Beside<'_>,
) -> Result<(), RunError> {
    let restarted = matches!(
        ctx.enter_combo(p.combo).await?,
        crate::experiment::lab::whatif::Entered::Restarted { .. }
    );
    if restarted {
        *control = ctx.session().await?;
    }
    if let (Some(d), Some(rtt)) = (beside.distance, standby_rtt::rtt_of(&ctx.whatif.combo())) {
        d.enter(ctx, control, rtt).await?;
        // A standby the fault stops comes back at this trial's distance.
        if let Some(f) = beside.fault {
            f.at_distance(rtt);
        }
    }
    if restarted && spec.warmup {
        warm_up(ctx, control, spec, p).await?;
    }
    Ok(())
}

/// One untimed trial of `p` into a table of its own (dropped after): after a restart the
/// server's caches are cold, and the first timed trial should not pay for warming them.
async fn warm_up(
    ctx: &RunCtx,
    control: &tokio_postgres::Client,
    spec: &IngestSpec,
    p: &TrialPlan,
) -> Result<(), RunError> {
    let tref = TrialRef {
        index: 0,
        total: 0,
        label: format!("{} · warm-up after the restart", p.label()),
    };
    ctx.emit.phase(Some(tref.clone()), "warm-up").await;
    let name = format!("{}_warmup", table::table_name(&ctx.run_id, None));
    table::create(ctx, control, &name, spec).await?;
    let at = trial::TrialTable {
        name: &name,
        first_id: 1,
        rows_before: 0,
    };
    let r = trial::run(ctx, control, spec, p, &tref, &at, None).await;
    table::drop(ctx, control, &name).await?;
    r.map(|_| ())
}

/// The configurations of round `round` that `keep` takes (one restart block of swept
/// settings): all of them for the first `repeat.initial()` rounds; with `auto`, then only
/// those some undecided verdict still needs, up to `max-repeat` rounds. Every block has run
/// each earlier round (rounds visit every block), so `auto` decides on all the trials.
fn next_round(
    spec: &IngestSpec,
    round: u32,
    trials: &[IngestTrial],
    keep: impl Fn(&TrialPlan) -> bool,
) -> Vec<TrialPlan> {
    if round <= spec.repeat.initial() {
        return spec.plan().into_iter().filter(|p| keep(p)).collect();
    }
    if !spec.repeat.is_auto() || round > spec.rounds() {
        return Vec::new();
    }
    verdicts::undecided(&spec.plan(), trials, &spec.decision.rules_for(spec.repeat))
        .into_iter()
        .filter(|p| keep(p))
        .collect()
}

/// Fail early if the server has no room for this experiment's sessions. The guard checked
/// this before the run when the caller used it; check again here. The snapshot was taken
/// on the runner's control session, which stays open, so it is already counted as in use:
/// this experiment needs its own session plus one per client. The loader choice (an
/// environment variable for the benchmark) is checked before anything is created.
fn check_connections(ctx: &RunCtx, spec: &IngestSpec) -> Result<(), RunError> {
    pq_loader::wanted(kinds::Method::Insert).map_err(RunError::Failed)?;
    let need = spec.max_clients() as i64 + 1;
    if let Some(free) = ctx.server.free_connection_slots()
        && need > free
    {
        return Err(RunError::Failed(format!(
            "{} clients need {need} more connections but the server has only {} free: use fewer clients or raise max_connections",
            spec.max_clients(),
            free.max(0)
        )));
    }
    Ok(())
}

/// Tell the run has started (with the most trials it may take) and note what the spec
/// leaves out and what may confound it.
async fn announce(ctx: &RunCtx, spec: &IngestSpec, total: usize, confounders: &mut Vec<String>) {
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: describe(spec, total),
            trials: total,
            layout: crate::experiment::lab::whatif::layout_with(layout(), &spec.set),
        })
        .await;
    if spec.methods.contains(&Method::Insert) && spec.batches != [1] {
        ctx.note("insert commits every row, so it runs at batch 1 only")
            .await;
    }
    if spec.pipeline && !spec.methods.contains(&Method::InsertTx) {
        ctx.note("pipeline applies to insert-tx only (insert waits for each commit; values and copy send a batch as one statement)").await;
    }
    if let Some(c) = &ctx.checkpoint.confounder {
        ctx.note(c.clone()).await;
        confounders.push(c.clone());
    }
    if spec.append && spec.rounds() > 1 {
        confounders.push("append with repeats: every round loads into a larger table; rounds interleave the configurations, so each sees a similar spread of sizes".into());
    }
}

/// The trial's place in the run and its label: the configuration, its settings, and the
/// round when there are several.
fn trial_ref(
    spec: &IngestSpec,
    p: &TrialPlan,
    labels: &[String],
    (index, total): (usize, usize),
    round: u32,
) -> TrialRef {
    let mut label = p.label();
    if let Some(l) = labels.get(p.combo).filter(|l| !l.is_empty()) {
        label.push_str(&format!(" · {l}"));
    }
    TrialRef {
        index,
        total,
        label: if spec.rounds() > 1 {
            format!("{label} · #{round}")
        } else {
            label
        },
    }
}

/// The chart's point for a trial: its rows per second at its batch size.
fn sample_of(spec: &IngestSpec, t: &IngestTrial, labels: &[String]) -> Sample {
    Sample {
        series: t.series_name(),
        x: t.batch as f64,
        y: t.rows_per_s,
        projected: false,
        cells: {
            let mut cells = t.cells(spec);
            if !spec.set.is_empty() {
                cells.push(t.settings_label());
            }
            cells
        },
        settings: labels.get(t.combo).cloned().unwrap_or_default(),
        ..Default::default()
    }
}

/// With `repeat auto`, say how many configurations were still undecided when the rounds ran out.
async fn note_undecided(ctx: &RunCtx, spec: &IngestSpec, report: &IngestReport) {
    if spec.repeat.is_auto() {
        let left = verdicts::undecided(
            &spec.plan(),
            &report.trials,
            &spec.decision.rules_for(spec.repeat),
        );
        if !left.is_empty() {
            ctx.note(format!(
                "repeat auto stopped at max-repeat {} with {} configuration{} still undecided",
                spec.decision.max_repeat,
                left.len(),
                if left.len() == 1 { "" } else { "s" }
            ))
            .await;
        }
    }
}

async fn trials(
    ctx: &RunCtx,
    spec: &IngestSpec,
    report: &mut IngestReport,
    confounders: &mut Vec<String>,
    beside: Beside<'_>,
) -> Result<(), RunError> {
    check_connections(ctx, spec)?;
    // Progress counts the most trials the run may take (`auto` usually stops earlier).
    let total = spec.trials();
    announce(ctx, spec, total, confounders).await;

    let mut control = ctx.session().await?;
    if spec.distribute {
        report.citus_connections = citus_copy::read(&control).await;
    }
    let append = table::table_name(&ctx.run_id, None);
    if spec.append {
        ctx.emit.phase(None, "creating the table").await;
        table::create(ctx, &control, &append, spec).await?;
    }
    let mut first_id: i64 = 1;
    let mut rows_before: u64 = 0;
    let mut index = 0;
    // Rounds: every configuration once per round. Combinations that need a restart are
    // grouped by restart block inside a round, and every round visits every block (ABAB…,
    // or rotating with three or more), so no value runs all its repeats in one block; the
    // others (reloads, session settings) interleave trial by trial.
    let blocks = ctx.whatif.plan.blocks(spec.set.combo_count());
    let distinct = crate::experiment::lab::whatif::distinct_blocks(&blocks);
    let labels = spec.combo_labels();
    let mut round = 1;
    loop {
        let mut any = false;
        for block in crate::experiment::lab::whatif::round_blocks(&distinct, round as usize - 1) {
            let configs = next_round(spec, round, &report.trials, |p| {
                blocks.get(p.combo) == Some(&block)
            });
            any |= !configs.is_empty();
            for p in &configs {
                ctx.check()?;
                enter(ctx, spec, p, &mut control, beside).await?;
                index += 1;
                let tref = trial_ref(spec, p, &labels, (index, total), round);
                let name = if spec.append {
                    append.clone()
                } else {
                    ctx.emit
                        .phase(Some(tref.clone()), "creating the table")
                        .await;
                    let name = table::table_name(&ctx.run_id, Some(index));
                    table::create(ctx, &control, &name, spec).await?;
                    first_id = 1;
                    rows_before = 0;
                    name
                };
                if ctx.checkpoint.take {
                    ctx.emit.phase(Some(tref.clone()), "CHECKPOINT").await;
                    ctx.cancellable(&control, control.batch_execute("CHECKPOINT"))
                        .await?;
                }
                let at = trial::TrialTable {
                    name: &name,
                    first_id,
                    rows_before,
                };
                let mut t = trial::run(ctx, &control, spec, p, &tref, &at, beside.fault).await?;
                t.repeat = round;
                t.checkpoint = ctx.checkpoint.take;
                if spec.append {
                    first_id += t.rows as i64;
                    rows_before = t.rows_counted;
                } else {
                    table::drop(ctx, &control, &name).await?;
                }
                let sample = sample_of(spec, &t, &labels);
                report.trials.push(t);
                report.summarize(confounders);
                ctx.emit.sample(sample).await;
            }
        }
        if !any {
            break;
        }
        round += 1;
    }
    note_undecided(ctx, spec, report).await;
    Ok(())
}
