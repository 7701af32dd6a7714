//! The primary's write load during a trial on a standby: UPDATEs of the tables the statements
//! read, at a steady rate, and a VACUUM of them every so often. Each UPDATE leaves a dead row
//! version; the VACUUM removes those no snapshot on the primary needs — including ones a
//! standby's query may still be reading, unless the standby's feedback holds them. That is
//! what makes a recovery conflict on the standby, and what feedback costs the primary.
//!
//! A batch takes rows from a random block onwards with a TID range scan (`ctid >= '(b,0)'`)
//! and sets their first column to itself: the values never change, only new row versions are
//! written. Tables other than plain ones (views, partitioned tables, catalogs) are not churned.

use std::time::{Duration, Instant};

use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

/// A table the churn updates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Churned {
    /// `schema.table`, quoted.
    pub name: String,
    /// Its first column that may be set to itself, quoted.
    pub column: String,
}

/// How often a batch is written.
const TICK: Duration = Duration::from_millis(100);
/// The most rows one batch updates (a churn far behind its rate catches up in steps).
const MAX_BATCH: u64 = 20_000;

/// The plain tables among `names` (as the statements name them, resolved on `client`'s
/// search path) and the names that are not churned.
pub(crate) async fn tables(
    client: &Client,
    names: &[String],
) -> Result<(Vec<Churned>, Vec<String>), tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT t.n, format('%I.%I', s.nspname, c.relname), \
               c.relkind = 'r' AND s.nspname NOT IN ('pg_catalog', 'information_schema'), \
               (SELECT quote_ident(a.attname) FROM pg_catalog.pg_attribute a \
                 WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
                   AND a.attgenerated = '' AND a.attidentity <> 'a' ORDER BY a.attnum LIMIT 1) \
             FROM unnest($1::text[]) AS t(n) \
             JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(t.n) \
             JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace",
            &[&names],
        )
        .await?;
    let mut out: Vec<Churned> = Vec::new();
    let mut skipped = Vec::new();
    for r in rows {
        let (given, name, plain, column): (String, String, bool, Option<String>) =
            (r.get(0), r.get(1), r.get(2), r.get(3));
        match column.filter(|_| plain) {
            Some(column) if !out.iter().any(|c| c.name == name) => {
                out.push(Churned { name, column })
            }
            Some(_) => {}
            None => skipped.push(given),
        }
    }
    Ok((out, skipped))
}

/// What the churn did during a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ChurnDone {
    pub rows: u64,
    pub vacuums: u32,
}

/// Rows due after `elapsed` at `rate` rows/s, less those written, at most one batch.
pub(crate) fn due(rate: u64, elapsed: Duration, written: u64) -> u64 {
    let want = (rate as f64 * elapsed.as_secs_f64()).floor() as u64;
    want.saturating_sub(written).min(MAX_BATCH)
}

/// Update up to `n` rows of `t` from a random block on (from the first block for what the
/// table's end did not have): the rows updated.
async fn batch(client: &Client, t: &Churned, n: u64) -> Result<u64, tokio_postgres::Error> {
    let pages: i64 = client
        .query_one(
            &format!(
                "SELECT (pg_catalog.pg_relation_size('{0}') / pg_catalog.current_setting('block_size')::int8)",
                t.name.replace('\'', "''")
            ),
            &[],
        )
        .await?
        .get(0);
    let start = rand::random::<u64>() % pages.max(1) as u64;
    let mut done = 0;
    for from in [start, 0] {
        let left = n - done;
        if left == 0 {
            break;
        }
        done += client
            .execute(
                &format!(
                    "UPDATE {t} SET {c} = {c} WHERE ctid = ANY (ARRAY(SELECT ctid FROM {t} WHERE ctid >= '({from},0)'::tid LIMIT {left}))",
                    t = t.name,
                    c = t.column
                ),
                &[],
            )
            .await?;
        if from == 0 {
            break;
        }
    }
    Ok(done)
}

/// VACUUM every churned table, its dead-tuple counts flushed first so the count VACUUM leaves
/// is what it could not remove.
async fn vacuum(
    client: &Client,
    tables: &[Churned],
    flush: bool,
) -> Result<(), tokio_postgres::Error> {
    if flush {
        client
            .batch_execute("SELECT pg_catalog.pg_stat_force_next_flush()")
            .await?;
    }
    for t in tables {
        client.batch_execute(&format!("VACUUM {}", t.name)).await?;
    }
    Ok(())
}

/// Churn `tables` at `rate` rows/s (and VACUUM them every `vacuum_every`) until `stop`; then
/// one last VACUUM when vacuuming. `flush`: the server has `pg_stat_force_next_flush`
/// (PostgreSQL 15+).
pub(crate) async fn run(
    client: &Client,
    tables: &[Churned],
    rate: u64,
    vacuum_every: Option<Duration>,
    flush: bool,
    stop: CancellationToken,
) -> Result<ChurnDone, tokio_postgres::Error> {
    let started = Instant::now();
    let mut done = ChurnDone::default();
    let mut last_vacuum = Instant::now();
    let mut next = 0usize;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let n = due(rate, started.elapsed(), done.rows);
        if n > 0 && !tables.is_empty() {
            let t = &tables[next % tables.len()];
            next += 1;
            done.rows += batch(client, t, n).await?;
        }
        if vacuum_every.is_some_and(|every| last_vacuum.elapsed() >= every) {
            vacuum(client, tables, flush).await?;
            done.vacuums += 1;
            last_vacuum = Instant::now();
        }
    }
    if vacuum_every.is_some() {
        vacuum(client, tables, flush).await?;
        done.vacuums += 1;
    } else if flush {
        client
            .batch_execute("SELECT pg_catalog.pg_stat_force_next_flush()")
            .await?;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_sets_each_batch() {
        assert_eq!(due(1000, Duration::from_millis(100), 0), 100);
        assert_eq!(due(1000, Duration::from_millis(250), 200), 50);
        // Ahead of the rate (a batch that found more): nothing until the rate catches up.
        assert_eq!(due(1000, Duration::from_millis(100), 150), 0);
        // Far behind: one batch at the most.
        assert_eq!(due(1_000_000, Duration::from_secs(10), 0), MAX_BATCH);
        assert_eq!(due(0, Duration::from_secs(10), 0), 0);
    }
}
