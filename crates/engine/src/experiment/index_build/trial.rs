//! One timed `CREATE INDEX`: drop the previous index, `CHECKPOINT`, `SET` the knobs for this
//! session, build while a second session polls `pg_stat_progress_create_index` by the
//! builder's pid, then read the index size, temp bytes and how the sort went.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_postgres::Client;

use super::report::{DatasetInfo, IndexTrial};
use super::shards;
use super::sort_trace::SortTrace;
use super::spec::{IndexBuildSpec, IndexMethod, Order};
use crate::experiment::lab::event::{Progress, TrialRef};
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::Size;
use crate::server::cancel::cancel_then_wait;
use crate::sql::lab::MARK;
use crate::sql::quote::{ident, literal};
use crate::sql::settings::SessionSettings;

/// How often the progress view is read. Measured: polling at this rate costs well under 1%
/// of build time (see the observer-effect benchmark).
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(100);

/// One point of the sweep.
#[derive(Debug, Clone)]
pub(crate) struct TrialSetup {
    pub order: Order,
    pub mwm: Size,
    /// The memory the build runs with when it is not `mwm` (a sample's, scaled by its
    /// fraction: see [`super::projection::sample_memory`]).
    pub built_at: Option<Size>,
    pub workers: u32,
    /// The combination of swept server settings (`--set`) in effect.
    pub combo: usize,
    /// 1-based; 0 for the warm-up.
    pub repeat: u32,
    pub warmup: bool,
    pub trial: TrialRef,
}

impl TrialSetup {
    /// The `maintenance_work_mem` the build runs with.
    pub(crate) fn memory(&self) -> &Size {
        self.built_at.as_ref().unwrap_or(&self.mwm)
    }
}

/// The builder's sessions: one that builds (with notices), one that watches.
pub(crate) struct Sessions {
    pub builder: Client,
    pub notices: UnboundedReceiver<String>,
    pub watcher: Client,
    pub builder_pid: i32,
    /// Sessions on the Citus workers when the dataset is distributed (see [`super::shards`]).
    pub workers: Vec<Client>,
    pub distributed: bool,
}

impl Sessions {
    pub(crate) async fn open(ctx: &RunCtx, distributed: bool) -> Result<Sessions, RunError> {
        let (builder, notices) = ctx
            .target
            .connect_with_notices()
            .await
            .map_err(|e| RunError::Failed(e.to_string()))?;
        let mut settings = ctx.session_settings();
        settings
            .set("trace_sort", "on")
            .set("client_min_messages", "log");
        if distributed {
            settings.set(shards::PROPAGATE.0, shards::PROPAGATE.1);
        }
        settings.apply(&builder).await.map_err(|e| ctx.error(e))?;
        let builder_pid: i32 = builder
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|e| ctx.error(e))?
            .get(0);
        let watcher = ctx.session().await?;
        let workers = if distributed {
            crate::experiment::lab::distribute::worker_sessions(ctx).await
        } else {
            Vec::new()
        };
        Ok(Sessions {
            builder,
            notices,
            watcher,
            builder_pid,
            workers,
            distributed,
        })
    }
}

pub(crate) fn index_name(table: &str) -> String {
    format!("{table}_idx")
}

/// The index a run builds on one of pglab's datasets: the run's id in its name, so two runs
/// on one dataset (two pglab on one server) never build under one name. At most 63 bytes
/// (PostgreSQL's identifier length); the table's part is shortened when needed.
pub(crate) fn run_index_name(table: &str, run_id: &str) -> String {
    let suffix = format!("_idx_{}", crate::sql::lab::plain_name(run_id));
    let mut keep = 63usize.saturating_sub(suffix.len()).min(table.len());
    while !table.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}{suffix}", &table[..keep])
}

async fn temp_bytes(client: &Client) -> Option<i64> {
    client
        .query_one(
            "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .ok()
        .map(|r| r.get(0))
}

/// Is autovacuum working on this table right now (a confounder)?
pub(crate) async fn autovacuum_active(client: &Client, schema: &str, table: &str) -> bool {
    client
        .query_opt(
            "SELECT 1 FROM pg_stat_progress_vacuum v JOIN pg_class c ON c.oid = v.relid
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &table],
        )
        .await
        .ok()
        .flatten()
        .is_some()
}

