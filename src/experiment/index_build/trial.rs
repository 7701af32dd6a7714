//! One timed `CREATE INDEX`: drop the previous index, `CHECKPOINT`, `SET` the knobs for this
//! session, build while a second session polls `pg_stat_progress_create_index` by the
//! builder's pid, then read the index size, temp bytes and how the sort went.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_postgres::Client;

use super::report::{DatasetInfo, IndexTrial};
use super::shards;
use super::spec::{IndexBuildSpec, IndexMethod, Order};
use crate::experiment::event::{Progress, TrialRef};
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::units::Size;
use crate::sql::lab::MARK;
use crate::sql::quote::{ident, literal};
use crate::sql::settings::SessionSettings;

/// How often the progress view is read. Measured: polling at this rate costs well under 1%
/// of build time (see the observer-effect benchmark).
pub const POLL_EVERY: Duration = Duration::from_millis(100);

/// One point of the sweep.
#[derive(Debug, Clone)]
pub struct TrialSetup {
    pub order: Order,
    pub mwm: Size,
    pub workers: u32,
    /// The combination of swept server settings (`--set`) in effect.
    pub combo: usize,
    /// 1-based; 0 for the warm-up.
    pub repeat: u32,
    pub warmup: bool,
    pub trial: TrialRef,
}

/// The builder's sessions: one that builds (with notices), one that watches.
pub struct Sessions {
    pub builder: Client,
    pub notices: UnboundedReceiver<String>,
    pub watcher: Client,
    pub builder_pid: i32,
    /// Sessions on the Citus workers when the dataset is distributed (see [`super::shards`]).
    pub workers: Vec<Client>,
    pub distributed: bool,
}

