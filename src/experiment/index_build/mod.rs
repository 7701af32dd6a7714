//! index-build: how long `CREATE INDEX` takes as `maintenance_work_mem`, parallel workers and
//! the physical order of the input vary (the first founding experiment).

pub mod dataset;
mod report;
mod spec;
pub mod summary;
pub mod trial;

pub use report::{
    DatasetInfo, GroupSummary, IndexBuildReport, IndexSummary, IndexTrial, MwmStat, OrderSummary,
    SettingRef,
};
pub use spec::{FIELDS, IndexBuildSpec, IndexMethod, KeyType, MWM_MAX, MWM_MIN, Order};

use rand::SeedableRng;
use rand::seq::SliceRandom;

use super::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::{RunCtx, RunError};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use trial::{Sessions, TrialSetup};

/// How the results are drawn: seconds against memory (log axis), one line per order.
pub fn layout() -> ResultLayout {
    ResultLayout {
        x_label: "maintenance_work_mem".into(),
        x_unit: "bytes".into(),
        x_log: true,
        y_label: "seconds".into(),
        y_unit: "s".into(),
        y_log: false,
        columns: [
            "order", "workers", "mwm", "rep", "seconds", "launched", "index", "temp", "sort",
        ]
        .map(String::from)
        .to_vec(),
    }
}

/// The trials of one dataset in the order they run: an optional warm-up, then rounds of
/// repeats (so drift spreads over all settings), shuffled when asked.
pub fn plan(spec: &IndexBuildSpec) -> Vec<(u32, bool, u32, crate::measure::units::Size)> {
    let mut timed = Vec::new();
    for repeat in 1..=spec.repeat.initial() {
        for &w in &spec.workers {
            for m in &spec.mwm {
                timed.push((repeat, false, w, m.clone()));
            }
        }
    }
    if spec.shuffle {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(spec.seed ^ 0x5eed);
        timed.shuffle(&mut rng);
    }
    let mut out = Vec::new();
    if spec.warmup
        && let (Some(&w), Some(m)) = (spec.workers.first(), spec.mwm.first())
    {
        out.push((0, true, w, m.clone()));
    }
    out.extend(timed);
    out
}

fn series_name(spec: &IndexBuildSpec, order: Order, workers: u32) -> String {
    if spec.workers.len() > 1 || workers > 0 {
        format!("{} ×{}w", order.name(), workers)
    } else {
        order.name()
    }
}

pub async fn run(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut IndexBuildReport,
) -> Result<(), RunError> {
    let total: usize = spec.orders.len() * plan(spec).len();
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: format!(
                "{} rows of {} · {} · mwm {} · workers {} · ×{} → {} trials",
                format_count(spec.rows as f64),
                spec.key.as_str(),
                spec.orders
                    .iter()
                    .map(|o| o.name())
                    .collect::<Vec<_>>()
                    .join(","),
                spec.mwm
                    .iter()
                    .map(|m| m.text.clone())
                    .collect::<Vec<_>>()
                    .join(","),
                spec.workers
                    .iter()
                    .map(|w| w.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                spec.repeat,
                total
            ),
            trials: total,
            layout: layout(),
        })
        .await;
    let mut confounders = Vec::new();
    let result = sweep(ctx, spec, report, total, &mut confounders).await;
    // The index of the last trial goes on every path; the dataset stays for reuse.
    if let Ok(c) = ctx.target.connect().await {
        let mut dropped = Vec::new();
        for d in &report.datasets {
            let name = trial::index_name(&d.table);
            let existed = c
                .query_opt(
                    "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = $1 AND c.relname = $2",
                    &[&ctx.opts.schema, &name],
                )
                .await
                .ok()
                .flatten()
                .is_some();
            if existed
                && c.batch_execute(&format!("DROP INDEX IF EXISTS {}", ctx.table(&name)))
                    .await
                    .is_ok()
            {
                dropped.push(name);
            }
        }
        if !dropped.is_empty() {
            ctx.note(format!(
                "cleaned up: dropped index {} (the datasets stay for reuse)",
                dropped.join(", ")
            ))
            .await;
        }
    }
    if !ctx.server.can_checkpoint {
        confounders.push("CHECKPOINT skipped: the role is neither superuser nor in pg_checkpoint, so dirty buffers from earlier work may be written during builds".into());
    }
    report.summarize(&confounders);
    for f in report.summary.findings.clone() {
        ctx.note(f).await;
    }
    result
}

async fn sweep(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut IndexBuildReport,
    total: usize,
    confounders: &mut Vec<String>,
) -> Result<(), RunError> {
    if !ctx.server.can_checkpoint {
        ctx.note("CHECKPOINT before each build is skipped: the role is neither superuser nor a member of pg_checkpoint").await;
    }
    let mut index = 0usize;
    let mut autovac_hits = Vec::new();
    for &order in &spec.orders {
        ctx.check()?;
        let ds = dataset::ensure(ctx, spec, order).await?;
        ctx.note(format!(
            "dataset {}: {} rows, {} heap, correlation {}",
            ds.table,
            format_count(ds.rows as f64),
            format_bytes(ds.heap_bytes.max(0) as u64),
            ds.correlation
                .map(|c| format!("{c:.3}"))
                .unwrap_or_else(|| "unknown".into())
        ))
        .await;
        report.datasets.push(ds.clone());
        let mut sessions = Sessions::open(ctx).await?;
        for (repeat, warmup, workers, mwm) in plan(spec) {
            ctx.check()?;
            index += 1;
            let label = format!(
                "{} · {}{}{}",
                order.name(),
                mwm.text,
                if workers > 0 {
                    format!(" · {workers}w")
                } else {
                    String::new()
                },
                if warmup {
                    " · warm-up".to_string()
                } else {
                    format!(" · #{repeat}")
                }
            );
            let setup = TrialSetup {
                order,
                mwm,
                workers,
                repeat,
                warmup,
                trial: TrialRef {
                    index,
                    total,
                    label,
                },
            };
            if trial::autovacuum_active(&sessions.watcher, &ctx.opts.schema, &ds.table).await {
                autovac_hits.push(setup.trial.label.clone());
                confounders.push(format!(
                    "autovacuum was working on {} during {}",
                    ds.table, setup.trial.label
                ));
            }
            let t = trial::run(
                ctx,
                spec,
                &mut sessions,
                &ds,
                &setup,
                ctx.server.can_checkpoint,
            )
            .await?;
            ctx.emit
                .sample(Sample {
                    series: series_name(spec, order, workers),
                    x: t.maintenance_work_mem_bytes as f64,
                    y: t.seconds,
                    projected: t.warmup,
                    cells: vec![
                        order.name(),
                        workers.to_string(),
                        t.maintenance_work_mem.clone(),
                        if t.warmup {
                            "w".into()
                        } else {
                            t.repeat.to_string()
                        },
                        format!("{:.3}", t.seconds),
                        t.workers_launched.to_string(),
                        format_bytes(t.index_bytes.max(0) as u64),
                        format_bytes(t.temp_bytes.max(0) as u64),
                        t.sort.clone().unwrap_or_default(),
                    ],
                })
                .await;
            tracing::info!(
                "trial {}: {} in {}",
                setup.trial.label,
                t.maintenance_work_mem,
                format_seconds(t.seconds)
            );
            report.trials.push(t);
        }
    }
    if !autovac_hits.is_empty() {
        ctx.note(format!(
            "autovacuum was working on the table during: {}",
            autovac_hits.join(", ")
        ))
        .await;
    }
    Ok(())
}
