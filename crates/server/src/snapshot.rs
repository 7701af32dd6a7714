//! A reading of the server at a moment: who and where it is, the settings that matter to the
//! experiments, and the cumulative counters the live rates are computed from.
//!
//! Works for a role without superuser rights: what it may not read is marked so, not an error.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::TargetError;
use super::connect::{Location, Target};
use super::error::describe_query_error;

/// The settings the experiments depend on, shown in the target pane and stored with results.
pub(crate) const SETTINGS: &[&str] = &[
    "shared_buffers",
    "maintenance_work_mem",
    "max_parallel_maintenance_workers",
    "max_worker_processes",
    "max_parallel_workers",
    "work_mem",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "max_wal_size",
    "checkpoint_timeout",
    "effective_io_concurrency",
    "max_connections",
    "superuser_reserved_connections",
    "default_transaction_read_only",
    "statement_timeout",
    "data_directory",
    "server_encoding",
    "block_size",
    "autovacuum",
];

/// The `connections` key of sessions whose state the role may not see.
pub const HIDDEN: &str = "hidden";

/// A setting as `pg_settings` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub value: String,
    pub unit: Option<String>,
    pub source: String,
}

impl Setting {
    /// The value with its unit applied the way `SHOW` prints it (e.g. `128MB`).
    pub fn pretty(&self) -> String {
        let Some(unit) = &self.unit else {
            return self.value.clone();
        };
        let Ok(n) = self.value.parse::<i64>() else {
            return self.value.clone();
        };
        let (mult, base) = match unit.as_str() {
            "8kB" => (8 * 1024, true),
            "kB" => (1024, true),
            "MB" => (1024 * 1024, true),
            "B" => (1, true),
            "ms" | "s" | "min" => (1, false),
            _ => (1, false),
        };
        if base && n >= 0 {
            crate::measure::units::format_size_setting(n as u64 * mult)
        } else {
            format!("{n}{unit}")
        }
    }
    /// The value in bytes for memory settings.
    pub fn bytes(&self) -> Option<u64> {
        let n: u64 = self.value.parse().ok()?;
        Some(match self.unit.as_deref()? {
            "8kB" => n * 8192,
            "kB" => n * 1024,
            "MB" => n * 1024 * 1024,
            "B" => n,
            _ => return None,
        })
    }
}

/// A field the role may or may not read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Readable<T> {
    Value(T),
    Denied { denied: String },
}

impl<T> Readable<T> {
    pub fn value(&self) -> Option<&T> {
        match self {
            Readable::Value(v) => Some(v),
            Readable::Denied { .. } => None,
        }
    }
}

/// Cumulative counters; rates are differences between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub xact_commit: i64,
    pub xact_rollback: i64,
    pub blks_hit: i64,
    pub blks_read: i64,
    pub temp_files: i64,
    pub temp_bytes: i64,
    /// From `pg_stat_wal` (PostgreSQL 14+).
    pub wal_bytes: Option<i64>,
    pub checkpoints: Option<i64>,
}

/// Per-second rates between two counter readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Rates {
    pub commits_per_s: f64,
    pub wal_bytes_per_s: f64,
    pub temp_bytes_per_s: f64,
    /// Cache hit ratio over the interval (0..1), None when no block was touched.
    pub cache_hit: Option<f64>,
}

/// The server at a moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSnapshot {
    pub version: String,
    pub version_num: i32,
    pub version_full: String,
    pub location: Location,
    pub target: String,
    pub tls: Option<String>,
    pub in_recovery: bool,
    pub database: String,
    pub database_bytes: i64,
    pub user: String,
    pub superuser: bool,
    pub can_checkpoint: bool,
    /// Client sessions by state (`active`, `idle`, `idle in transaction`, …, `other` for rows
    /// the role may not see the state of), not counting the session that read the snapshot
    /// (pglab's own poller), so that an idle server reads idle.
    pub connections: BTreeMap<String, i64>,
    pub settings: BTreeMap<String, Readable<Setting>>,
    pub counters: Counters,
    /// Cumulative cache hit ratio of this database since stats reset.
    pub cache_hit_total: Option<f64>,
    /// Settings set with `ALTER SYSTEM` (from `postgresql.auto.conf`), as `SHOW` prints
    /// them: on the sandbox, where it differs from its own configuration. Empty when none
    /// or when the role may not see where settings come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub altered: Vec<(String, String)>,
    /// The Citus cluster this server coordinates (None: a plain server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citus: Option<super::CitusInfo>,
    /// A primary's standbys as its `pg_stat_replication` shows them (read-only, any server;
    /// the lags are NULL for a role without `pg_read_all_stats`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<super::replication::ReplicaLag>,
    /// A hot standby's own lag (None on a primary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standby_lag: Option<super::replication::StandbyLag>,
    #[serde(skip)]
    pub taken: Option<Instant>,
}

