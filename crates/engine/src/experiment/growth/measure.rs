//! What is measured at each step: the write of one new version (in one transaction, by the
//! chosen method), the read of all content of one version, and the sizes on disk (`step`
//! takes them by rounds).

use std::collections::BTreeMap;
use std::time::Instant;

use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use super::churn::Delta;
use super::copy::CopyStream;
use super::fill::DesignState;
use super::key::Key;
use super::kinds::{Design, WriteMethod};
use super::report::NodeBytes;
use super::schema::TableDef;
use crate::experiment::lab::distribute;
use crate::experiment::lab::{RunCtx, RunError};

/// Rows per multi-row INSERT statement.
const MULTI_BATCH: usize = 1000;

/// One version written: when it began, its time from BEGIN to the end of COMMIT, the
/// COMMIT's own time (where a synchronous standby's wait shows), and its rows.
pub(crate) struct Written {
    pub began: Instant,
    pub seconds: f64,
    pub commit_seconds: f64,
    pub rows: u64,
}

/// Write the next version of `st` by `method`, in one transaction, timed.
pub(crate) async fn write_version(
    ctx: &RunCtx,
    client: &Client,
    st: &mut DesignState,
    method: WriteMethod,
) -> Result<Written, RunError> {
    let version = NextVersion::of(st);
    // Statements are prepared outside the timing, as a driver or ORM caches them.
    let prepared = Prepared::new(ctx, client, &st.def).await?;
    let began = Instant::now();
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| ctx.error(e))?;
    let body = write_rows(ctx, client, &st.def.qualified, method, &prepared, &version);
    if let Err(e) = body.await {
        let _ = client.batch_execute("ROLLBACK").await;
        return Err(e);
    }
    let committing = Instant::now();
    ctx.cancellable(client, client.batch_execute("COMMIT"))
        .await?;
    let rows = version.rows.len() as u64;
    st.rows += rows;
    Ok(Written {
        began,
        seconds: began.elapsed().as_secs_f64(),
        commit_seconds: committing.elapsed().as_secs_f64(),
        rows,
    })
}

/// What one new version writes: its rows, and the contents it removes.
struct NextVersion {
    version: i64,
    /// Snapshot: (version, content) of every live content; ranges: (content, version_added)
    /// of the added ones.
    rows: Vec<(Key, Key)>,
    /// Ranges: the contents whose range the version closes.
    removed: Vec<Key>,
}

impl NextVersion {
    /// Advance `st`'s churn by one version.
    fn of(st: &mut DesignState) -> NextVersion {
        let mut delta = Delta::default();
        st.churn.advance(&mut delta);
        let shape = st.def.shape;
        let rows: Vec<(Key, Key)> = match st.design().base() {
            Design::Snapshot => st
                .churn
                .alive()
                .iter()
                .map(|&c| (shape.version(delta.version), shape.content(c)))
                .collect(),
            _ => delta
                .added
                .iter()
                .map(|&c| (shape.content(c), Key::Int(delta.version)))
                .collect(),
        };
        let removed: Vec<Key> = delta.removed.iter().map(|&c| shape.content(c)).collect();
        NextVersion {
            version: delta.version,
            rows,
            removed,
        }
    }
}

/// The statements a version's write runs, prepared before it is timed.
struct Prepared {
    /// The columns rows are written to: `version, content` (snapshot) or `content,
    /// version_added` (ranges).
    cols: &'static str,
    /// One row's INSERT.
    single: tokio_postgres::Statement,
    /// Ranges: the UPDATEs that close one removed content's range, and many at once.
    update: Option<(tokio_postgres::Statement, tokio_postgres::Statement)>,
}