/// An index on the user's own table carries pglab's mark from its first moment (the
/// `COMMENT` goes in the build's transaction), so a killed run's is found by `pglab clean`;
/// CONCURRENTLY cannot run in a transaction, so there the mark follows at once. None for a
/// dataset of pglab's own (the table's mark covers it).
fn mark_sql(ctx: &RunCtx, dataset: &DatasetInfo, qindex: &str, table: &str) -> Option<String> {
    dataset.schema.is_some().then(|| {
        format!(
            "COMMENT ON INDEX {qindex} IS {}",
            literal(&format!(
                "{MARK}run={} index-build trial index on {table}",
                ctx.run_id
            ))
        )
    })
}

/// Run one trial.
pub(crate) async fn run(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    s: &mut Sessions,
    dataset: &DatasetInfo,
    setup: &TrialSetup,
    checkpoint_allowed: bool,
) -> Result<IndexTrial, RunError> {
    let table = dataset.qualified(&ctx.opts.schema);
    let index = dataset.index_name();
    let qindex = dataset.index_qualified(&ctx.opts.schema);
    let b = &s.builder;
    ctx.cancellable(
        b,
        b.batch_execute(&format!("DROP INDEX IF EXISTS {qindex}")),
    )
    .await?;
    let checkpoint = checkpoint_allowed && checkpoint_first(ctx, s, setup).await?;
    let settings = set_knobs(ctx, s, setup).await?;
    while s.notices.try_recv().is_ok() {}
    let temp_before = temp_now(s).await;
    let sql = create_index_sql(spec, dataset, &table, &index);
    ctx.emit
        .phase(Some(setup.trial.clone()), "building index")
        .await;

    let mark = mark_sql(ctx, dataset, &qindex, &table);
    let in_block = mark.is_some() && !spec.concurrently && !s.distributed;
    open_build(ctx, s, setup, in_block).await?;
    let meter = crate::host::load::HostMeter::start(Some(s.builder_pid));
    let started = Instant::now();
    let watched = build(ctx, s, setup, started, &sql, mark.as_deref(), in_block).await;
    let seconds = started.elapsed().as_secs_f64();
    let ended = Instant::now();
    let host = meter.finish();
    let watched = match watched {
        Ok(w) => w,
        Err(e) => {
            clean_up_failed_build(ctx, spec, s, in_block, &qindex).await;
            return Err(e);
        }
    };
    let mut lines = Vec::new();
    while let Ok(l) = s.notices.try_recv() {
        lines.push(l);
    }
    let trace = SortTrace::parse(&lines);
    let launched = trace
        .participants
        .saturating_sub(1)
        .max(watched.max_workers_seen);
    // Temp-file statistics reach pg_stat_database when the builder reports its stats.
    let b = &s.builder;
    let _ = b.batch_execute("SELECT pg_stat_force_next_flush()").await;
    let _ = b.batch_execute("SELECT 1").await;
    let temp_after = temp_now(s).await;
    let index_bytes = index_bytes(ctx, s, &table, &qindex).await?;
    Ok(IndexTrial {
        order: setup.order,
        rows: dataset.rows,
        key_type: dataset.key_type.clone(),
        maintenance_work_mem: setup.mwm.text.clone(),
        maintenance_work_mem_bytes: setup.mwm.bytes,
        workers_requested: setup.workers,
        workers_launched: launched,
        repeat: setup.repeat,
        warmup: setup.warmup,
        seconds,
        phase_seconds: watched.phase_seconds(ended),
        index_bytes,
        temp_bytes: match (temp_before, temp_after) {
            (Some(a), Some(b)) => (b - a).max(0),
            _ => 0,
        },
        checkpoint,
        sort: (!lines.is_empty()).then(|| trace.describe()),
        sort_method: trace.method(),
        host,
        combo: setup.combo,
        settings,
        distribution: dataset.distribution.clone(),
        built_at_bytes: setup.built_at.as_ref().map(|m| m.bytes),
    })
}

/// A `CHECKPOINT` before the build, so the build does not pay for earlier writes; whether
/// it reached every server (on a distributed dataset, the workers too).
async fn checkpoint_first(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
) -> Result<bool, RunError> {
    let b = &s.builder;
    ctx.emit
        .phase(Some(setup.trial.clone()), "CHECKPOINT")
        .await;
    ctx.cancellable(b, b.batch_execute("CHECKPOINT")).await?;
    Ok(!s.distributed || shards::checkpoint(&s.workers).await)
}