impl Sessions {
    pub async fn open(ctx: &RunCtx, distributed: bool) -> Result<Sessions, RunError> {
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
            crate::experiment::distribute::worker_sessions(ctx).await
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

pub fn index_name(table: &str) -> String {
    format!("{table}_idx")
}

/// What `trace_sort` said: participants and how the sort went.
#[derive(Debug, Default, PartialEq)]
pub struct SortTrace {
    /// Parallel participants that sorted (leader included when it participates).
    pub participants: u32,
    pub external: bool,
    pub disk_blocks: u64,
    pub memory_kb: Option<u64>,
}

impl SortTrace {
    pub fn parse(lines: &[String]) -> SortTrace {
        let mut t = SortTrace::default();
        let mut workers = std::collections::BTreeSet::new();
        for l in lines {
            if let Some(rest) = l.split("of worker ").nth(1)
                && let Some(n) = rest.split(|c: char| !c.is_ascii_digit() && c != '-').next()
                && let Ok(n) = n.parse::<i32>()
                && n >= 0
            {
                workers.insert(n);
            }
            if l.contains("external sort") || l.contains("switching to external sort") {
                t.external = true;
            }
            if let Some(pos) = l.find(" disk blocks used") {
                let num = l[..pos]
                    .rsplit(' ')
                    .next()
                    .and_then(|n| n.parse::<u64>().ok());
                if let Some(n) = num
                    && (l.contains("worker -1") || workers.is_empty())
                {
                    t.disk_blocks = n;
                }
            }
            if let Some(pos) = l.find(" KB used") {
                t.memory_kb = l[..pos].rsplit(' ').next().and_then(|n| n.parse().ok());
            }
        }
        t.participants = workers.len() as u32;
        t
    }

    pub fn describe(&self) -> String {
        let kind = if self.external {
            format!("external sort, {} kB on disk", self.disk_blocks * 8)
        } else if let Some(kb) = self.memory_kb {
            format!("in-memory sort, {kb} kB")
        } else {
            "sort".to_string()
        };
        if self.participants > 1 {
            format!("{kind}, {} participants", self.participants)
        } else {
            kind
        }
    }
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
pub async fn autovacuum_active(client: &Client, schema: &str, table: &str) -> bool {
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

/// Run one trial.
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

pub async fn run(
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
    let mut checkpoint = false;
    if checkpoint_allowed {
        ctx.emit
            .phase(Some(setup.trial.clone()), "CHECKPOINT")
            .await;
        ctx.cancellable(b, b.batch_execute("CHECKPOINT")).await?;
        checkpoint = !s.distributed || shards::checkpoint(&s.workers).await;
    }
    // The knobs (on a distributed table they go with the build, as SET LOCAL), then the
    // swept server settings (`--set`) of this trial's combination, then what SHOW says.
    let mut knobs = SessionSettings::new();
    if !s.distributed {
        knobs
            .set("maintenance_work_mem", setup.mwm.as_kb_setting())
            .set(
                "max_parallel_maintenance_workers",
                setup.workers.to_string(),
            );
    }
    knobs.extend(&ctx.whatif.plan.session_settings(setup.combo));
    knobs.apply(b).await.map_err(|e| ctx.error(e))?;
    let settings = ctx.shown_settings(b).await?;
    while s.notices.try_recv().is_ok() {}
    let temp_before = if s.distributed {
        shards::temp_bytes(&s.workers).await
    } else {
        temp_bytes(&s.watcher).await
    };
    let using = match spec.method {
        IndexMethod::Btree => String::new(),
        m => format!(" USING {}", m.as_str()),
    };
    let sql = format!(
        "CREATE INDEX{} {} ON {table}{using} {}",
        if spec.concurrently {
            " CONCURRENTLY"
        } else {
            ""
        },
        ident(&index),
        dataset.columns_sql()
    );
    ctx.emit
        .phase(Some(setup.trial.clone()), "building index")
        .await;

    if s.distributed {
        for q in shards::begin_sql(&setup.mwm.as_kb_setting(), setup.workers) {
            b.batch_execute(&q).await.map_err(|e| ctx.error(e))?;
        }
    }
    let mark = mark_sql(ctx, dataset, &qindex, &table);
    let in_block = mark.is_some() && !spec.concurrently && !s.distributed;
    if in_block {
        b.batch_execute("BEGIN").await.map_err(|e| ctx.error(e))?;
    }
    let started = Instant::now();
    // On a distributed dataset the shards' indexes are committed (two-phase) by the COMMIT:
    // it is part of the build.
    let build = async {
        b.batch_execute(&sql).await?;
        if let Some(m) = &mark {
            b.batch_execute(m).await?;
        }
        if s.distributed || in_block {
            b.batch_execute("COMMIT").await?;
        }
        Ok::<(), tokio_postgres::Error>(())
    };
    tokio::pin!(build);
    let mut phases: Vec<(String, Instant)> = Vec::new();
    let mut max_workers_seen = 0u32;
    let mut tick = tokio::time::interval(POLL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let token = b.cancel_token();
    let result = loop {
        tokio::select! {
            r = &mut build => break r.map_err(|e| ctx.error(e)),
            _ = ctx.cancel.cancelled() => {
                // Dropping the future would leave the backend building: ask the server.
                ctx.target.cancel_query(&token).await;
                let _ = tokio::time::timeout(Duration::from_secs(10), &mut build).await;
                break Err(RunError::Cancelled);
            }
            _ = tick.tick(), if ctx.opts.poll_progress => {
                if s.distributed {
                    shard_tick(ctx, s, setup, started, &mut phases, &mut max_workers_seen).await;
                } else if let Some(p) = poll(&s.watcher, s.builder_pid).await {
                    if phases.last().map(|(name, _)| name != &p.phase).unwrap_or(true) {
                        phases.push((p.phase.clone(), Instant::now()));
                    }
                    max_workers_seen = max_workers_seen.max(p.workers);
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
            }
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let ended = Instant::now();
    if let Err(e) = result {
        if s.distributed || in_block {
            // The transaction the build ran in is aborted: end it so the session is clean.
            let _ = b.batch_execute("ROLLBACK").await;
        }
        // A cancelled plain CREATE INDEX rolls back; a CONCURRENTLY one leaves an invalid
        // index behind, which must go.
        if spec.concurrently
            && let Ok(c) = ctx.target.connect().await
        {
            let _ = c
                .batch_execute(&format!("DROP INDEX IF EXISTS {qindex}"))
                .await;
        }
        return Err(e);
    }
    let mut phase_seconds = BTreeMap::new();
    for (i, (name, at)) in phases.iter().enumerate() {
        let end = phases.get(i + 1).map(|(_, t)| *t).unwrap_or(ended);
        *phase_seconds.entry(name.clone()).or_insert(0.0) += end.duration_since(*at).as_secs_f64();
    }
    let mut lines = Vec::new();
    while let Ok(l) = s.notices.try_recv() {
        lines.push(l);
    }
    let trace = SortTrace::parse(&lines);
    let launched = trace.participants.saturating_sub(1).max(max_workers_seen);
    // Temp-file statistics reach pg_stat_database when the builder reports its stats.
    let _ = b.batch_execute("SELECT pg_stat_force_next_flush()").await;
    let _ = b.batch_execute("SELECT 1").await;
    let temp_after = if s.distributed {
        shards::temp_bytes(&s.workers).await
    } else {
        temp_bytes(&s.watcher).await
    };
    let index_bytes: i64 = if s.distributed {
        crate::experiment::distribute::sizes(b, &table, true)
            .await
            .map_err(|e| ctx.error(e))?
            .1
    } else {
        b.query_one(
            &format!(
                "SELECT pg_relation_size('{}'::regclass)",
                qindex.replace('\'', "''")
            ),
            &[],
        )
        .await
        .map_err(|e| ctx.error(e))?
        .get(0)
    };
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
        phase_seconds,
        index_bytes,
        temp_bytes: match (temp_before, temp_after) {
            (Some(a), Some(b)) => (b - a).max(0),
            _ => 0,
        },
        checkpoint,
        sort: (!lines.is_empty()).then(|| trace.describe()),
        combo: setup.combo,
        settings,
        distribution: dataset.distribution.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_sort_is_read() {
        let lines: Vec<String> = [
            "begin index sort: unique = f, workMem = 32768, randomAccess = f",
            "performsort of worker 0 starting: CPU: user: 0.05 s",
            "performsort of worker 1 starting: CPU: user: 0.03 s",
            "worker 1 switching to external sort with 6 tapes: CPU",
            "parallel external sort of worker 0 ended, 422 disk blocks used: CPU",
            "parallel external sort of worker -1 ended, 735 disk blocks used: CPU",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = SortTrace::parse(&lines);
        assert_eq!((t.participants, t.external, t.disk_blocks), (2, true, 735));
        let serial = SortTrace::parse(&["internal sort ended, 45678 KB used: CPU".to_string()]);
        assert_eq!(
            (serial.participants, serial.external, serial.memory_kb),
            (0, false, Some(45678))
        );
    }
}
