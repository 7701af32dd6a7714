//! One import from start to end: check the names on the source, open its snapshot, read the
//! catalogs, plan, check the sandbox's disk, then in one sandbox transaction create the
//! staged tables, stream the rows, end the source's snapshot, build keys and indexes, add
//! foreign keys, set sequences, `ANALYZE`, swap the tables in and record where they came
//! from. Any error or cancel rolls the sandbox's transaction back.

use std::time::Instant;

use chrono::Utc;
use tokio::sync::mpsc::Sender;
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::catalog::{SourceTable, read_table};
use super::copy::{self, Ends, Moved};
use super::plan::{Plan, TablePlan};
use super::{ImportError, ImportEvent, ImportOptions, ImportProgress, ImportReport, ImportSpec};
use crate::measure::units::format_bytes;
use crate::server::Target;
use crate::server::error::describe_query_error;
use crate::sql::imported::{ImportRecord, SampleRecord, imported_tables, save_cache};
use crate::sql::lab::plain_name;
use crate::sql::quote::{ident, literal};

/// The import's sessions and where its events go.
struct Ctx<'a> {
    source_t: &'a Target,
    sandbox_t: &'a Target,
    tx: &'a Sender<ImportEvent>,
    cancel: &'a CancellationToken,
    notes: Vec<String>,
    /// The source's snapshot transaction is still open.
    snapshot_open: bool,
}

