//! What a primary says about its standbys: one row of `pg_stat_replication` per walsender,
//! read-only (any server: pglab's sandbox, or one it did not start). The lags are the
//! server's own `write_lag`, `flush_lag` and `replay_lag` (the time between a commit's WAL
//! being flushed locally and the standby reporting it written, flushed, applied; NULL once a
//! standby is idle and has caught up) and the bytes between the primary's current WAL and
//! what the standby has replayed.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

/// One standby as its primary sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplicaLag {
    pub application_name: String,
    /// `streaming`, `catchup`, `startup`, `backup`, `stopping`.
    pub state: String,
    /// `async`, `sync`, `potential`, `quorum`.
    pub sync_state: String,
    pub write_lag_ms: Option<f64>,
    pub flush_lag_ms: Option<f64>,
    pub replay_lag_ms: Option<f64>,
    /// WAL bytes the standby has still to replay (None when the role may not see the LSNs).
    pub replay_behind_bytes: Option<i64>,
}

impl ReplicaLag {
    /// "pglab_standby_1 streaming (sync): write 0.3 ms, flush 0.4 ms, replay 0.5 ms, 0 B behind".
    pub fn line(&self) -> String {
        let ms = |v: Option<f64>| match v {
            Some(v) => format!("{v:.1} ms"),
            None => "– (caught up)".into(),
        };
        format!(
            "{} {} ({}): write {}, flush {}, replay {}{}",
            self.application_name,
            self.state,
            self.sync_state,
            ms(self.write_lag_ms),
            ms(self.flush_lag_ms),
            ms(self.replay_lag_ms),
            self.replay_behind_bytes
                .map(|b| format!(
                    ", {} behind",
                    crate::measure::units::format_bytes(b.max(0) as u64)
                ))
                .unwrap_or_default()
        )
    }
}

/// The primary's walsenders, by `application_name`. An Err is the server's sentence.
pub async fn read(client: &Client) -> Result<Vec<ReplicaLag>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT coalesce(application_name, ''), coalesce(state, ''), coalesce(sync_state, ''), \
             (extract(epoch FROM write_lag) * 1000)::float8, \
             (extract(epoch FROM flush_lag) * 1000)::float8, \
             (extract(epoch FROM replay_lag) * 1000)::float8, \
             CASE WHEN pg_is_in_recovery() OR replay_lsn IS NULL THEN NULL \
                  ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::int8 END \
             FROM pg_stat_replication ORDER BY application_name",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| ReplicaLag {
            application_name: r.get(0),
            state: r.get(1),
            sync_state: r.get(2),
            write_lag_ms: r.get(3),
            flush_lag_ms: r.get(4),
            replay_lag_ms: r.get(5),
            replay_behind_bytes: r.get(6),
        })
        .collect())
}

/// The primary's current WAL position (`pg_current_wal_lsn`), as text.
pub async fn current_lsn(client: &Client) -> Result<String, tokio_postgres::Error> {
    let r = client
        .query_one("SELECT pg_catalog.pg_current_wal_lsn()::text", &[])
        .await?;
    Ok(r.get(0))
}

/// Standby `name` as its primary sees it now: its walsender's state and whether it has
/// replayed up to `lsn` (None: not connected).
pub async fn standby_at(
    client: &Client,
    name: &str,
    lsn: &str,
) -> Result<Option<(String, bool)>, tokio_postgres::Error> {
    let r = client
        .query_opt(
            "SELECT coalesce(state, ''), coalesce(replay_lsn >= $2::text::pg_lsn, false) \
             FROM pg_catalog.pg_stat_replication WHERE application_name = $1 \
             ORDER BY state = 'streaming' DESC LIMIT 1",
            &[&name, &lsn],
        )
        .await?;
    Ok(r.map(|r| (r.get(0), r.get(1))))
}

/// The primary's clock now (`now()`, as text), to compare a walsender's start with.
pub async fn now(client: &Client) -> Result<String, tokio_postgres::Error> {
    let r = client
        .query_one("SELECT pg_catalog.clock_timestamp()::text", &[])
        .await?;
    Ok(r.get(0))
}

/// True when standby `name` streams on a connection that began after `since` (from [`now`]).
pub async fn streaming_since(
    client: &Client,
    name: &str,
    since: &str,
) -> Result<bool, tokio_postgres::Error> {
    let r = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_replication \
             WHERE application_name = $1 AND state = 'streaming' \
             AND backend_start > $2::text::timestamptz)",
            &[&name, &since],
        )
        .await?;
    Ok(r.get(0))
}

/// How far a hot standby is behind, as it says itself: WAL received but not yet replayed,
/// and how long ago the last transaction it replayed committed on the primary (on an idle
/// primary that grows without any lag).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StandbyLag {
    pub replay_behind_bytes: Option<i64>,
    pub last_replayed_s: Option<f64>,
}

impl StandbyLag {
    /// "replay 0 B behind · last replayed xact 2.1 s ago".
    pub fn words(&self) -> String {
        let bytes = self
            .replay_behind_bytes
            .map_or("an unknown amount".into(), |b| {
                crate::measure::units::format_bytes(b.max(0) as u64)
            });
        match self.last_replayed_s {
            Some(s) => format!(
                "replay {bytes} behind · last replayed xact {} ago",
                crate::measure::units::format_seconds(s.max(0.0))
            ),
            None => format!("replay {bytes} behind"),
        }
    }
}

/// A standby's own view of its lag (None on a primary or when it cannot be read).
pub async fn standby_lag(client: &Client) -> Option<StandbyLag> {
    let r = client
        .query_one(
            "SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_last_wal_receive_lsn(), pg_catalog.pg_last_wal_replay_lsn())::int8,
                    extract(epoch FROM now() - pg_catalog.pg_last_xact_replay_timestamp())::float8
              WHERE pg_catalog.pg_is_in_recovery()",
            &[],
        )
        .await
        .ok()?;
    Some(StandbyLag {
        replay_behind_bytes: r.get(0),
        last_replayed_s: r.get(1),
    })
}
