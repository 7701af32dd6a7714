//! The table a trial loads into, in the lab schema and marked as the run's so that every exit
//! path drops it, and the readings taken around a load (WAL position, row count, size).

use tokio_postgres::Client;

use super::payload::index_expression;
use super::spec::IngestSpec;
use crate::experiment::lab::distribute::{self, Distribution};
use crate::experiment::lab::{RunCtx, RunError};

/// The table name for a trial (`None`: the one table an appending run shares).
pub(crate) fn table_name(run_id: &str, trial: Option<usize>) -> String {
    let id = crate::sql::lab::plain_name(run_id);
    match trial {
        Some(n) => format!("ingest_{id}_t{n}"),
        None => format!("ingest_{id}_append"),
    }
}

/// Create `name` as `(id bigint, payload text|jsonb)` with the spec's secondary indexes,
/// marked as this run's in the same transaction.
pub(crate) async fn create(
    ctx: &RunCtx,
    client: &Client,
    name: &str,
    spec: &IngestSpec,
) -> Result<(), RunError> {
    let t = ctx.table(name);
    let create = format!(
        "CREATE TABLE {t} (id bigint NOT NULL, payload {})",
        spec.payload_type.sql_type()
    );
    ctx.create_marked(client, name, &create, "ingest trial table")
        .await?;
    if spec.distribute {
        // Before the indexes, so that they are created on every shard as the table's.
        distribute::distribute(ctx, client, &t, "id", None).await?;
    }
    for i in 1..=spec.indexes {
        let sql = format!(
            "CREATE INDEX ON {t} {}",
            index_expression(i, spec.payload_type)
        );
        ctx.cancellable(client, client.batch_execute(&sql)).await?;
    }
    Ok(())
}

pub(crate) async fn drop(ctx: &RunCtx, client: &Client, name: &str) -> Result<(), RunError> {
    let sql = format!("DROP TABLE IF EXISTS {}", ctx.table(name));
    client.batch_execute(&sql).await.map_err(|e| ctx.error(e))
}

/// The current WAL insert position, as text.
pub(crate) async fn wal_position(ctx: &RunCtx, client: &Client) -> Result<String, RunError> {
    let row = client
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(row.get(0))
}

/// Bytes of WAL written since `from` (a position from [`wal_position`]).
/// Checkpoints the server has started so far (timed and requested), None when the view
/// cannot be read.
pub(crate) async fn checkpoints(ctx: &RunCtx, client: &Client) -> Option<i64> {
    let sql = if ctx.server.version_num >= 170000 {
        "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
    } else {
        "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
    };
    client.query_one(sql, &[]).await.ok().map(|r| r.get(0))
}

pub(crate) async fn wal_since(ctx: &RunCtx, client: &Client, from: &str) -> Result<i64, RunError> {
    let row = client
        .query_one(
            "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::text::pg_lsn)::int8",
            &[&from],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    Ok(row.get(0))
}

/// Rows in the table, its total size on disk (across its shards when it is distributed),
/// and how it is distributed.
pub(crate) async fn count_and_size(
    ctx: &RunCtx,
    client: &Client,
    name: &str,
) -> Result<(u64, i64, Distribution), RunError> {
    let t = ctx.table(name);
    let shards: i64 = if ctx.server.citus.is_some() {
        client
            .query_one(
                "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = $1::text::regclass",
                &[&t],
            )
            .await
            .map_err(|e| ctx.error(e))?
            .get(0)
    } else {
        0
    };
    let size = if shards > 0 {
        "citus_total_relation_size"
    } else {
        "pg_total_relation_size"
    };
    let sql = format!("SELECT count(*), {size}($1::text::regclass)::int8 FROM {t}");
    let row = ctx
        .cancellable(client, client.query_one(&sql, &[&t]))
        .await?;
    let mut count: i64 = row.get(0);
    if shards > 0 {
        // Counted again shard by shard: the rows the coordinator routed must all be there.
        let per_shard = distribute::rows_in_shards(client, &t)
            .await
            .map_err(|e| ctx.error(e))?;
        if per_shard != count {
            return Err(RunError::failed(format!(
                "{name}: count(*) through the coordinator says {count} rows but its shards hold {per_shard}"
            )));
        }
        count = per_shard;
    }
    let distribution = if shards > 0 {
        Distribution {
            column: Some("id".into()),
            shards: shards as u32,
            nodes: distribute::nodes(&ctx.server),
        }
    } else {
        Distribution::none(&ctx.server)
    };
    Ok((count.max(0) as u64, row.get(1), distribution))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_identifiers() {
        assert_eq!(
            table_name("20250101T120000Z-ab12", Some(3)),
            "ingest_20250101t120000z_ab12_t3"
        );
        assert_eq!(
            table_name("20250101T120000Z-ab12", None),
            "ingest_20250101t120000z_ab12_append"
        );
    }
}
