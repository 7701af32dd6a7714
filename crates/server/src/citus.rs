//! Citus, PostgreSQL's sharding extension, as pglab sees it on any target: whether the
//! server is a Citus coordinator, which nodes it knows, the shard count a new distributed
//! table gets by default, and `citus_version()`. Read on the coordinator only; pglab never
//! needs a session on a worker to describe the cluster.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

/// One row of `pg_dist_node`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitusNode {
    pub id: i32,
    pub host: String,
    pub port: i32,
    /// `pg_dist_node.groupid`: 0 is the coordinator.
    pub group: i32,
    pub active: bool,
    /// Whether new shards are placed on the node (the coordinator's is usually false).
    pub has_shards: bool,
}

impl CitusNode {
    pub(crate) fn is_coordinator(&self) -> bool {
        self.group == 0
    }
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// What a Citus coordinator says about its cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitusInfo {
    /// `citus_version()`, e.g. "Citus 13.2.2 on x86_64-pc-linux-gnu, compiled by gcc …".
    pub version: String,
    /// The extension's version (`13.2-1`).
    pub extension: String,
    /// `citus.shard_count`: shards a distributed table gets unless told otherwise.
    pub shard_count: u32,
    pub nodes: Vec<CitusNode>,
}

impl CitusInfo {
    /// The active worker nodes (primaries outside group 0).
    pub fn workers(&self) -> Vec<&CitusNode> {
        self.nodes
            .iter()
            .filter(|n| !n.is_coordinator() && n.active)
            .collect()
    }

    /// "Citus 13.2.2" from the long `citus_version()` text.
    pub(crate) fn short_version(&self) -> String {
        self.version
            .split(" on ")
            .next()
            .unwrap_or(&self.version)
            .to_string()
    }

    /// The cluster's shape as it is recorded with every result: nodes holding data.
    pub(crate) fn shape(&self) -> ClusterShape {
        ClusterShape {
            workers: self.workers().len() as u32,
        }
    }

    /// "coordinator 127.0.0.1:5432 · worker 127.0.0.1:5433 · …" (inactive nodes say so).
    pub fn nodes_line(&self) -> String {
        self.nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {}{}",
                    if n.is_coordinator() {
                        "coordinator"
                    } else {
                        "worker"
                    },
                    n.address(),
                    if n.active { "" } else { " (inactive)" }
                )
            })
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// True when every worker is on this machine (a sandbox cluster, or one built by hand
    /// on loopback).
    pub(crate) fn workers_local(&self) -> bool {
        self.workers()
            .iter()
            .all(|n| n.host == "localhost" || n.host.starts_with("127.") || n.host == "::1")
    }

    /// What the host figures describe on a Citus target: pglab's machine, which is not the
    /// workers' unless they all run here.
    pub fn host_note(&self) -> &'static str {
        if self.workers_local() {
            "the Citus workers run on this machine too"
        } else {
            "pglab's machine, not the Citus workers'"
        }
    }

    /// "Citus 13.2.2 · 2 workers · 32 shards by default".
    pub fn summary(&self) -> String {
        let w = self.workers().len();
        format!(
            "{} · {w} worker{} · {} shards by default",
            self.short_version(),
            if w == 1 { "" } else { "s" },
            self.shard_count
        )
    }
}

/// The shape of the cluster a result was measured on (None in a fingerprint: one server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterShape {
    pub workers: u32,
}

impl ClusterShape {
    /// "coordinator + 2 workers" (the name `history compare` shows).
    pub fn label(&self) -> String {
        format!(
            "coordinator + {} worker{}",
            self.workers,
            if self.workers == 1 { "" } else { "s" }
        )
    }

    /// The label of an optional shape: None is one server.
    pub fn label_of(shape: Option<ClusterShape>) -> String {
        shape.map_or_else(|| "single server".into(), |s| s.label())
    }
}

/// Read the Citus facts over an open session: None when the extension is not created in
/// this database (a plain server, or Citus installed but not used here).
pub(crate) async fn read(client: &Client) -> Result<Option<CitusInfo>, tokio_postgres::Error> {
    let Some(ext) = client
        .query_opt(
            "SELECT extversion FROM pg_extension WHERE extname = 'citus'",
            &[],
        )
        .await?
    else {
        return Ok(None);
    };
    let row = client
        .query_one(
            "SELECT citus_version()::text, current_setting('citus.shard_count')::int",
            &[],
        )
        .await?;
    let nodes = client
        .query(
            "SELECT nodeid, nodename::text, nodeport, groupid, isactive, shouldhaveshards
               FROM pg_dist_node WHERE noderole = 'primary' ORDER BY groupid, nodeid",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| CitusNode {
            id: r.get(0),
            host: r.get(1),
            port: r.get(2),
            group: r.get(3),
            active: r.get(4),
            has_shards: r.get(5),
        })
        .collect();
    Ok(Some(CitusInfo {
        version: row.get(0),
        extension: ext.get(0),
        shard_count: row.get::<_, i32>(1).max(1) as u32,
        nodes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: i32, group: i32, active: bool) -> CitusNode {
        CitusNode {
            id,
            host: "127.0.0.1".into(),
            port: 5432 + id,
            group,
            active,
            has_shards: group != 0,
        }
    }

    #[test]
    fn workers_are_the_active_nodes_outside_group_zero() {
        let info = CitusInfo {
            version: "Citus 13.2.2 on x86_64-pc-linux-gnu, compiled by gcc".into(),
            extension: "13.2-1".into(),
            shard_count: 32,
            nodes: vec![node(1, 0, true), node(2, 1, true), node(3, 2, false)],
        };
        assert_eq!(info.workers().len(), 1);
        assert_eq!(info.short_version(), "Citus 13.2.2");
        assert_eq!(
            info.summary(),
            "Citus 13.2.2 · 1 worker · 32 shards by default"
        );
        assert_eq!(info.shape().label(), "coordinator + 1 worker");
        assert_eq!(ClusterShape::label_of(None), "single server");
    }
}