/// The part of a snapshot stored with every result: enough to explain a difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerFingerprint {
    pub version: String,
    pub version_num: i32,
    pub location: String,
    pub sandbox: bool,
    pub settings: BTreeMap<String, String>,
    /// The Citus cluster's shape (None: one server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<super::ClusterShape>,
}

impl ServerSnapshot {
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.get(name).and_then(|r| r.value())
    }

    /// Sessions whose state this role may not see (it lacks `pg_read_all_stats`).
    pub fn connections_hidden(&self) -> i64 {
        self.connections.get(HIDDEN).copied().unwrap_or(0)
    }

    pub fn connections_total(&self) -> i64 {
        self.connections.values().sum()
    }

    /// Connection slots still free for a non-superuser: `max_connections` minus those in use
    /// minus `superuser_reserved_connections`.
    pub fn free_connection_slots(&self) -> Option<i64> {
        let max: i64 = self.setting("max_connections")?.value.parse().ok()?;
        let reserved: i64 = self
            .setting("superuser_reserved_connections")
            .and_then(|s| s.value.parse().ok())
            .unwrap_or(3);
        // `connections` leaves out the session that read the snapshot; it holds a slot too.
        Some(max - reserved - self.connections_total() - 1)
    }

    pub fn fingerprint(&self) -> ServerFingerprint {
        ServerFingerprint {
            version: self.version.clone(),
            version_num: self.version_num,
            location: self.location.label(),
            sandbox: matches!(self.location, Location::Sandbox { .. }),
            settings: self
                .settings
                .iter()
                .filter(|(k, _)| k.as_str() != "data_directory")
                .filter_map(|(k, v)| v.value().map(|s| (k.clone(), s.pretty())))
                .collect(),
            cluster: self.citus.as_ref().map(|c| c.shape()),
        }
    }

    /// Rates from `earlier` to `self`, per second of wall time.
    pub fn rates_since(&self, earlier: &ServerSnapshot) -> Option<Rates> {
        let dt = self
            .taken?
            .checked_duration_since(earlier.taken?)?
            .as_secs_f64();
        if dt <= 0.0 {
            return None;
        }
        let (a, b) = (&earlier.counters, &self.counters);
        let d = |x: i64, y: i64| ((y - x).max(0)) as f64 / dt;
        let hit = (b.blks_hit - a.blks_hit).max(0) as f64;
        let read = (b.blks_read - a.blks_read).max(0) as f64;
        Some(Rates {
            commits_per_s: d(a.xact_commit, b.xact_commit),
            wal_bytes_per_s: match (a.wal_bytes, b.wal_bytes) {
                (Some(x), Some(y)) => d(x, y),
                _ => 0.0,
            },
            temp_bytes_per_s: d(a.temp_bytes, b.temp_bytes),
            cache_hit: (hit + read > 0.0).then(|| hit / (hit + read)),
        })
    }
}

fn q(e: tokio_postgres::Error) -> TargetError {
    TargetError::Query(describe_query_error(&e))
}

