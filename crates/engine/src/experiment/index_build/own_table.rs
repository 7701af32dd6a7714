//! index-build on an existing table: what the run learns about the table first (it exists,
//! may be read, has the columns; its rows, heap and correlation; the import record when the
//! sandbox holds imported data), and the datasets the builds run on — the table itself on
//! the sandbox, else copies in the lab schema made with `CREATE TABLE AS` in the table's
//! physical order (parallel query off, so the order and the correlation survive), sampled
//! with `TABLESAMPLE BERNOULLI (p) REPEATABLE (seed)`: the same seed gives nested samples.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::report::DatasetInfo;
use super::spec::{IndexBuildSpec, Order};
use super::table_spec::OwnTable;
use crate::experiment::lab::distribute::Distribution;
use crate::experiment::lab::{RunCtx, RunError};
use crate::measure::projection::Projection;
use crate::measure::units::format_bytes;
use crate::server::error::describe_query_error;
use crate::sql::imported::ImportRecord;
use crate::sql::lab::MARK;
use crate::sql::lab::plain_name;
use crate::sql::names::TableName;
use crate::sql::quote::{ident, literal};

/// The existing table a run built on, as the report keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnTableInfo {
    pub table: TableName,
    pub columns: Vec<String>,
    /// The indexed columns' types: `integer`, `text, integer`.
    pub types: String,
    /// Rows of the whole table: counted on the sandbox, the planner's estimate elsewhere
    /// (None: never analyzed; then the largest copy over its share).
    pub rows: Option<u64>,
    pub rows_counted: bool,
    /// `pg_relation_size` and, per row, what the heap holds.
    pub heap_bytes: i64,
    /// `pg_stats.correlation` of the first indexed column.
    pub correlation: Option<f64>,
    pub on_sandbox: bool,
    /// Where the builds ran: "the table itself", or which copies.
    pub built_on: String,
    /// The import that brought the table into the sandbox, when it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportRecord>,
    /// Per setting, the build time projected to the whole table (sampled runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projections: Vec<ProjectionLine>,
}

/// One setting's projected build of the whole table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectionLine {
    /// The setting's label, as in the findings.
    pub setting: String,
    pub workers: u32,
    pub maintenance_work_mem: String,
    pub maintenance_work_mem_bytes: u64,
    #[serde(default)]
    pub combo: usize,
    pub projection: Projection,
}

impl OwnTableInfo {
    /// The rows the projection aims at: the whole table's.
    pub(crate) fn target_rows(&self, datasets: &[DatasetInfo]) -> Option<f64> {
        if let Some(r) = self.rows {
            return Some(r as f64);
        }
        let largest = datasets
            .iter()
            .filter_map(|d| Some((d.order.fraction()?, d.rows)))
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        (largest.0 > 0.0).then(|| largest.1 as f64 / largest.0)
    }
}

/// What [`check`] finds: the indexed columns' types, the planner's row
/// estimate and the heap's size.
pub(crate) struct Checked {
    pub types: Vec<String>,
    pub estimate: f64,
    pub heap_bytes: i64,
}

/// Why [`check`] refused a table: the field the user gave (`table`, `column`) and what is
/// wrong with it, or the server could not be asked. Shown as `table: there is no table …`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum TableProblem {
    #[error("{field}: {why}")]
    Field { field: &'static str, why: String },
    #[error("{0}")]
    Server(String),
}

fn table(why: String) -> TableProblem {
    TableProblem::Field {
        field: "table",
        why,
    }
}