impl Ctx<'_> {
    /// End the source's snapshot (once).
    async fn end_snapshot(&mut self, source: &Client) {
        if self.snapshot_open {
            self.snapshot_open = false;
            super::source::end(source).await;
        }
    }

    async fn phase(&self, s: impl Into<String>) {
        let _ = self.tx.send(ImportEvent::Phase(s.into())).await;
    }

    async fn note(&mut self, s: String) {
        if !self.notes.contains(&s) {
            self.notes.push(s.clone());
            let _ = self.tx.send(ImportEvent::Note(s)).await;
        }
    }

    fn check(&self) -> Result<(), ImportError> {
        if self.cancel.is_cancelled() {
            Err(ImportError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// A sandbox statement that a cancel stops on the server.
    async fn exec(&self, c: &Client, sql: &str) -> Result<(), ImportError> {
        self.check()?;
        let token = c.cancel_token();
        let fut = c.batch_execute(sql);
        tokio::pin!(fut);
        tokio::select! {
            r = &mut fut => r.map_err(|e| ImportError::Failed(format!(
                "the sandbox refused `{}`: {}", short(sql), describe_query_error(&e)
            ))),
            _ = self.cancel.cancelled() => {
                self.sandbox_t.cancel_query(&token).await;
                let _ = tokio::time::timeout(std::time::Duration::from_secs(10), &mut fut).await;
                Err(ImportError::Cancelled)
            }
        }
    }
}

/// The first 120 characters of a statement, for an error sentence.
fn short(sql: &str) -> String {
    let s: String = sql.chars().take(120).collect();
    if s.len() < sql.len() {
        format!("{s}…")
    } else {
        s
    }
}

pub async fn run(
    source_t: &Target,
    sandbox_t: &Target,
    spec: &ImportSpec,
    opts: &ImportOptions,
    tx: &Sender<ImportEvent>,
    cancel: &CancellationToken,
) -> Result<ImportReport, ImportError> {
    let started = Instant::now();
    let mut ctx = Ctx {
        source_t,
        sandbox_t,
        tx,
        cancel,
        notes: Vec::new(),
        snapshot_open: false,
    };
    let describe = source_t.describe();
    ctx.phase(format!("reading the source ({describe})")).await;
    let source = source_t
        .connect()
        .await
        .map_err(|e| ImportError::Failed(e.to_string()))?;
    let checked = super::source::check_tables(&source, &spec.tables, &describe).await?;
    let info = super::source::begin(&source, &checked, &describe).await?;
    ctx.snapshot_open = true;
    let result = with_snapshot(&mut ctx, &source, &info, &checked, spec, opts).await;
    ctx.end_snapshot(&source).await;
    let records = result?;
    if let Some(path) = &opts.cache_file
        && let Ok(c) = sandbox_t.connect().await
        && let Ok(all) = imported_tables(&c).await
        && let Err(e) = save_cache(path, &all)
    {
        tracing::warn!("could not write {}: {e}", path.display());
    }
    Ok(ImportReport {
        records,
        notes: ctx.notes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Everything that happens while the source's snapshot is open (it is ended as soon as the
/// last row is read).
async fn with_snapshot(
    ctx: &mut Ctx<'_>,
    source: &Client,
    info: &super::SourceInfo,
    checked: &[(super::TableName, u32)],
    spec: &ImportSpec,
    opts: &ImportOptions,
) -> Result<Vec<ImportRecord>, ImportError> {
    let mut tables = Vec::new();
    for (name, oid) in checked {
        let mut t = read_table(source, name, *oid)
            .await
            .map_err(ImportError::Failed)?;
        // A table never analyzed has no row estimate: `--rows N` needs one, so count.
        if t.rows_estimate < 0.0 && matches!(spec.sample, super::Sample::Rows(_)) {
            ctx.phase(format!(
                "counting the rows of {name} (it has no row estimate)"
            ))
            .await;
            let n: i64 = source
                .query_one(&format!("SELECT count(*) FROM ONLY {}", name.sql()), &[])
                .await
                .map_err(|e| ImportError::Failed(describe_query_error(&e)))?
                .get(0);
            t.rows_estimate = n as f64;
        }
        tables.push(t);
    }
    let type_oids: Vec<u32> = tables
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| c.type_oid))
        .collect();
    let types = super::types::read_types(source, &type_oids)
        .await
        .map_err(ImportError::Failed)?;
    let sandbox = ctx
        .sandbox_t
        .connect()
        .await
        .map_err(|e| ImportError::Failed(e.to_string()))?;
    let staging = format!(
        "pglab_import_{}",
        plain_name(&crate::sql::lab::new_run_id())
    );
    let plan = super::plan::plan(spec, info, &tables, &types, &sandbox, &staging).await?;
    for n in plan.notes.clone() {
        ctx.note(n).await;
    }
    check_disk(&sandbox, &plan, opts.free_bytes).await?;
    let read: u64 = tables.iter().map(|t| t.table_bytes.max(0) as u64).sum();
    let names: Vec<_> = tables.iter().map(|t| t.name.clone()).collect();
    ctx.note(super::source_guard::holds_back(&names, read))
        .await;
    let r = load(ctx, source, &sandbox, info, &tables, &plan).await;
    if r.is_err() {
        // Nothing of the import stays: the staging schema, types and tables go with it.
        let _ = sandbox.batch_execute("ROLLBACK").await;
    }
    r
}

/// Refuse when the sandbox's filesystem cannot hold the tables, their indexes, the WAL the
/// load writes (up to `max_wal_size`) and the largest sort.
async fn check_disk(c: &Client, plan: &Plan, free: Option<u64>) -> Result<(), ImportError> {
    let Some(free) = free else {
        return Ok(());
    };
    let max_wal: i64 = c
        .query_one("SELECT pg_size_bytes(current_setting('max_wal_size'))", &[])
        .await
        .map_err(|e| ImportError::Failed(describe_query_error(&e)))?
        .get(0);
    let data: u64 = plan.tables.iter().map(|t| t.bytes).sum();
    let largest = plan.tables.iter().map(|t| t.bytes).max().unwrap_or(0);
    let wal = data.min(max_wal.max(0) as u64);
    let need = data + wal + largest / 2;
    if need > free {
        return Err(ImportError::Refused(format!(
            "not enough disk: the import needs about {} in the sandbox ({} of tables and indexes, {} of WAL and sort space) but its filesystem has {} free: import fewer rows (--sample PCT or --rows N) or free some space",
            format_bytes(need),
            format_bytes(data),
            format_bytes(need - data),
            format_bytes(free)
        )));
    }
    Ok(())
}

/// The sandbox transaction: create, stream, build, swap, record, commit.
async fn load(
    ctx: &mut Ctx<'_>,
    source: &Client,
    sandbox: &Client,
    info: &super::SourceInfo,
    tables: &[SourceTable],
    plan: &Plan,
) -> Result<Vec<ImportRecord>, ImportError> {
    ctx.exec(
        sandbox,
        &format!(
            "BEGIN; SET LOCAL search_path = {}; SET LOCAL DateStyle = {}; SET LOCAL IntervalStyle = {}; SET LOCAL maintenance_work_mem = '{}kB'; CREATE SCHEMA {}",
            plan.search_path,
            literal(&info.datestyle),
            literal(&info.intervalstyle),
            index_memory() / 1024,
            ident(&plan.staging)
        ),
    )
    .await?;
    for s in &plan.before {
        ctx.exec(sandbox, s).await?;
    }
    let mut moved = Vec::new();
    for (i, tp) in plan.tables.iter().enumerate() {
        for s in &tp.create {
            ctx.exec(sandbox, s).await?;
        }
        moved.push(stream_table(ctx, source, sandbox, tp, (i, plan.tables.len())).await?);
    }
    // Every row is read: the source's snapshot can go before the sandbox builds its indexes.
    ctx.end_snapshot(source).await;
    for tp in &plan.tables {
        for (what, s) in &tp.after_load {
            ctx.phase(format!("{}: {what}", tp.source)).await;
            ctx.exec(sandbox, s).await?;
        }
    }
    for tp in &plan.tables {
        for s in tp.foreign_keys.iter().chain(&tp.sequences) {
            ctx.exec(sandbox, s).await?;
        }
        ctx.phase(format!("{}: ANALYZE", tp.source)).await;
        ctx.exec(sandbox, &format!("ANALYZE {}", tp.staged.sql()))
            .await?;
    }
    let mut records = Vec::new();
    for ((tp, t), m) in plan.tables.iter().zip(tables).zip(&moved) {
        records.push(record(sandbox, info, tp, t, m).await?);
    }
    ctx.phase("moving the tables in").await;
    for s in &plan.swap {
        ctx.exec(sandbox, s).await?;
    }
    for r in &records {
        ctx.exec(
            sandbox,
            &format!(
                "COMMENT ON TABLE {} IS {}",
                r.table.sql(),
                literal(&r.comment())
            ),
        )
        .await?;
    }
    ctx.exec(sandbox, "COMMIT").await?;
    Ok(records)
}

/// `maintenance_work_mem` for the keys and indexes built after the load, in this session
/// only: 256MB (as a restore would be given), at most an eighth of the host's memory, at
/// least PostgreSQL's default 64MB.
fn index_memory() -> u64 {
    let eighth = crate::host::snapshot::total_memory() / 8;
    (256u64 << 20).min(eighth).max(64 << 20)
}

/// Copy one table's rows, reporting progress.
async fn stream_table(
    ctx: &Ctx<'_>,
    source: &Client,
    sandbox: &Client,
    tp: &TablePlan,
    (i, n): (usize, usize),
) -> Result<Moved, ImportError> {
    ctx.check()?;
    let how = match tp.sample {
        None => "all rows".to_string(),
        Some((p, seed)) => format!(
            "TABLESAMPLE BERNOULLI ({}) REPEATABLE ({seed})",
            crate::sql::quote::percent(p)
        ),
    };
    ctx.phase(format!(
        "copying {} ({}, {how})",
        tp.source,
        if tp.binary { "binary" } else { "text" }
    ))
    .await;
    let out = super::ddl::copy_out(&tp.source, &tp.copy_columns, tp.sample, tp.binary);
    let into = super::ddl::copy_in(&tp.staged, &tp.copy_columns, tp.binary);
    let ends = Ends {
        source,
        source_target: ctx.source_t,
        sandbox,
        sandbox_target: ctx.sandbox_t,
        cancel: ctx.cancel,
    };
    let progress = |m: Moved| ImportProgress {
        table: tp.source.clone(),
        index: i + 1,
        tables: n,
        rows: m.rows,
        rows_expected: tp.rows_expected,
        bytes: m.bytes,
        seconds: m.seconds,
    };
    let tx = ctx.tx.clone();
    let m = copy::stream(&ends, &out, &into, tp.binary, |m| {
        let _ = tx.try_send(ImportEvent::Progress(progress(m)));
    })
    .await?;
    let _ = ctx.tx.send(ImportEvent::Progress(progress(m))).await;
    Ok(m)
}

/// What one table's import leaves as its record.
async fn record(
    sandbox: &Client,
    info: &super::SourceInfo,
    tp: &TablePlan,
    t: &SourceTable,
    m: &Moved,
) -> Result<ImportRecord, ImportError> {
    let sizes = sandbox
        .query_one(
            "SELECT pg_table_size($1::text::regclass), pg_indexes_size($1::text::regclass)",
            &[&tp.staged.sql()],
        )
        .await
        .map_err(|e| ImportError::Failed(describe_query_error(&e)))?;
    Ok(ImportRecord {
        table: tp.source.clone(),
        source: info.fingerprint.clone(),
        snapshot_at: info.snapshot_at,
        imported_at: Utc::now(),
        sample: tp.sample.map(|(percent, seed)| SampleRecord {
            method: "BERNOULLI".into(),
            percent,
            seed,
        }),
        rows: m.rows,
        source_rows_estimate: t.rows_estimate,
        stream_bytes: m.bytes,
        table_bytes: sizes.get(0),
        index_bytes: sizes.get(1),
        format: if tp.binary { "binary" } else { "text" }.into(),
        seconds: m.seconds,
    })
}
