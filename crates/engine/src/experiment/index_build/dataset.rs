//! The table an index is built on: `(id KEY, name text)` with the keys in exactly the
//! requested physical order, generated on the client and sent with `COPY` (about 2.5× the
//! rate of a server-side `INSERT … SELECT … ORDER BY random()`), then `VACUUM (ANALYZE)` so
//! hint bits are set before the first build.
//!
//! A finished dataset carries a `pglab:dataset …` comment and is reused by later runs with the
//! same spec; an unfinished one carries the run's mark and is dropped with the run.

use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::SinkExt;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::report::DatasetInfo;
use super::spec::{IndexBuildSpec, KeyType, Order};
use crate::experiment::lab::distribute::{self, Distribution};
use crate::experiment::lab::event::Progress;
use crate::experiment::lab::{RunCtx, RunError};
use crate::sql::lab::MARK;
use crate::sql::quote::literal;

/// Rows per COPY chunk message (~512 kB of text for int4 keys).
const CHUNK_ROWS: usize = 32_768;

/// The table name for a dataset spec: stable, so a later run finds and reuses it.
pub(crate) fn table_name(spec: &IndexBuildSpec, order: Order) -> String {
    let o = match order {
        Order::Partial(p) => format!("partial{p}"),
        o => o.name(),
    };
    format!(
        "ib_{}_{}_{}_s{}{}",
        spec.key.as_str(),
        o,
        spec.rows,
        spec.seed,
        if spec.distribute { "_dist" } else { "" }
    )
}

/// The shards a distributed dataset gets: the spec's count, else the server's default.
fn shards(ctx: &RunCtx, spec: &IndexBuildSpec) -> Option<u32> {
    spec.distribute.then(|| {
        spec.shards
            .or_else(|| ctx.server.citus.as_ref().map(|c| c.shard_count))
            .unwrap_or(32)
    })
}

fn dataset_mark(spec: &IndexBuildSpec, order: Order, shards: Option<u32>) -> String {
    format!(
        "{MARK}dataset index-build key={} order={} rows={} seed={}{}",
        spec.key.as_str(),
        order.name(),
        spec.rows,
        spec.seed,
        shards
            .map(|n| format!(" distribute=id shards={n}"))
            .unwrap_or_default()
    )
}

/// The keys 1..=rows in the requested order. Random and partial orders are exact seeded
/// Fisher–Yates shuffles (a multiplicative-hash "random" order would be a constant stride).
pub(crate) fn keys(rows: u64, order: Order, seed: u64) -> Vec<u32> {
    let n = rows as u32;
    match order {
        // An existing table's rows are not generated (see `own_table`).
        Order::Sorted | Order::Table | Order::Copy(_) => (1..=n).collect(),
        Order::Reverse => (1..=n).rev().collect(),
        Order::Random => {
            let mut v: Vec<u32> = (1..=n).collect();
            v.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
            v
        }
        Order::Partial(p) => {
            let mut v: Vec<u32> = (1..=n).collect();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let k = (rows * p as u64 / 100) as usize;
            // Choose k distinct positions and permute the keys among them.
            let mut positions: Vec<usize> = (0..v.len()).collect();
            let (chosen, _) = positions.partial_shuffle(&mut rng, k);
            let mut chosen: Vec<usize> = chosen.to_vec();
            let mut vals: Vec<u32> = chosen.iter().map(|&i| v[i]).collect();
            vals.shuffle(&mut rng);
            chosen.sort_unstable();
            for (i, val) in chosen.into_iter().zip(vals) {
                v[i] = val;
            }
            v
        }
    }
}

fn sql_type(key: KeyType) -> &'static str {
    match key {
        KeyType::Int4 => "int4",
        KeyType::Int8 => "int8",
        KeyType::Text => "text",
        KeyType::Uuid => "uuid",
    }
}