/// Set the knobs (on a distributed table they go with the build, as SET LOCAL), then the
/// swept server settings (`--set`) of this trial's combination; what SHOW then says.
async fn set_knobs(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
) -> Result<BTreeMap<String, String>, RunError> {
    let b = &s.builder;
    let mut knobs = SessionSettings::new();
    if !s.distributed {
        knobs
            .set("maintenance_work_mem", setup.memory().as_kb_setting())
            .set(
                "max_parallel_maintenance_workers",
                setup.workers.to_string(),
            );
    }
    knobs.extend(&ctx.whatif.plan.session_settings(setup.combo));
    knobs.apply(b).await.map_err(|e| ctx.error(e))?;
    ctx.shown_settings(b).await
}

/// The temporary bytes written so far: on the workers for a distributed dataset.
async fn temp_now(s: &Sessions) -> Option<i64> {
    if s.distributed {
        shards::temp_bytes(&s.workers).await
    } else {
        temp_bytes(&s.watcher).await
    }
}

/// The trial's `CREATE INDEX` statement.
fn create_index_sql(
    spec: &IndexBuildSpec,
    dataset: &DatasetInfo,
    table: &str,
    index: &str,
) -> String {
    let using = match spec.method {
        IndexMethod::Btree => String::new(),
        m => format!(" USING {}", m.as_str()),
    };
    format!(
        "CREATE INDEX{} {} ON {table}{using} {}",
        if spec.concurrently {
            " CONCURRENTLY"
        } else {
            ""
        },
        ident(index),
        dataset.columns_sql()
    )
}

/// Open the transaction the build runs in, if it runs in one: a distributed build's (with
/// its knobs as SET LOCAL), or the one that carries the index's mark.
async fn open_build(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
    in_block: bool,
) -> Result<(), RunError> {
    let b = &s.builder;
    if s.distributed {
        for q in shards::begin_sql(&setup.memory().as_kb_setting(), setup.workers) {
            b.batch_execute(&q).await.map_err(|e| ctx.error(e))?;
        }
    }
    if in_block {
        b.batch_execute("BEGIN").await.map_err(|e| ctx.error(e))?;
    }
    Ok(())
}

/// The phases the build went through, as the progress polls saw them.
#[derive(Default)]
struct Watched {
    phases: Vec<(String, Instant)>,
    max_workers_seen: u32,
}

impl Watched {
    /// Seconds spent in each phase, a phase lasting until the next one began (the last
    /// until `ended`).
    fn phase_seconds(&self, ended: Instant) -> BTreeMap<String, f64> {
        let phases = &self.phases;
        let mut phase_seconds = BTreeMap::new();
        for (i, (name, at)) in phases.iter().enumerate() {
            let end = phases.get(i + 1).map(|(_, t)| *t).unwrap_or(ended);
            *phase_seconds.entry(name.clone()).or_insert(0.0) +=
                end.duration_since(*at).as_secs_f64();
        }
        phase_seconds
    }
}

