//! index-build: how long `CREATE INDEX` takes as `maintenance_work_mem`, parallel workers and
//! the physical order of the input vary (the first founding experiment).

pub(crate) mod dataset;
mod eta;
mod experiment;
mod facts;
mod gate;
pub(crate) mod own_table;
pub(crate) mod own_writes;
pub(crate) mod projection;
#[cfg(test)]
pub(crate) mod projection_example;
mod report;
pub(crate) mod rounds;
mod samples;
pub(crate) mod shards;
pub(crate) mod sort_trace;
mod spec;
mod spec_values;
pub(crate) mod summary;
pub(crate) mod table_spec;
pub(crate) mod trial;

pub use report::{
    DatasetInfo, GroupSummary, IndexBuildReport, IndexSummary, IndexTrial, MwmStat, OrderSummary,
    SettingRef,
};
pub(crate) use sort_trace::SortMethod;
pub use spec::{FIELDS, IndexBuildSpec, IndexMethod, KeyType, MWM_MAX, MWM_MIN, Order};

use super::lab::decision::Repeat;
use super::lab::event::{ResultLayout, RunEvent, Sample, TrialRef};
use super::lab::whatif::{combo_label, with_combo};
use super::lab::{RunCtx, RunError};
use crate::measure::units::{format_bytes, format_bytes_short, format_count, format_seconds};
use tokio_postgres::Client;
use trial::{Sessions, TrialSetup};

/// Settings a DBA may expect to matter that CREATE INDEX never reads, and what it reads.
pub(crate) const UNREAD_SETTINGS: &[(&str, &str)] = &[
    (
        "work_mem",
        "CREATE INDEX sorts in maintenance_work_mem, which --mwm sweeps",
    ),
    (
        "hash_mem_multiplier",
        "CREATE INDEX sorts in maintenance_work_mem, which --mwm sweeps",
    ),
    (
        "max_parallel_workers_per_gather",
        "a parallel CREATE INDEX takes its workers from max_parallel_maintenance_workers, which --workers sweeps",
    ),
];

/// How the results are drawn: seconds against memory (log axis), one line per order.
pub fn layout() -> ResultLayout {
    ResultLayout {
        x_label: "maintenance_work_mem".into(),
        x_unit: "bytes".into(),
        x_log: true,
        y_label: "seconds".into(),
        y_unit: "s".into(),
        y_log: false,
        y_better: crate::measure::verdict::Better::Lower,
        columns: [
            "order", "workers", "mwm", "rep", "seconds", "launched", "index", "temp", "sort",
        ]
        .map(String::from)
        .to_vec(),
        x_names: Vec::new(),
        ..Default::default()
    }
}

/// "kept for reuse in schema pglab: dataset ib_… (127 MB); `pglab clean --datasets` drops it".
fn kept_note(schema: &str, kept: &[String]) -> Option<String> {
    match kept {
        [] => None,
        [one] => Some(format!(
            "kept for reuse in schema {schema}: dataset {one}; a later run with the same rows, key and order uses it, `pglab clean --datasets` drops it"
        )),
        many => Some(format!(
            "kept for reuse in schema {schema}: datasets {}; later runs with the same rows, key and order use them, `pglab clean --datasets` drops them",
            many.join(", ")
        )),
    }
}

fn series_name(spec: &IndexBuildSpec, order: Order, workers: u32, combo: usize) -> String {
    let name = if spec.workers.len() > 1 || workers > 0 {
        format!("{} ×{}w", order.name(), workers)
    } else {
        order.name()
    };
    with_combo(&name, &summary::combo_of(spec, combo))
}

/// The run's description in its Started event: the data, the sweep, the trials at the most.
fn describe(spec: &IndexBuildSpec, report: &IndexBuildReport, total: usize) -> String {
    let times = match spec.repeat {
        Repeat::Auto => format!("×auto (≤{})", spec.repeat.most(spec.decision.max_repeat)),
        Repeat::Fixed(n) => format!("×{n}"),
    };
    format!(
        "{} · {} · mwm {} · workers {}{} · {} → {}{} trials",
        match &report.own {
            Some(_) => projection::headline(report).unwrap_or_default(),
            None => format!(
                "{} rows of {}",
                format_count(spec.rows as f64),
                spec.key.as_str()
            ),
        },
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
        if spec.set.is_empty() {
            String::new()
        } else {
            format!(" · set {}", spec.set.text())
        },
        times,
        if spec.repeat.is_auto() { "≤" } else { "" },
        total
    )
}