/// Append one key in COPY text format, preserving order for every key type.
fn put_key(buf: &mut BytesMut, key: KeyType, k: u32) {
    use std::fmt::Write;
    let _ = match key {
        KeyType::Int4 => write!(buf, "{k}"),
        // Spread int8 keys beyond the int4 range while keeping their order.
        KeyType::Int8 => write!(buf, "{}", k as u64 * 4_294_967_311),
        // Zero-padded so the C collation orders them like the numbers.
        KeyType::Text => write!(buf, "k{k:010}"),
        // Big-endian key in the first bytes keeps uuid order = key order.
        KeyType::Uuid => write!(
            buf,
            "{:08x}-0000-4000-8000-{:012x}",
            k,
            (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xffff_ffff_ffff
        ),
    };
}

/// Mark a finished dataset: kept for reuse on pglab's sandbox (`mark`), the run's own
/// elsewhere (dropped at its end, found by `pglab clean` after a kill).
async fn mark_finished(
    ctx: &RunCtx,
    client: &tokio_postgres::Client,
    name: &str,
    mark: &str,
    foreign: bool,
) -> Result<(), RunError> {
    if foreign {
        return ctx
            .mark_run_table(client, name, "index-build dataset")
            .await;
    }
    client
        .batch_execute(&format!(
            "COMMENT ON TABLE {} IS {}",
            ctx.table(name),
            literal(mark)
        ))
        .await
        .map_err(|e| ctx.error(e))
}

/// Make sure the dataset for `order` exists: reuse a finished one, else generate it.
pub(crate) async fn ensure(
    ctx: &RunCtx,
    spec: &IndexBuildSpec,
    order: Order,
) -> Result<DatasetInfo, RunError> {
    let client = ctx.session().await?;
    // On a server pglab did not start a dataset is this run's (dropped at its end, found by
    // `pglab clean` after a kill): never kept, never reused, and named by the run, so two
    // runs on one such server never share (and drop) one table.
    let foreign = !ctx.on_pglab_server();
    let name = if foreign {
        format!(
            "{}_{}",
            table_name(spec, order),
            crate::sql::lab::plain_name(&ctx.run_id)
        )
    } else {
        table_name(spec, order)
    };
    let table = ctx.table(&name);
    let shards = shards(ctx, spec);
    let mark = dataset_mark(spec, order, shards);
    // Two runs asking for one dataset (two pglab on one server): the second waits for the
    // first to finish it, then reuses it, instead of dropping it half made or colliding on
    // its name. The lock is this session's: it goes when the session does.
    wait_for_dataset_lock(ctx, &client, &table).await?;
    let existing: Option<String> = client
        .query_opt(
            "SELECT obj_description(c.oid, 'pg_class') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relname = $2",
            &[&ctx.opts.schema, &name],
        )
        .await
        .map_err(|e| ctx.error(e))?
        .map(|r| r.get::<_, Option<String>>(0).unwrap_or_default());
    let mut generate_seconds = 0.0;
    let reused = !foreign && existing.as_deref() == Some(mark.as_str());
    if reused {
        ctx.note(format!(
            "reusing dataset {name} ({} rows, {})",
            spec.rows,
            order.name()
        ))
        .await;
    } else {
        if let Some(comment) = existing {
            if !comment.starts_with(MARK) {
                return Err(RunError::failed(format!(
                    "a table {name} exists in schema {} but is not pglab's: pglab will not touch it; rename it or use another --schema",
                    ctx.opts.schema
                )));
            }
            client
                .batch_execute(&format!("DROP TABLE {table}"))
                .await
                .map_err(|e| ctx.error(e))?;
        }
        let started = Instant::now();
        generate(ctx, &client, spec, order, &name, shards).await?;
        generate_seconds = started.elapsed().as_secs_f64();
        mark_finished(ctx, &client, &name, &mark, foreign).await?;
    }
    let row = client
        .query_one(
            "SELECT (SELECT correlation::float8 FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = 'id')",
            &[&ctx.opts.schema, &name],
        )
        .await
        .map_err(|e| ctx.error(e))?;
    let (heap_bytes, _) = distribute::sizes(&client, &table, shards.is_some())
        .await
        .map_err(|e| ctx.error(e))?;
    let distribution = match shards {
        Some(n) => Distribution {
            column: Some("id".into()),
            shards: n,
            nodes: distribute::nodes(&ctx.server),
        },
        None => Distribution::none(&ctx.server),
    };
    Ok(DatasetInfo {
        index: super::trial::run_index_name(&name, &ctx.run_id),
        table: name,
        order,
        rows: spec.rows,
        key_type: spec.key.as_str().into(),
        heap_bytes,
        // A distributed table's statistics live on the shards, not on the coordinator.
        correlation: row.get(0),
        reused,
        generate_seconds,
        distribution,
        schema: None,
        columns: Vec::new(),
    })
}

/// Take the advisory lock of the dataset `table` on `client`'s session, polling so a cancel
/// is heard while another run holds it.
async fn wait_for_dataset_lock(
    ctx: &RunCtx,
    client: &tokio_postgres::Client,
    table: &str,
) -> Result<(), RunError> {
    let key = format!("pglab dataset {table}");
    let mut said = false;
    loop {
        let got: bool = client
            .query_one("SELECT pg_try_advisory_lock(hashtext($1))", &[&key])
            .await
            .map_err(|e| ctx.error(e))?
            .get(0);
        if got {
            return Ok(());
        }
        if !said {
            ctx.emit
                .phase(
                    None,
                    format!("waiting for another run that is generating {table}"),
                )
                .await;
            said = true;
        }
        tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(RunError::Cancelled),
            _ = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
        }
    }
}