/// Read a snapshot over an open session, in one read-only transaction that is rolled back
/// (it has nothing to keep): its statistics are read consistently, and pglab's polling never
/// shows up in the server's commit rate. The session must not be shared with concurrent
/// queries while this runs.
pub async fn read(client: &Client, target: &Target) -> Result<ServerSnapshot, TargetError> {
    client
        .batch_execute("/* pglab snapshot */ BEGIN READ ONLY")
        .await
        .map_err(q)?;
    let r = read_in_transaction(client, target).await;
    match (
        r,
        client.batch_execute("/* pglab snapshot */ ROLLBACK").await,
    ) {
        (Ok(s), Ok(())) => Ok(s),
        (Ok(_), Err(e)) => Err(q(e)),
        (Err(e), _) => Err(e),
    }
}

/// The snapshot's reads, in the order they run inside [`read`]'s transaction.
async fn read_in_transaction(
    client: &Client,
    target: &Target,
) -> Result<ServerSnapshot, TargetError> {
    let id = read_identity(client).await?;
    let can_checkpoint = may_checkpoint(client, id.superuser, id.version_num).await;
    let tls = read_tls(client).await;
    let connections = read_connections(client).await?;
    let settings = read_settings(client).await?;
    let counters = read_counters(client, id.version_num).await?;
    let altered = read_altered(client).await;
    let total = (counters.blks_hit + counters.blks_read) as f64;
    let citus = super::citus::read(client).await.map_err(q)?;
    // Last: reading them cannot fail for want of a privilege (pg_stat_replication shows a
    // role without pg_read_all_stats its rows with NULL lags), and an error would end the
    // read-only transaction the other reads share.
    let replicas = super::replication::read(client).await.unwrap_or_default();
    let standby_lag = if id.in_recovery {
        super::replication::standby_lag(client).await
    } else {
        None
    };
    Ok(ServerSnapshot {
        version: id.version,
        version_num: id.version_num,
        version_full: id.version_full,
        location: target.location.clone(),
        target: target.describe(),
        tls,
        in_recovery: id.in_recovery,
        database: id.database,
        database_bytes: id.database_bytes,
        user: id.user,
        superuser: id.superuser,
        can_checkpoint,
        connections,
        settings,
        cache_hit_total: (total > 0.0).then(|| counters.blks_hit as f64 / total),
        altered,
        counters,
        citus,
        replicas,
        standby_lag,
        taken: Some(Instant::now()),
    })
}

/// Who and where the server is: the snapshot's first read, in one row.
struct Identity {
    version: String,
    version_num: i32,
    version_full: String,
    in_recovery: bool,
    database: String,
    database_bytes: i64,
    user: String,
    superuser: bool,
}

async fn read_identity(client: &Client) -> Result<Identity, TargetError> {
    let row = client
        .query_one(
            "/* pglab snapshot */ SELECT current_setting('server_version'), current_setting('server_version_num')::int,
                    version(), pg_is_in_recovery(), current_database(),
                    pg_database_size(current_database()), current_user::text,
                    (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)",
            &[],
        )
        .await
        .map_err(q)?;
    Ok(Identity {
        version: row.get(0),
        version_num: row.get(1),
        version_full: row.get(2),
        in_recovery: row.get(3),
        database: row.get(4),
        database_bytes: row.get(5),
        user: row.get(6),
        superuser: row.get::<_, Option<bool>>(7).unwrap_or(false),
    })
}

/// A superuser may; from PostgreSQL 15 so may a member of `pg_checkpoint` (asked only then).
async fn may_checkpoint(client: &Client, superuser: bool, version_num: i32) -> bool {
    superuser
        || (version_num >= 150000
            && client
                .query_one(
                    "/* pglab snapshot */ SELECT pg_has_role(current_user, 'pg_checkpoint', 'MEMBER')",
                    &[],
                )
                .await
                .map(|r| r.get::<_, bool>(0))
                .unwrap_or(false))
}

