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
//! The fsync rate comes from the spec's `fsync_ops_per_s` when the caller has a probe result
//! (the TUI's Host pane); otherwise, when the server's data directory is local and some trial
//! is `insert` with a synchronous_commit that waits for the flush, the run probes it for 2 s
//! (`host::probe::fsync_latency`) after the trials, so the probe's writes disturb none.

mod client;
mod meter;
mod payload;
mod report;
mod spec;
mod table;
mod trial;
mod worker;

pub use client::open_session;
pub use report::{
    COLUMNS, FsyncRef, IngestReport, IngestSummary, IngestTrial, LatencyMs, MethodBest, SeriesKnee,
    StopReason,
};
pub use spec::{FIELDS, IngestSpec, Method, PayloadType, SyncCommit, TrialPlan};
pub use trial::split_rows;

use std::time::Duration;

use super::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::{RunCtx, RunError};
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
    }
}

fn describe(spec: &IngestSpec, trials: usize) -> String {
    let list = |v: Vec<String>| v.join(",");
    let t = spec.to_text();
    format!(
        "ingest · {} rows × {trials} trials · {} · batch {} · clients {} · sync {} · payload {} {}{}{}",
        format_count(spec.rows as f64),
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
    let Some(dir) = ctx.opts.local_data_dir.clone() else {
        ctx.note("insert commits are not compared with the disk's fsync rate: the server's data directory is not local (probe it on the server's host)").await;
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

pub async fn run(
    ctx: &RunCtx,
    spec: &IngestSpec,
    report: &mut IngestReport,
) -> Result<(), RunError> {
    let plan = spec.plan();
    // The guard checked this before the run when the caller used it; check again here. The
    // snapshot was taken on the runner's control session, which stays open, so it is already
    // counted as in use: this experiment needs its own session plus one per client.
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
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: describe(spec, plan.len()),
            trials: plan.len(),
            layout: layout(),
        })
        .await;
    if spec.methods.contains(&Method::Insert) && spec.batches != [1] {
        ctx.note("insert commits every row, so it runs at batch 1 only")
            .await;
    }
    if spec.pipeline && !spec.methods.contains(&Method::InsertTx) {
        ctx.note("pipeline applies to insert-tx only (insert waits for each commit; values and copy send a batch as one statement)").await;
    }

    let control = ctx.session().await?;
    let append = table::table_name(&ctx.run_id, None);
    if spec.append {
        ctx.emit.phase(None, "creating the table").await;
        table::create(ctx, &control, &append, spec).await?;
    }
    let mut first_id: i64 = 1;
    let mut rows_before: u64 = 0;
    for (i, p) in plan.iter().enumerate() {
        ctx.check()?;
        let tref = TrialRef {
            index: i + 1,
            total: plan.len(),
            label: p.label(),
        };
        let name = if spec.append {
            append.clone()
        } else {
            ctx.emit
                .phase(Some(tref.clone()), "creating the table")
                .await;
            let name = table::table_name(&ctx.run_id, Some(i + 1));
            table::create(ctx, &control, &name, spec).await?;
            first_id = 1;
            rows_before = 0;
            name
        };
        let at = trial::TrialTable {
            name: &name,
            first_id,
            rows_before,
        };
        let t = trial::run(ctx, &control, spec, p, &tref, &at).await?;
        if spec.append {
            first_id += t.rows as i64;
            rows_before = t.rows_counted;
        } else {
            table::drop(ctx, &control, &name).await?;
        }
        let sample = Sample {
            series: t.series_name(),
            x: t.batch as f64,
            y: t.rows_per_s,
            projected: false,
            cells: t.cells(),
        };
        report.trials.push(t);
        report.summarize();
        ctx.emit.sample(sample).await;
    }
    // Probed after the trials, so that its writes cannot disturb a measurement.
    report.fsync = fsync_rate(ctx, spec).await?;
    report.apply_fsync();
    report.summarize();
    Ok(())
}