async fn generate(
    ctx: &RunCtx,
    client: &tokio_postgres::Client,
    spec: &IndexBuildSpec,
    order: Order,
    name: &str,
    shards: Option<u32>,
) -> Result<(), RunError> {
    let table = ctx.table(name);
    let phase = format!(
        "generating dataset: {} rows, {}",
        crate::measure::units::format_count(spec.rows as f64),
        order.name()
    );
    ctx.emit.phase(None, phase.clone()).await;
    // Marked as this run's until complete (in the same transaction as its creation): a
    // cancel, failure or kill drops it.
    let create = format!(
        "CREATE TABLE {table} (id {} NOT NULL, name text)",
        sql_type(spec.key)
    );
    ctx.create_marked(client, name, &create, "dataset being generated")
        .await?;
    if let Some(n) = shards {
        ctx.emit
            .phase(
                None,
                format!("create_distributed_table {name} by id, {n} shards"),
            )
            .await;
        distribute::distribute(ctx, client, &table, "id", Some(n)).await?;
    }
    let (rows, seed, key) = (spec.rows, spec.seed, spec.key);
    let keys = tokio::task::spawn_blocking(move || keys(rows, order, seed))
        .await
        .map_err(|e| RunError::failed(format!("generating keys: {e}")))?;
    let started = Instant::now();
    let copy = async {
        let sink = client
            .copy_in::<_, Bytes>(&format!("COPY {table} (id, name) FROM STDIN"))
            .await?;
        tokio::pin!(sink);
        let mut sent = 0usize;
        for chunk in keys.chunks(CHUNK_ROWS) {
            let mut buf = BytesMut::with_capacity(chunk.len() * 16);
            for &k in chunk {
                put_key(&mut buf, key, k);
                buf.put_slice(b"\thans\n");
            }
            sink.send(buf.freeze()).await?;
            sent += chunk.len();
            let el = started.elapsed().as_secs_f64();
            ctx.emit.progress(Progress {
                trial: None,
                phase: phase.clone(),
                fraction: Some(sent as f64 / keys.len().max(1) as f64),
                elapsed_s: el,
                rate: (el > 0.0).then(|| sent as f64 / el),
                rate_unit: "rows/s".into(),
            });
        }
        sink.finish().await
    };
    let mut n = ctx.cancellable(client, copy).await?;
    if shards.is_some() {
        // The rows must be in the shards, counted one by one through the coordinator.
        n = distribute::rows_in_shards(client, &table)
            .await
            .map_err(|e| ctx.error(e))?
            .max(0) as u64;
    }
    if n != spec.rows {
        return Err(RunError::failed(format!(
            "{name}: {n} rows loaded, expected {}",
            spec.rows
        )));
    }
    ctx.emit
        .phase(None, format!("VACUUM (ANALYZE) {name}"))
        .await;
    ctx.cancellable(
        client,
        client.batch_execute(&format!("VACUUM (ANALYZE) {table}")),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_exact_permutations() {
        for order in [
            Order::Sorted,
            Order::Reverse,
            Order::Random,
            Order::Partial(5),
        ] {
            let mut k = keys(10_000, order, 7);
            assert_eq!(k.len(), 10_000);
            let displaced = k
                .iter()
                .enumerate()
                .filter(|(i, v)| **v != *i as u32 + 1)
                .count();
            match order {
                Order::Sorted => assert_eq!(displaced, 0),
                Order::Partial(5) => assert!(displaced <= 500 && displaced > 400, "{displaced}"),
                _ => assert!(displaced > 9_000),
            }
            k.sort_unstable();
            assert!(k.iter().enumerate().all(|(i, v)| *v == i as u32 + 1));
        }
        assert_eq!(keys(1000, Order::Random, 1), keys(1000, Order::Random, 1));
        assert_ne!(keys(1000, Order::Random, 1), keys(1000, Order::Random, 2));
    }
}
