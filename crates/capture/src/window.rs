//! A window of what production ran: the difference of two reads of `pg_stat_statements`
//! around the sample, with the server's context at both ends (time, load from
//! `pg_stat_database`, settings that differ from their boot values). A reset of the
//! statistics between the two reads refuses the window. The cumulative view (`--since-reset`)
//! is the last read alone.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::error::CaptureError;
use super::reads::{Read, Sums};

/// The server's context at one read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    /// The server's clock, as text and as seconds since the epoch.
    pub at: String,
    pub epoch: f64,
    pub sessions: i64,
    pub xacts: f64,
    pub blks_hit: f64,
    pub blks_read: f64,
    pub temp_bytes: f64,
    pub db_reset: Option<String>,
}

/// A setting whose value differs from its boot value (or waits for a restart).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    pub name: String,
    pub value: String,
    pub boot: String,
    pub pending_restart: bool,
}

/// The load over a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Statement calls per second (the statements this role sees, hidden ones included).
    pub calls_per_s: f64,
    pub xacts_per_s: f64,
    /// Sessions on the database at the end of the window.
    pub sessions: i64,
    /// Shared blocks found in the buffer cache over those asked for (None: none asked).
    pub cache_hit: Option<f64>,
    pub temp_bytes: f64,
}

/// What a capture's figures stand for, written in its file's header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// True: the difference of two reads; false: the totals since the last reset.
    pub differenced: bool,
    pub start: String,
    pub end: String,
    pub seconds: f64,
    /// When `pg_stat_statements` was last reset (PostgreSQL 14+).
    pub stats_reset: Option<String>,
    /// Entries the extension evicted inside the window (`pg_stat_statements.max`).
    pub evicted: Option<i64>,
    pub load: Load,
    pub settings: Vec<Setting>,
}

/// Settings that come from the server's own configuration, not from a session.
const SETTINGS_SQL: &str = "/* pglab capture */ SELECT name, setting, coalesce(unit, ''), \
     coalesce(boot_val, ''), pending_restart FROM pg_settings \
     WHERE (setting IS DISTINCT FROM boot_val \
     AND source NOT IN ('default', 'override', 'client', 'session', 'environment variable')) \
     OR pending_restart ORDER BY name";

const CONTEXT_SQL: &str = "/* pglab capture */ SELECT clock_timestamp()::text, \
     extract(epoch FROM clock_timestamp())::float8, numbackends::int8, \
     (xact_commit + xact_rollback)::float8, blks_hit::float8, blks_read::float8, \
     temp_bytes::float8, stats_reset::text \
     FROM pg_stat_database WHERE datname = current_database()";

/// The server's context now.
pub async fn context(client: &Client) -> Result<Context, CaptureError> {
    let r = client
        .query_one(CONTEXT_SQL, &[])
        .await
        .map_err(|e| CaptureError::query("reading pg_stat_database", &e))?;
    Ok(Context {
        at: r.get(0),
        epoch: r.get(1),
        sessions: r.get(2),
        xacts: r.get(3),
        blks_hit: r.get(4),
        blks_read: r.get(5),
        temp_bytes: r.get(6),
        db_reset: r.get(7),
    })
}

/// `65536` `kB` → `65536kB`; `16384` `8kB` → `16384 × 8kB`.
fn with_unit(v: &str, unit: &str) -> String {
    match unit {
        "" => v.to_string(),
        u if u.starts_with(|c: char| c.is_ascii_digit()) => format!("{v} × {u}"),
        u => format!("{v}{u}"),
    }
}

/// The settings that differ from their boot values.
pub async fn settings(client: &Client) -> Result<Vec<Setting>, CaptureError> {
    let rows = client
        .query(SETTINGS_SQL, &[])
        .await
        .map_err(|e| CaptureError::query("reading pg_settings", &e))?;
    Ok(rows
        .iter()
        .map(|r| {
            let unit: String = r.get(2);
            Setting {
                name: r.get(0),
                value: with_unit(r.get(1), &unit),
                boot: with_unit(r.get(3), &unit),
                pending_restart: r.get(4),
            }
        })
        .collect())
}