/// The table exists, is a table, may be read and has the columns: else the field at fault,
/// which the command line gives with exit 2 before the run.
pub(crate) async fn check(c: &Client, own: &OwnTable) -> Result<Checked, TableProblem> {
    let q = |e: tokio_postgres::Error| TableProblem::Server(describe_query_error(&e));
    let t = &own.table;
    let Some(row) = c
        .query_opt(
            "SELECT c.oid, c.relkind::text, has_table_privilege(c.oid, 'SELECT'), c.reltuples::float8,
                    pg_relation_size(c.oid)
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relname = $2",
            &[&t.schema, &t.name],
        )
        .await
        .map_err(q)?
    else {
        let hint = crate::sql::names::closest(c, t).await.map_err(q)?;
        return Err(table(format!("there is no table {t}{hint}")));
    };
    let oid: u32 = row.get(0);
    let kind: String = row.get(1);
    if !matches!(kind.as_str(), "r" | "u" | "m") {
        return Err(table(format!(
            "{t} is not a table (relkind {kind}): index-build builds on tables"
        )));
    }
    if !row.get::<_, bool>(2) {
        return Err(table(format!(
            "no permission: this role may not read {t} (GRANT SELECT ON {} TO …)",
            t.sql()
        )));
    }
    let have: Vec<(String, String)> = c
        .query(
            "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
              WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            &[&oid],
        )
        .await
        .map_err(q)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut types = Vec::new();
    for col in &own.columns {
        match have.iter().find(|(n, _)| n == col) {
            Some((_, ty)) => types.push(ty.clone()),
            None => {
                return Err(TableProblem::Field {
                    field: "column",
                    why: format!(
                        "{t} has no column {col} (it has {})",
                        have.iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
    }
    Ok(Checked {
        types,
        estimate: row.get(3),
        heap_bytes: row.get(4),
    })
}

/// Check the table and read what the run needs to know about it (its rows are counted on
/// the sandbox).
pub(crate) async fn inspect(
    c: &Client,
    own: &OwnTable,
    on_sandbox: bool,
) -> Result<OwnTableInfo, String> {
    let q = |e: tokio_postgres::Error| describe_query_error(&e);
    let t = &own.table;
    let Checked {
        types,
        estimate,
        heap_bytes,
        ..
    } = check(c, own).await.map_err(|e| e.to_string())?;
    let (rows, rows_counted) = if on_sandbox {
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM {}", t.sql()), &[])
            .await
            .map_err(q)?
            .get(0);
        (Some(n.max(0) as u64), true)
    } else {
        ((estimate >= 0.0).then_some(estimate.round() as u64), false)
    };
    let correlation: Option<f64> = c
        .query_opt(
            "SELECT correlation::float8 FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3",
            &[&t.schema, &t.name, &own.columns[0]],
        )
        .await
        .map_err(q)?
        .and_then(|r| r.get(0));
    let imported = if on_sandbox {
        crate::sql::imported::record_of(c, t).await?
    } else {
        None
    };
    let built_on = match (own.sample, on_sandbox) {
        (None, true) => "the table itself".to_string(),
        (None, false) => "a copy of its indexed column(s) in the lab schema".to_string(),
        (Some(_), true) => "copies of sampled rows (whole rows) in the lab schema".to_string(),
        (Some(_), false) => {
            "copies of sampled rows (indexed column(s) only) in the lab schema".to_string()
        }
    };
    Ok(OwnTableInfo {
        table: t.clone(),
        columns: own.columns.clone(),
        types: types.join(", "),
        rows,
        rows_counted,
        heap_bytes,
        correlation,
        on_sandbox,
        built_on,
        imported,
        projections: Vec::new(),
    })
}

/// The run id a trial index's name was made from (`pglab_ib_20261203t153757z_0f24` →
/// `20261203T153757Z-0f24`), when the name has that shape.
fn run_of_index(name: &str) -> Option<String> {
    let plain = name.strip_prefix("pglab_ib_")?;
    let b = plain.as_bytes();
    if b.len() != 21 || b[8] != b't' || b[15] != b'z' || b[16] != b'_' {
        return None;
    }
    Some(format!(
        "{}T{}Z-{}",
        &plain[..8],
        &plain[9..15],
        &plain[17..]
    ))
}

/// Drop the trial indexes (`pglab_ib_…`) of runs that are no longer alive (their advisory lock
/// is free) from a table of the sandbox: a pglab killed between two builds leaves one. Returns
/// the names dropped.
async fn drop_stale_indexes(c: &Client, t: &TableName) -> Vec<String> {
    let Ok(rows) = c
        .query(
            "SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
              WHERE x.indrelid = $1::text::regclass AND i.relname LIKE 'pglab\\_ib\\_%'",
            &[&t.sql()],
        )
        .await
    else {
        return Vec::new();
    };
    let mut dropped = Vec::new();
    for r in rows {
        let name: String = r.get(0);
        let Some(run) = run_of_index(&name) else {
            continue;
        };
        if crate::experiment::lab::leftovers::run_is_live(c, &run).await {
            continue;
        }
        let sql = format!("DROP INDEX IF EXISTS {}.{}", ident(&t.schema), ident(&name));
        if c.batch_execute(&sql).await.is_ok() {
            dropped.push(name);
        }
    }
    dropped
}

/// At the start of a run on an existing table: check it, say which data the run measures
/// and where it builds, and return the spec with the datasets as its orders (None: the run
/// builds on generated data).
pub(crate) async fn prepare(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    report: &mut super::report::IndexBuildReport,
) -> Result<Option<IndexBuildSpec>, RunError> {
    let Some(own) = &spec.table else {
        return Ok(None);
    };
    let on_sandbox = ctx.opts.sandbox.is_some() && ctx.target.is_sandbox();
    let c = ctx.session().await?;
    let info = inspect(&c, own, on_sandbox)
        .await
        .map_err(RunError::Failed)?;
    if on_sandbox {
        for name in drop_stale_indexes(&c, &info.table).await {
            ctx.note(format!(
                "dropped index {name} on {}: an interrupted index-build run left it",
                info.table
            ))
            .await;
        }
    }
    let writes = super::own_writes::plan(&c, spec, own, &info)
        .await
        .map_err(RunError::Failed)?;
    if !on_sandbox {
        ctx.note(format!(
            "this run writes on {} (--writes lab): {}",
            ctx.target.describe(),
            writes.sentence()
        ))
        .await;
    }
    let free = crate::experiment::lab::preflight::free_space(
        ctx.opts.local_data_dir.as_deref(),
        ctx.opts.disk_budget,
    );
    writes.check_free(free).map_err(RunError::Failed)?;
    if let Some(rec) = &info.imported {
        ctx.note(format!("data: {}", rec.describe())).await;
    }
    ctx.note(format!(
        "{} ({}): {} rows{}, heap {}; the builds run on {}",
        info.table,
        info.columns.join(", "),
        info.rows
            .map(|r| format!("{}{r}", if info.rows_counted { "" } else { "≈" }))
            .unwrap_or_else(|| "unknown".into()),
        if info.rows_counted {
            ""
        } else {
            " (the planner's estimate)"
        },
        format_bytes(info.heap_bytes.max(0) as u64),
        info.built_on
    ))
    .await;
    let mut derived = spec.clone();
    derived.orders = own.orders(on_sandbox);
    report.params = derived.clone();
    report.own = Some(info);
    Ok(Some(derived))
}

/// The dataset of one order: the table itself, or a copy made now.
pub(crate) async fn ensure(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    info: &OwnTableInfo,
    order: Order,
) -> Result<DatasetInfo, RunError> {
    let mut ds = DatasetInfo {
        table: info.table.name.clone(),
        order,
        rows: info.rows.unwrap_or(0),
        key_type: info.types.clone(),
        heap_bytes: info.heap_bytes,
        correlation: info.correlation,
        reused: true,
        generate_seconds: 0.0,
        distribution: Distribution::none(&ctx.server),
        schema: Some(info.table.schema.clone()),
        columns: info.columns.clone(),
        index: format!("pglab_ib_{}", plain_name(&ctx.run_id)),
    };
    let Order::Copy(ppm) = order else {
        return Ok(ds);
    };
    let client = ctx.session().await?;
    let name = format!("ibt_{}_{ppm}", plain_name(&ctx.run_id));
    let started = std::time::Instant::now();
    let rows = copy(ctx, &client, spec, info, &name, ppm).await?;
    let r = client
        .query_one(
            "SELECT pg_relation_size($1::text::regclass),
                    (SELECT correlation::float8 FROM pg_stats WHERE schemaname = $2 AND tablename = $3 AND attname = $4)",
            &[&ctx.table(&name), &ctx.opts.schema, &name, &info.columns[0]],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    ds.table = name;
    ds.schema = None;
    ds.index = String::new();
    ds.rows = rows;
    ds.heap_bytes = r.get(0);
    ds.correlation = r.get(1);
    ds.reused = false;
    ds.generate_seconds = started.elapsed().as_secs_f64();
    Ok(ds)
}

/// `CREATE TABLE AS` the copy (marked as this run's in the same transaction, so it never
/// exists unmarked), then `VACUUM (ANALYZE)` it. Returns its rows.
async fn copy(
    ctx: &RunCtx,
    c: &Client,
    spec: &IndexBuildSpec,
    info: &OwnTableInfo,
    name: &str,
    ppm: u32,
) -> Result<u64, RunError> {
    let what = if info.on_sandbox {
        "*".to_string()
    } else {
        info.columns
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pct = ppm as f64 / 10_000.0;
    let sample = if ppm >= 1_000_000 {
        String::new()
    } else {
        format!(
            " TABLESAMPLE BERNOULLI ({}) REPEATABLE ({})",
            crate::sql::quote::percent(pct),
            spec.seed
        )
    };
    ctx.emit
        .phase(
            None,
            format!(
                "copying {} of {} into {}.{name}",
                Order::Copy(ppm)
                    .name()
                    .trim_start_matches("copy:")
                    .replace("copy", "all"),
                info.table,
                ctx.opts.schema
            ),
        )
        .await;
    // A parallel scan would interleave the workers' rows: one process keeps the heap's order.
    c.batch_execute("SET max_parallel_workers_per_gather = 0; BEGIN")
        .await
        .map_err(|e| ctx.error(e))?;
    let ctas = format!(
        "CREATE TABLE {} AS SELECT {what} FROM ONLY {}{sample}",
        ctx.table(name),
        info.table.sql()
    );
    let rows = match ctx.cancellable(c, c.execute(ctas.as_str(), &[])).await {
        Ok(n) => n,
        Err(e) => {
            let _ = c.batch_execute("ROLLBACK").await;
            return Err(e);
        }
    };
    let mark = format!(
        "{MARK}run={} copy of {} for index-build",
        ctx.run_id, info.table
    );
    c.batch_execute(&format!(
        "COMMENT ON TABLE {} IS {}; COMMIT",
        ctx.table(name),
        literal(&mark)
    ))
    .await
    .map_err(|e| ctx.error(e))?;
    ctx.cancellable(
        c,
        c.batch_execute(&format!("VACUUM (ANALYZE) {}", ctx.table(name))),
    )
    .await?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_index_names_its_run() {
        let id = crate::sql::lab::new_run_id();
        let name = format!("pglab_ib_{}", plain_name(&id));
        assert_eq!(run_of_index(&name), Some(id));
        assert_eq!(run_of_index("pglab_ib_mine"), None);
        assert_eq!(run_of_index("orders_pkey"), None);
    }
}