impl Prepared {
    /// Prepare the UPDATEs (ranges only), then the INSERT.
    async fn new(ctx: &RunCtx, client: &Client, def: &TableDef) -> Result<Prepared, RunError> {
        let (cols, update) = match def.design.base() {
            Design::Snapshot => ("version, content", None),
            _ => (
                "content, version_added",
                Some((
                    client
                        .prepare(&format!(
                            "UPDATE {} SET version_removed = $1 WHERE content = $2 AND version_removed IS NULL",
                            def.qualified
                        ))
                        .await
                        .map_err(|e| ctx.error(e))?,
                    client
                        .prepare(&format!(
                            "UPDATE {} SET version_removed = $1 WHERE content = ANY($2) AND version_removed IS NULL",
                            def.qualified
                        ))
                        .await
                        .map_err(|e| ctx.error(e))?,
                )),
            ),
        };
        let single = client
            .prepare(&format!(
                "INSERT INTO {} ({cols}) VALUES ($1, $2)",
                def.qualified
            ))
            .await
            .map_err(|e| ctx.error(e))?;
        Ok(Prepared {
            cols,
            single,
            update,
        })
    }
}

/// The version's rows and removals, inside its transaction, by `method`.
async fn write_rows(
    ctx: &RunCtx,
    client: &Client,
    table: &str,
    method: WriteMethod,
    p: &Prepared,
    v: &NextVersion,
) -> Result<(), RunError> {
    match method {
        WriteMethod::Insert => insert_each(ctx, client, p, v).await,
        WriteMethod::Multi => {
            multi_insert(ctx, client, table, p.cols, &v.rows).await?;
            remove_at_once(ctx, client, p, v).await
        }
        WriteMethod::Copy => {
            copy_rows(ctx, client, table, p.cols, &v.rows).await?;
            remove_at_once(ctx, client, p, v).await
        }
    }
}

/// One INSERT per row, then one UPDATE per removed content.
async fn insert_each(
    ctx: &RunCtx,
    client: &Client,
    p: &Prepared,
    v: &NextVersion,
) -> Result<(), RunError> {
    for (i, (a, b)) in v.rows.iter().enumerate() {
        if i % 256 == 0 {
            ctx.check()?;
        }
        client
            .execute(&p.single, &[a, b])
            .await
            .map_err(|e| ctx.error(e))?;
    }
    if let Some((one, _)) = &p.update {
        for r in &v.removed {
            ctx.check()?;
            client
                .execute(one, &[&v.version, r])
                .await
                .map_err(|e| ctx.error(e))?;
        }
    }
    Ok(())
}

/// Ranges: one UPDATE closes the range of every removed content.
async fn remove_at_once(
    ctx: &RunCtx,
    client: &Client,
    p: &Prepared,
    v: &NextVersion,
) -> Result<(), RunError> {
    if let Some((_, many)) = &p.update
        && !v.removed.is_empty()
    {
        ctx.cancellable(client, client.execute(many, &[&v.version, &v.removed]))
            .await?;
    }
    Ok(())
}

/// The rows by one binary COPY.
async fn copy_rows(
    ctx: &RunCtx,
    client: &Client,
    table: &str,
    cols: &str,
    rows: &[(Key, Key)],
) -> Result<(), RunError> {
    let mut copy = CopyStream::start(ctx, client, table, cols, String::new(), 0, None)
        .await
        .map_err(|e| e.into_run())?;
    for (a, b) in rows {
        copy.row(&[Some(*a), Some(*b)])
            .await
            .map_err(|e| e.into_run())?;
    }
    copy.finish(client).await.map_err(|e| e.into_run())?;
    Ok(())
}

async fn multi_insert(
    ctx: &RunCtx,
    client: &Client,
    table: &str,
    cols: &str,
    rows: &[(Key, Key)],
) -> Result<(), RunError> {
    let mut prepared: BTreeMap<usize, tokio_postgres::Statement> = BTreeMap::new();
    for batch in rows.chunks(MULTI_BATCH) {
        let n = batch.len();
        let stmt = match prepared.entry(n) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let values: Vec<String> = (0..n)
                    .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
                    .collect();
                let stmt = client
                    .prepare(&format!(
                        "INSERT INTO {table} ({cols}) VALUES {}",
                        values.join(", ")
                    ))
                    .await
                    .map_err(|e| ctx.error(e))?;
                e.insert(stmt)
            }
        };
        let params: Vec<&(dyn ToSql + Sync)> = batch
            .iter()
            .flat_map(|(a, b)| [a as &(dyn ToSql + Sync), b as &(dyn ToSql + Sync)])
            .collect();
        ctx.cancellable(client, client.execute(&*stmt, &params))
            .await?;
    }
    Ok(())
}