/// This session's TLS version (None: not encrypted, or not readable).
async fn read_tls(client: &Client) -> Option<String> {
    client
        .query_opt(
            "/* pglab snapshot */ SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .ok()
        .flatten()
        .and_then(|r| {
            let on: bool = r.get(0);
            on.then(|| {
                r.get::<_, Option<String>>(1)
                    .unwrap_or_else(|| "TLS".into())
            })
        })
}

/// Client sessions by state, not counting this one. A role without `pg_read_all_stats` sees
/// other roles' sessions with every column but their database and user NULL, the backend
/// type too: those connected to a database are counted as [`HIDDEN`].
async fn read_connections(client: &Client) -> Result<BTreeMap<String, i64>, TargetError> {
    let mut connections = BTreeMap::new();
    for r in client
        .query(
            "/* pglab snapshot */ SELECT CASE WHEN backend_type IS NULL THEN 'hidden' ELSE coalesce(state, 'other') END, count(*)
               FROM pg_stat_activity
              WHERE (backend_type = 'client backend' OR (backend_type IS NULL AND datid IS NOT NULL))
                AND pid <> pg_backend_pid() GROUP BY 1",
            &[],
        )
        .await
        .map_err(q)?
    {
        connections.insert(r.get::<_, String>(0), r.get::<_, i64>(1));
    }
    Ok(connections)
}

/// Every name in [`SETTINGS`]: its `pg_settings` row, or denied when the role may not see it.
async fn read_settings(
    client: &Client,
) -> Result<BTreeMap<String, Readable<Setting>>, TargetError> {
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    let mut settings: BTreeMap<String, Readable<Setting>> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                Readable::Denied {
                    denied: "not visible to this role".into(),
                },
            )
        })
        .collect();
    for r in client
        .query(
            "/* pglab snapshot */ SELECT name, setting, unit, source FROM pg_settings WHERE name = ANY($1)",
            &[&names],
        )
        .await
        .map_err(q)?
    {
        settings.insert(
            r.get(0),
            Readable::Value(Setting {
                value: r.get(1),
                unit: r.get(2),
                source: r.get(3),
            }),
        );
    }
    Ok(settings)
}

/// This database's counters, with the WAL bytes (14+) and checkpoints when they can be read.
async fn read_counters(client: &Client, version_num: i32) -> Result<Counters, TargetError> {
    let c = client
        .query_one(
            "/* pglab snapshot */ SELECT xact_commit, xact_rollback, blks_hit, blks_read, temp_files, temp_bytes
               FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .map_err(q)?;
    let mut counters = Counters {
        xact_commit: c.get(0),
        xact_rollback: c.get(1),
        blks_hit: c.get(2),
        blks_read: c.get(3),
        temp_files: c.get(4),
        temp_bytes: c.get(5),
        wal_bytes: None,
        checkpoints: None,
    };
    if version_num >= 140000 {
        counters.wal_bytes = client
            .query_one(
                "/* pglab snapshot */ SELECT wal_bytes::bigint FROM pg_stat_wal",
                &[],
            )
            .await
            .ok()
            .map(|r| r.get(0));
    }
    let cp_sql = if version_num >= 170000 {
        "/* pglab snapshot */ SELECT num_timed + num_requested FROM pg_stat_checkpointer"
    } else {
        "/* pglab snapshot */ SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
    };
    counters.checkpoints = client.query_one(cp_sql, &[]).await.ok().map(|r| r.get(0));
    Ok(counters)
}

/// The settings `ALTER SYSTEM` set, as `SHOW` prints them.
async fn read_altered(client: &Client) -> Vec<(String, String)> {
    // sourcefile is NULL for roles that may not read it: then nothing is marked.
    client
        .query(
            "/* pglab snapshot */ SELECT name, current_setting(name) FROM pg_settings \
              WHERE sourcefile LIKE '%postgresql.auto.conf' ORDER BY name",
            &[],
        )
        .await
        .map(|rows| rows.iter().map(|r| (r.get(0), r.get(1))).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_print_like_show() {
        let s = Setting {
            value: "16384".into(),
            unit: Some("8kB".into()),
            source: "default".into(),
        };
        assert_eq!(s.pretty(), "128MB");
        assert_eq!(s.bytes(), Some(128 << 20));
        let s = Setting {
            value: "65536".into(),
            unit: Some("kB".into()),
            source: "default".into(),
        };
        assert_eq!(s.pretty(), "64MB");
        let s = Setting {
            value: "on".into(),
            unit: None,
            source: "default".into(),
        };
        assert_eq!(s.pretty(), "on");
    }
}