pub(crate) async fn run(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut IndexBuildReport,
) -> Result<(), RunError> {
    let derived = own_table::prepare(ctx, spec, report).await?;
    let spec = derived.as_ref().unwrap_or(spec);
    // With repeat auto the total is the most it can take; the run may end sooner.
    let blocks = rounds::blocks(spec, &ctx.whatif.plan);
    let total: usize = spec.orders.len() * rounds::most_per_dataset(spec, &blocks);
    ctx.emit
        .send(RunEvent::Started {
            run_id: ctx.run_id.clone(),
            description: describe(spec, report, total),
            trials: total,
            layout: crate::experiment::lab::whatif::layout_with(layout(), &spec.set),
        })
        .await;
    let mut confounders = Vec::new();
    let result = sweep(ctx, spec, report, (total, &blocks), &mut confounders).await;
    // The index of the last trial goes on every path; the dataset stays for reuse on
    // pglab's sandbox (elsewhere it is the run's, dropped with its other tables).
    if let Ok(c) = ctx.target.connect().await {
        drop_last_indexes(ctx, &c, report).await;
        if ctx.on_pglab_server() {
            note_kept_datasets(ctx, &c, report).await;
        }
    }
    if let Some(c) = &ctx.checkpoint.confounder {
        confounders.push(c.clone());
    }
    report.summarize(&confounders);
    for f in report.summary.findings.clone() {
        ctx.note(f).await;
    }
    result
}

/// Drop the index a dataset still holds (the last trial's, when the run ended before its
/// drop), with a note naming them.
async fn drop_last_indexes(ctx: &RunCtx, c: &Client, report: &IndexBuildReport) {
    let mut dropped = Vec::new();
    for d in &report.datasets {
        let name = d.index_name();
        let existed = c
            .query_opt(
                "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = $1 AND c.relname = $2",
                &[&d.schema_in(&ctx.opts.schema), &name],
            )
            .await
            .ok()
            .flatten()
            .is_some();
        if existed
            && c.batch_execute(&format!(
                "DROP INDEX IF EXISTS {}",
                d.index_qualified(&ctx.opts.schema)
            ))
            .await
            .is_ok()
        {
            dropped.push(name);
        }
    }
    if !dropped.is_empty() {
        ctx.note(format!("cleaned up: dropped index {}", dropped.join(", ")))
            .await;
    }
}

/// On every path, finished or cancelled: a note of what stays in the lab schema and its size
/// (generated datasets only: an existing table is the user's, its copies are the run's).
async fn note_kept_datasets(ctx: &RunCtx, c: &Client, report: &IndexBuildReport) {
    let mut kept = Vec::new();
    for d in report.datasets.iter().filter(|_| report.own.is_none()) {
        let bytes: Option<i64> = c
            .query_opt(
                "SELECT pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = $1 AND c.relname = $2",
                &[&ctx.opts.schema, &d.table],
            )
            .await
            .ok()
            .flatten()
            .map(|r| r.get(0));
        if let Some(b) = bytes {
            kept.push(format!(
                "{} ({})",
                d.table,
                format_bytes_short(b.max(0) as f64)
            ));
        }
    }
    if let Some(note) = kept_note(&ctx.opts.schema, &kept) {
        ctx.note(note).await;
    }
}