/// The window between two reads, refused when the statistics were reset inside it.
pub fn between(
    (r0, c0): (&Read, &Context),
    (r1, c1): (&Read, &Context),
    settings: Vec<Setting>,
) -> Result<Window, CaptureError> {
    if r0.stats_reset != r1.stats_reset {
        return Err(CaptureError::ResetInside {
            before: r0.stats_reset.clone().unwrap_or_default(),
            after: r1.stats_reset.clone().unwrap_or_default(),
        });
    }
    let seconds = (c1.epoch - c0.epoch).max(1e-3);
    let calls =
        |r: &Read| r.entries.values().map(|e| e.sums.calls).sum::<f64>() + r.hidden_sums.calls;
    let (hit, read) = (c1.blks_hit - c0.blks_hit, c1.blks_read - c0.blks_read);
    Ok(Window {
        differenced: true,
        start: c0.at.clone(),
        end: c1.at.clone(),
        seconds,
        stats_reset: r1.stats_reset.clone(),
        evicted: r1.dealloc.zip(r0.dealloc).map(|(a, b)| a - b),
        load: Load {
            calls_per_s: (calls(r1) - calls(r0)).max(0.0) / seconds,
            xacts_per_s: (c1.xacts - c0.xacts).max(0.0) / seconds,
            sessions: c1.sessions,
            cache_hit: (hit + read > 0.0).then(|| hit / (hit + read)),
            temp_bytes: (c1.temp_bytes - c0.temp_bytes).max(0.0),
        },
        settings,
    })
}

/// The cumulative view: the last read's totals since the reset.
pub fn since_reset(r: &Read, c: &Context, settings: Vec<Setting>) -> Window {
    let hit_read = c.blks_hit + c.blks_read;
    Window {
        differenced: false,
        start: r.stats_reset.clone().unwrap_or_default(),
        end: c.at.clone(),
        seconds: 0.0,
        stats_reset: r.stats_reset.clone(),
        evicted: r.dealloc,
        load: Load {
            sessions: c.sessions,
            cache_hit: (hit_read > 0.0).then(|| c.blks_hit / hit_read),
            temp_bytes: c.temp_bytes,
            ..Load::default()
        },
        settings,
    }
}

/// Each statement's figures in the window: the later read minus the earlier (a statement
/// new in the window counts whole). Statements that did not run are dropped; one whose
/// counters went back (its entry was reset or evicted and made again) is counted in `.1`.
pub fn difference(before: &Read, after: &Read) -> (Read, usize) {
    let mut out = Read {
        hidden: after.hidden,
        hidden_sums: after.hidden_sums.minus(&before.hidden_sums),
        stats_reset: after.stats_reset.clone(),
        dealloc: after.dealloc,
        ..Read::default()
    };
    let mut went_back = 0;
    for (id, e) in &after.entries {
        let d = match before.entries.get(id) {
            Some(b) => e.sums.minus(&b.sums),
            None => e.sums,
        };
        if d.calls < 0.0 || d.total_ms < -1e-9 {
            went_back += 1;
            continue;
        }
        if d.calls > 0.0 {
            let mut e = e.clone();
            e.sums = d;
            out.entries.insert(*id, e);
        }
    }
    if out.hidden_sums.calls < 0.0 {
        out.hidden_sums = Sums::default();
    }
    (out, went_back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::reads::Entry;

    fn read(entries: &[(i64, f64, f64, f64)]) -> Read {
        let mut r = Read::default();
        for (id, calls, total, sq) in entries {
            r.entries.insert(
                *id,
                Entry {
                    query: format!("SELECT {id}"),
                    sums: Sums {
                        calls: *calls,
                        total_ms: *total,
                        sum_sq: *sq,
                        ..Sums::default()
                    },
                },
            );
        }
        r
    }

    #[test]
    fn the_window_is_the_difference_and_its_spread_comes_from_the_sums_of_squares() {
        // Before: 3 calls of 1 ms. In the window: calls of 2, 4 and 6 ms (mean 4, sd 2).
        let before = read(&[(1, 3.0, 3.0, 3.0), (2, 5.0, 5.0, 5.0)]);
        let after = read(&[
            (1, 6.0, 15.0, 3.0 + 4.0 + 16.0 + 36.0),
            (2, 5.0, 5.0, 5.0),
            (3, 1.0, 2.0, 4.0),
        ]);
        let (w, back) = difference(&before, &after);
        assert_eq!(back, 0);
        let (m, sd) = w.entries[&1].sums.mean_sd();
        assert!(
            (m - 4.0).abs() < 1e-9 && (sd - 2.0).abs() < 1e-9,
            "{m} {sd}"
        );
        assert!(!w.entries.contains_key(&2), "did not run in the window");
        assert_eq!(w.entries[&3].sums.calls, 1.0, "new in the window: whole");
        // A statement whose counters went back is not a window of anything.
        let (w, back) = difference(&after, &before);
        assert_eq!(back, 1);
        assert!(!w.entries.contains_key(&1));
    }

    #[test]
    fn a_reset_inside_the_window_refuses_it() {
        let r0 = Read {
            stats_reset: Some("2026-12-07 10:00:00+00".into()),
            ..Read::default()
        };
        let mut r1 = r0.clone();
        let c = Context::default();
        assert!(between((&r0, &c), (&r1, &c), vec![]).is_ok());
        r1.stats_reset = Some("2026-12-07 10:05:00+00".into());
        let e = between((&r0, &c), (&r1, &c), vec![]).unwrap_err();
        assert!(e.to_string().contains("reset inside the window"), "{e}");
    }
}
