//! The `distribute` dimension: on a Citus coordinator an experiment's table can be a
//! distributed table (`create_distributed_table`), sharded by one of its columns; `none` is
//! a plain table, the only choice on plain PostgreSQL. What each trial records
//! ([`Distribution`]), how a table is distributed, its size across the shards, and sessions
//! on the workers for what only they can tell (index-build progress, temp files).

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::context::{RunCtx, RunError};
use super::field::{FieldDef, FieldKind};
use crate::server::{CitusNode, ServerSnapshot, Target};

/// How a trial's table was laid out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Distribution {
    /// The distribution column (None: a plain table on one server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// Shards of the table (0 when it is not distributed).
    #[serde(default)]
    pub shards: u32,
    /// The cluster's shape when the trial ran: its nodes, the coordinator included (1: one
    /// server).
    #[serde(default = "one")]
    pub nodes: u32,
}

fn one() -> u32 {
    1
}

impl Distribution {
    /// A plain table on a server of this shape.
    pub(crate) fn none(server: &ServerSnapshot) -> Distribution {
        Distribution {
            column: None,
            shards: 0,
            nodes: nodes(server),
        }
    }

    #[cfg(test)]
    /// "by id, 32 shards" or "none".
    pub(crate) fn label(&self) -> String {
        match &self.column {
            Some(c) => format!("by {c}, {} shards", self.shards),
            None => "none".into(),
        }
    }
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            column: None,
            shards: 0,
            nodes: 1,
        }
    }
}

/// Nodes of the server's cluster, the coordinator included (1: a plain server).
pub(crate) fn nodes(server: &ServerSnapshot) -> u32 {
    server
        .citus
        .as_ref()
        .map_or(1, |c| 1 + c.workers().len() as u32)
}

/// The field for an experiment whose table has one sensible distribution column.
pub(crate) const fn field(choices: &'static [&'static str], help: &'static str) -> FieldDef {
    FieldDef {
        key: "distribute",
        help,
        default: "none",
        kind: FieldKind::Choice(choices),
    }
}

/// The refusal when a run asks for a distributed table on a server without Citus.
pub(crate) fn refuse_without_citus(server: &ServerSnapshot, columns: &[String]) -> Option<String> {
    let first = columns.first()?;
    if server.citus.is_some() {
        return None;
    }
    Some(format!(
        "distribute = {first} needs a Citus coordinator, and this server has no citus extension in database {}: use distribute = none here, or run on the Citus sandbox (--citus-workers N) or on a coordinator (--db)",
        server.database
    ))
}

/// Make `table` (already created, still empty) a distributed table sharded by `column`,
/// with `shards` shards (None: the server's `citus.shard_count`). Returns what it became.
pub(crate) async fn distribute(
    ctx: &RunCtx,
    client: &Client,
    table: &str,
    column: &str,
    shards: Option<u32>,
) -> Result<Distribution, RunError> {
    let shards = shards
        .or_else(|| ctx.server.citus.as_ref().map(|c| c.shard_count))
        .unwrap_or(32) as i32;
    ctx.cancellable(
        client,
        client.execute(
            "SELECT create_distributed_table($1::text::regclass, $2::text, shard_count => $3::int4)",
            &[&table, &column, &shards],
        ),
    )
    .await?;
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = $1::text::regclass",
            &[&table],
        )
        .await
        .map_err(|e| ctx.error(e))?
        .get(0);
    Ok(Distribution {
        column: Some(column.to_string()),
        shards: n as u32,
        nodes: nodes(&ctx.server),
    })
}

/// (table bytes, index bytes) of `table` (a qualified, quoted name): across its shards when
/// it is distributed (Citus' size functions), else the local relation.
pub(crate) async fn sizes(
    client: &Client,
    table: &str,
    distributed: bool,
) -> Result<(i64, i64), tokio_postgres::Error> {
    let sql = if distributed {
        "SELECT citus_table_size($1::text::regclass)::int8,
                (citus_total_relation_size($1::text::regclass) - citus_table_size($1::text::regclass))::int8"
    } else {
        "SELECT pg_table_size($1::text::regclass), pg_indexes_size($1::text::regclass)"
    };
    let r = client.query_one(sql, &[&table]).await?;
    Ok((r.get(0), r.get(1)))
}

/// Rows of a distributed `table` counted shard by shard through the coordinator
/// (`run_command_on_shards`), summed: what a check of the rows an experiment reports reads.
pub(crate) async fn rows_in_shards(
    client: &Client,
    table: &str,
) -> Result<i64, tokio_postgres::Error> {
    let row = client
        .query_one(
            "SELECT coalesce(sum(result::int8), 0)::int8, bool_and(success)
               FROM run_command_on_shards($1::text::regclass, 'SELECT count(*) FROM %s')",
            &[&table],
        )
        .await?;
    let ok: Option<bool> = row.get(1);
    Ok(if ok == Some(false) { -1 } else { row.get(0) })
}

/// Bytes of `table`'s shards on each node holding some, as (node "host:port", bytes), in
/// node order: what sharding by one column or another puts where.
pub(crate) async fn bytes_per_node(
    client: &Client,
    table: &str,
) -> Result<Vec<(String, i64)>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT s.nodename || ':' || s.nodeport, sum(s.shard_size)::int8
               FROM citus_shards s
              WHERE s.table_name = $1::text::regclass
              GROUP BY s.nodename, s.nodeport ORDER BY s.nodename, s.nodeport",
            &[&table],
        )
        .await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Sessions on each active worker, opened with the target's own credentials, for what only
/// the workers can tell. A worker that cannot be reached is left out (the caller shows a
/// spinner instead of its progress).
pub(crate) async fn worker_sessions(ctx: &RunCtx) -> Vec<Client> {
    let Some(citus) = &ctx.server.citus else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for node in citus.workers() {
        match worker_target(&ctx.target, node) {
            Ok(t) => match t.connect().await {
                Ok(c) => out.push(c),
                Err(e) => tracing::info!("no session on worker {}: {e}", node.address()),
            },
            Err(e) => tracing::info!("no session on worker {}: {e}", node.address()),
        }
    }
    out
}

fn worker_target(target: &Target, node: &CitusNode) -> Result<Target, crate::server::TargetError> {
    let mut params = target.params.clone();
    params.hosts = vec![node.host.clone()];
    params.port = node.port as u16;
    Target::new(params, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(Distribution::default().label(), "none");
        let d = Distribution {
            column: Some("id".into()),
            shards: 32,
            nodes: 3,
        };
        assert_eq!(d.label(), "by id, 32 shards");
    }
}