/// Build the index (`sql`, then its mark, then the COMMIT of the transaction it runs in)
/// while polling its progress; cancelling the run cancels the build on the server.
async fn build(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
    started: Instant,
    sql: &str,
    mark: Option<&str>,
    in_block: bool,
) -> Result<Watched, RunError> {
    let b = &s.builder;
    // On a distributed dataset the shards' indexes are committed (two-phase) by the COMMIT:
    // it is part of the build.
    let build = async {
        b.batch_execute(sql).await?;
        if let Some(m) = mark {
            b.batch_execute(m).await?;
        }
        if s.distributed || in_block {
            b.batch_execute("COMMIT").await?;
        }
        Ok::<(), tokio_postgres::Error>(())
    };
    tokio::pin!(build);
    let mut watched = Watched::default();
    let mut tick = tokio::time::interval(POLL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let token = b.cancel_token();
    loop {
        tokio::select! {
            r = &mut build => break r.map(|()| watched).map_err(|e| ctx.error(e)),
            _ = ctx.cancel.cancelled() => {
                // Dropping the future would leave the backend building: ask the server.
                let _ = cancel_then_wait(ctx.target.cancel_query(&token), &mut build, Duration::from_secs(10)).await;
                break Err(RunError::Cancelled);
            }
            _ = tick.tick(), if ctx.opts.poll_progress => {
                if s.distributed {
                    shard_tick(ctx, s, setup, started, &mut watched.phases, &mut watched.max_workers_seen).await;
                } else {
                    builder_tick(ctx, s, setup, started, &mut watched).await;
                }
            }
        }
    }
}

/// One reading of the builder's progress, sent on with its rate.
async fn builder_tick(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
    started: Instant,
    watched: &mut Watched,
) {
    let Some(p) = poll(&s.watcher, s.builder_pid).await else {
        return;
    };
    let phases = &mut watched.phases;
    if phases
        .last()
        .map(|(name, _)| name != &p.phase)
        .unwrap_or(true)
    {
        phases.push((p.phase.clone(), Instant::now()));
    }
    watched.max_workers_seen = watched.max_workers_seen.max(p.workers);
    let el = started.elapsed().as_secs_f64();
    ctx.emit.progress(Progress {
        trial: Some(setup.trial.clone()),
        phase: p.phase,
        fraction: p.fraction,
        elapsed_s: el,
        rate: (el > 0.0 && p.tuples_done > 0).then(|| p.tuples_done as f64 / el),
        rate_unit: "tuples/s".into(),
    });
}

/// After a failed or cancelled build: end the aborted transaction it ran in, and drop the
/// invalid index a CONCURRENTLY build leaves behind (a plain CREATE INDEX rolls back).
async fn clean_up_failed_build(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    s: &Sessions,
    in_block: bool,
    qindex: &str,
) {
    if s.distributed || in_block {
        // The transaction the build ran in is aborted: end it so the session is clean.
        let _ = s.builder.batch_execute("ROLLBACK").await;
    }
    if spec.concurrently
        && let Ok(c) = ctx.target.connect().await
    {
        let _ = c
            .batch_execute(&format!("DROP INDEX IF EXISTS {qindex}"))
            .await;
    }
}

/// The built index's size: the shards' indexes summed on a distributed dataset.
async fn index_bytes(
    ctx: &RunCtx,
    s: &Sessions,
    table: &str,
    qindex: &str,
) -> Result<i64, RunError> {
    let b = &s.builder;
    Ok(if s.distributed {
        crate::experiment::lab::distribute::sizes(b, table, true)
            .await
            .map_err(|e| ctx.error(e))?
            .1
    } else {
        let size: Option<i64> = b
            .query_one(
                &format!(
                    "SELECT pg_relation_size('{}'::regclass)",
                    qindex.replace('\'', "''")
                ),
                &[],
            )
            .await
            .map_err(|e| ctx.error(e))?
            .try_get(0)
            .map_err(|e| ctx.error(e))?;
        // NULL: the index went away between the build and this reading (something else
        // dropped it): a sentence, never a panic.
        size.ok_or_else(|| {
            RunError::failed(format!(
                "the index {qindex} was gone before its size was read: did another pglab or a session drop it?"
            ))
        })?
    })
}

/// One reading of the shard builds: their phases where the workers can be read, no percent.
async fn shard_tick(
    ctx: &RunCtx,
    s: &Sessions,
    setup: &TrialSetup,
    started: Instant,
    phases: &mut Vec<(String, Instant)>,
    max_workers_seen: &mut u32,
) {
    let p = shards::poll(&s.workers).await;
    if phases.last().is_none_or(|(name, _)| name != "shards") {
        phases.push(("shards".into(), Instant::now()));
    }
    *max_workers_seen = (*max_workers_seen).max(p.as_ref().map_or(0, |p| p.workers));
    ctx.emit.progress(Progress {
        trial: Some(setup.trial.clone()),
        phase: p.map_or_else(|| "building index on the shards".to_string(), |p| p.phase),
        fraction: None,
        elapsed_s: started.elapsed().as_secs_f64(),
        rate: None,
        rate_unit: "tuples/s".into(),
    });
}

struct Polled {
    phase: String,
    fraction: Option<f64>,
    tuples_done: i64,
    workers: u32,
}

/// One reading of the builder's progress: percent within the phase where PostgreSQL counts
/// it (blocks while scanning, tuples while loading, lockers while waiting), none while sorting.
async fn poll(watcher: &Client, pid: i32) -> Option<Polled> {
    let r = watcher
        .query_opt(
            "SELECT phase, blocks_total, blocks_done, tuples_total, tuples_done, lockers_total, lockers_done,
                    (SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $1)::int
               FROM pg_stat_progress_create_index WHERE pid = $1",
            &[&pid],
        )
        .await
        .ok()??;
    let phase: String = r.get(0);
    let (bt, bd, tt, td, lt, ld): (i64, i64, i64, i64, i64, i64) =
        (r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6));
    let frac = |d: i64, t: i64| (t > 0).then(|| (d as f64 / t as f64).clamp(0.0, 1.0));
    let fraction = if phase.contains("scanning") {
        frac(bd, bt)
    } else if phase.contains("loading") {
        frac(td, tt)
    } else if phase.contains("waiting") {
        frac(ld, lt)
    } else {
        None
    };
    Some(Polled {
        phase,
        fraction,
        tuples_done: td,
        workers: r.get::<_, i32>(7).max(0) as u32,
    })
}