/// The query that reads all content of one version.
pub(crate) fn read_sql(def: &TableDef) -> String {
    match def.design.base() {
        Design::Snapshot => format!("SELECT content FROM {} WHERE version = $1", def.qualified),
        _ => format!(
            "SELECT content FROM {} WHERE version_added <= $1 AND (version_removed IS NULL OR version_removed > $1)",
            def.qualified
        ),
    }
}

/// Read all content of `version` (its key, `TableDef::version_param`): (seconds, content
/// fingerprints sorted).
pub(crate) async fn read_version(
    ctx: &RunCtx,
    client: &Client,
    stmt: &tokio_postgres::Statement,
    version: Key,
) -> Result<(f64, Vec<i64>), RunError> {
    let started = Instant::now();
    let rows = ctx
        .cancellable(client, client.query(stmt, &[&version]))
        .await?;
    let secs = started.elapsed().as_secs_f64();
    let mut ids: Vec<i64> = rows
        .iter()
        .map(|r| r.get::<_, Key>(0).fingerprint())
        .collect();
    ids.sort_unstable();
    Ok((secs, ids))
}

/// A short fingerprint of a set of content ids (sorted), to compare designs.
pub(crate) fn digest(sorted: &[i64]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &id in sorted {
        for b in id.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// `pg_table_size` of the table and `pg_relation_size` of each index (by report name).
pub(crate) async fn sizes(
    ctx: &RunCtx,
    client: &Client,
    def: &TableDef,
) -> Result<(u64, BTreeMap<String, u64>, Vec<NodeBytes>), RunError> {
    if def.design.distribution().is_some() {
        let (table, indexes) = distribute::sizes(client, &def.qualified, true)
            .await
            .map_err(|e| ctx.error(e))?;
        let nodes = distribute::bytes_per_node(client, &def.qualified)
            .await
            .map_err(|e| ctx.error(e))?
            .into_iter()
            .map(|(node, bytes)| NodeBytes {
                node,
                bytes: bytes.max(0) as u64,
            })
            .collect();
        let indexes = BTreeMap::from([("all indexes".to_string(), indexes.max(0) as u64)]);
        return Ok((table.max(0) as u64, indexes, nodes));
    }
    let size = |sql: &'static str, rel: String| async move {
        let row = client
            .query_one(sql, &[&rel])
            .await
            .map_err(|e| ctx.error(e))?;
        Ok::<u64, RunError>(row.get::<_, i64>(0).max(0) as u64)
    };
    let table = size(
        "SELECT pg_table_size($1::text::regclass)",
        def.qualified.clone(),
    )
    .await?;
    let mut indexes = BTreeMap::new();
    for i in &def.indexes {
        let b = size(
            "SELECT pg_relation_size($1::text::regclass)",
            i.qualified.clone(),
        )
        .await?;
        indexes.insert(i.name.to_string(), b);
    }
    Ok((table, indexes, Vec::new()))
}

/// Total bytes (heap, indexes, TOAST) of the named relations in the lab schema.
pub(crate) async fn total_bytes(
    ctx: &RunCtx,
    client: &Client,
    relnames: &[String],
) -> Result<u64, RunError> {
    let row = client
        .query_one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relname = ANY($2) AND c.relkind = 'r'",
            &[&ctx.opts.schema, &relnames],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(row.get::<_, i64>(0).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_tells_sets_apart() {
        assert_eq!(digest(&[1, 2, 3]), digest(&[1, 2, 3]));
        assert_ne!(digest(&[1, 2, 3]), digest(&[1, 2, 4]));
        assert_ne!(digest(&[]), digest(&[0]));
    }
}