async fn sweep(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut IndexBuildReport,
    (total, blocks): (usize, &[usize]),
    confounders: &mut Vec<String>,
) -> Result<(), RunError> {
    if let Some(c) = &ctx.checkpoint.confounder {
        ctx.note(c.clone()).await;
    }
    let mut index = 0usize;
    let mut autovac_hits = Vec::new();
    for &order in &spec.orders {
        ctx.check()?;
        let ds = match report.own.clone() {
            Some(info) => own_table::ensure(ctx, spec, &info, order).await?,
            None => dataset::ensure(ctx, spec, order).await?,
        };
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
        let distributed = ds.distribution.column.is_some();
        let mut sessions = Sessions::open(ctx, distributed).await?;
        let mut round = rounds::plan(spec, blocks);
        let mut rounds_run = spec.repeat.initial() as usize;
        while !round.is_empty() {
            for p in round {
                ctx.check()?;
                // A restart ends every session: the builder and watcher start again.
                if let crate::experiment::lab::whatif::Entered::Restarted { .. } =
                    ctx.enter_combo(p.combo).await?
                {
                    sessions = Sessions::open(ctx, distributed).await?;
                }
                index += 1;
                let at = Position {
                    sessions: &mut sessions,
                    dataset: &ds,
                    index,
                    total,
                };
                build(
                    ctx,
                    spec,
                    report,
                    at,
                    order,
                    p,
                    confounders,
                    &mut autovac_hits,
                )
                .await?;
            }
            round = rounds::next_round(report, order, blocks, rounds_run);
            rounds_run += usize::from(!round.is_empty());
        }
        if spec.repeat.is_auto() {
            auto_note(ctx, spec, report, order, rounds_run).await;
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

/// On a sample of a table (`sample`), the memory the build of setting `mwm` runs with:
/// scaled by the sample's fraction, so it sorts as the whole table would at `mwm`.
fn built_at(
    spec: &IndexBuildSpec,
    order: Order,
    mwm: &crate::measure::units::Size,
) -> Option<crate::measure::units::Size> {
    spec.table.as_ref()?.sample?;
    match order {
        Order::Copy(ppm) if ppm < 1_000_000 => {
            Some(projection::sample_memory(mwm, ppm as f64 / 1e6))
        }
        _ => None,
    }
}

/// A build's name in progress and logs: `copy:10% · 64MB (built at 6554kB on the sample) · 2w
/// · #1`.
fn trial_label(
    order: Order,
    p: &rounds::Planned,
    built_at: Option<&crate::measure::units::Size>,
    combo: &crate::experiment::lab::whatif::Combo,
) -> String {
    let workers = p.workers;
    format!(
        "{} · {}{}{}{}{}",
        order.name(),
        p.mwm.text,
        built_at
            .as_ref()
            .map(|b| format!(" (built at {b} on the sample)"))
            .unwrap_or_default(),
        if workers > 0 {
            format!(" · {workers}w")
        } else {
            String::new()
        },
        if combo.is_empty() {
            String::new()
        } else {
            format!(" · {}", combo_label(combo))
        },
        if p.warmup {
            " · warm-up".to_string()
        } else {
            format!(" · #{}", p.repeat)
        }
    )
}

/// Where a build runs: the sessions and dataset of its order, its place in the run.
struct Position<'a> {
    sessions: &'a mut Sessions,
    dataset: &'a DatasetInfo,
    index: usize,
    total: usize,
}

/// One timed (or warm-up) build, reported as a sample and kept in the report.
#[allow(clippy::too_many_arguments)]
async fn build(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut IndexBuildReport,
    at: Position<'_>,
    order: Order,
    p: rounds::Planned,
    confounders: &mut Vec<String>,
    autovac_hits: &mut Vec<String>,
) -> Result<(), RunError> {
    let ds = at.dataset;
    let workers = p.workers;
    let combo = summary::combo_of(spec, p.combo);
    let built_at = built_at(spec, order, &p.mwm);
    let label = trial_label(order, &p, built_at.as_ref(), &combo);
    let setup = TrialSetup {
        order,
        mwm: p.mwm,
        built_at,
        workers,
        combo: p.combo,
        repeat: p.repeat,
        warmup: p.warmup,
        trial: TrialRef {
            index: at.index,
            total: at.total,
            label,
        },
    };
    if trial::autovacuum_active(
        &at.sessions.watcher,
        ds.schema_in(&ctx.opts.schema),
        &ds.table,
    )
    .await
    {
        autovac_hits.push(setup.trial.label.clone());
        confounders.push(format!(
            "autovacuum was working on {} during {}",
            ds.table, setup.trial.label
        ));
    }
    let t = trial::run(ctx, spec, at.sessions, ds, &setup, ctx.checkpoint.take).await?;
    ctx.emit
        .sample(Sample {
            series: series_name(spec, order, workers, t.combo),
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
            ]
            .into_iter()
            .chain((!spec.set.is_empty()).then(|| combo_label(&combo)))
            .collect(),
            settings: combo_label(&combo),
            ..Default::default()
        })
        .await;
    tracing::info!(
        "trial {}: {} in {}",
        setup.trial.label,
        t.maintenance_work_mem,
        format_seconds(t.seconds)
    );
    report.trials.push(t);
    Ok(())
}

/// With repeat auto: how the order ended — decided, or stopped at the cap.
async fn auto_note(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &IndexBuildReport,
    order: Order,
    rounds_run: usize,
) {
    let (trials, _) = summary::sweep_of(report, order);
    let ns: Vec<usize> = trials.iter().map(|t| t.values.len()).collect();
    let (lo, hi) = (
        ns.iter().min().copied().unwrap_or(0),
        ns.iter().max().copied().unwrap_or(0),
    );
    let counts = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo} to {hi}")
    };
    let most = spec.repeat.most(spec.decision.max_repeat) as usize;
    let undecided = !crate::measure::finding::needs_more(
        &trials,
        crate::measure::verdict::Better::Lower,
        &spec.decision.rules_for(spec.repeat),
    )
    .is_empty();
    let how = if undecided && hi >= most {
        format!("stopped at max-repeat {most}, still undecided")
    } else {
        "decided".to_string()
    };
    ctx.note(format!(
        "{}: repeat auto: {counts} builds per setting in {rounds_run} rounds, {how}",
        order.name()
    ))
    .await;
}

#[cfg(test)]
mod tests {
    use super::kept_note;

    #[test]
    fn what_a_run_keeps_is_said_with_its_size_and_how_to_drop_it() {
        assert_eq!(kept_note("pglab", &[]), None);
        assert_eq!(
            kept_note("pglab", &["ib_int4_random_1000000_s42 (127 MB)".into()]).unwrap(),
            "kept for reuse in schema pglab: dataset ib_int4_random_1000000_s42 (127 MB); a later run with the same rows, key and order uses it, `pglab clean --datasets` drops it"
        );
        let two = kept_note("lab", &["a (1.0 MB)".into(), "b (2.0 MB)".into()]).unwrap();
        assert!(two.starts_with("kept for reuse in schema lab: datasets a (1.0 MB), b (2.0 MB);"));
        assert!(two.ends_with("`pglab clean --datasets` drops them"));
    }
}
