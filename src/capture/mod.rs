//! `pglab capture`: what production runs, turned into a workload pglab replays. The top
//! statements by total execution time come from `pg_stat_statements` (their calls become
//! weights, their times, rows and blocks the production baseline); the values of their `$n`
//! come from sessions seen running them in `pg_stat_activity` ([`activity`], lined up with
//! [`align`]), else from the statistics of the column each `$n` meets ([`params`],
//! [`colstats`]); a statement with a `$n` neither gives is left out with the reason. Without
//! `pg_stat_statements` the samples alone give the statements and weights. Capture only
//! reads: its session is `default_transaction_read_only`, every query a read-only
//! transaction. [`file`] writes the workload.

pub mod activity;
pub mod align;
pub mod colstats;
pub mod file;
pub mod paging;
pub mod params;
pub mod pick;
pub mod session;
pub mod shape;
pub mod statements;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

pub use pick::Pick;
use statements::Baseline;

/// What to capture.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSpec {
    pub pick: Pick,
    /// How long to sample `pg_stat_activity` (zero: not at all).
    pub sample: Duration,
}

/// Where a statement's values came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// It has no `$n`.
    None,
    /// From sessions seen running it: how many executions lined up, and each one's value set
    /// in the order seen, repeats kept (so a replay that draws from them draws a value as
    /// often as production sent it; the first is the one the statement is written with).
    Activity { seen: usize, sets: Vec<String> },
    /// From column statistics: each `$n` with where its value came from, and value sets
    /// drawn as the columns' values are spread (see `colstats`; empty when every value is a
    /// fixed one: ranges, pages).
    Statistics {
        sources: Vec<(u32, String)>,
        sets: Vec<String>,
    },
}

/// One captured statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// Stable, from the fingerprint.
    pub name: String,
    pub normalized: String,
    /// The statement with its values (None: left out, see `left_out`).
    pub sql: Option<String>,
    pub values: Values,
    /// Why it is left out.
    pub left_out: Option<String>,
    pub write: bool,
    /// Production's figures (None: from samples alone).
    pub baseline: Option<Baseline>,
    /// Calls (or executions seen, without `pg_stat_statements`).
    pub weight: u64,
    /// Its share of the database's statement time (or of the executions seen).
    pub share: f64,
}

/// A capture: the statements and what they cover.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    pub database: String,
    pub server_version: String,
    /// False when `pg_stat_statements` was not available (then `note` says how to enable it).
    pub from_statements: bool,
    pub note: Option<String>,
    pub statements: Vec<Captured>,
    /// Share of the database's statement time the chosen statements cover (or of the
    /// executions seen).
    pub coverage: f64,
    /// Statements passed over: not replayable on their own (`BEGIN`, `SET`, DDL…).
    pub other: usize,
    /// Statements whose text this role may not see.
    pub hidden: usize,
    pub samples: u64,
    pub executions_seen: usize,
    pub sample_seconds: f64,
    /// Queries capture sent to the source, and its time there.
    pub queries: u64,
    pub seconds: f64,
}

/// The session: read-only, named, and what the server is.
async fn prepare(client: &Client) -> Result<(i32, String, String), String> {
    client
        .batch_execute(
            "SET default_transaction_read_only = on; SET application_name = 'pglab capture'; \
             SET statement_timeout = '30s'",
        )
        .await
        .map_err(|e| format!("setting the session up: {e}"))?;
    let r = client
        .query_one(
            "/* pglab capture */ SELECT current_setting('server_version_num')::int, \
             current_setting('server_version'), current_database()::text",
            &[],
        )
        .await
        .map_err(|e| format!("reading the server version: {e}"))?;
    Ok((r.get(0), r.get(1), r.get(2)))
}

/// Capture from `client` (a session on the source, which is only read).
pub async fn capture(
    client: &Client,
    spec: &CaptureSpec,
    stop: &CancellationToken,
    progress: &mut (dyn FnMut(usize, Duration) + Send),
) -> Result<Capture, String> {
    let started = Instant::now();
    let (version, server_version, database) = prepare(client).await?;
    // The session's setup, the version, the extension's schema and its statements (read
    // after the sample).
    let mut queries = 5;
    let mut cap = Capture {
        database,
        server_version,
        ..Capture::default()
    };
    let sampled = if spec.sample.is_zero() {
        activity::Sampled::default()
    } else {
        activity::sample(client, version, spec.sample, stop, progress).await?
    };
    queries += sampled.samples;
    // Read after the sample, so production's figures cover it too; without the extension a
    // sample is all there is to go on.
    let stats = statements::read(client, version)
        .await
        .map(Some)
        .or_else(|e| e.map_or(Ok(None), Err))?;
    if stats.is_none() && spec.sample.is_zero() {
        return Err(format!(
            "{}; or give --sample 60s to capture from pg_stat_activity samples alone",
            statements::ENABLE
        ));
    }
    (cap.samples, cap.executions_seen, cap.sample_seconds) =
        (sampled.samples, sampled.executions.len(), sampled.seconds);
    let chosen = match &stats {
        Some(s) => {
            cap.from_statements = true;
            cap.hidden = s.hidden;
            pick::from_statements(s, spec.pick)
        }
        None => {
            cap.note = Some(format!(
                "{}; this capture comes from pg_stat_activity samples alone (weights are the executions seen, no production timings)",
                statements::ENABLE
            ));
            pick::from_activity(&sampled, spec.pick)
        }
    };
    cap.other = chosen.other;
    cap.coverage = chosen.coverage;
    let by_id = group(&sampled);
    let mut cache = colstats::StatsCache::default();
    for c in chosen.statements {
        // By query id; by fingerprint where the server computes none (the texts must still
        // line up token by token, see `align`).
        let seen = c
            .baseline
            .as_ref()
            .and_then(|b| by_id.get(&Key::Id(b.query_id)))
            .or_else(|| by_id.get(&Key::Fingerprint(c.name.clone())));
        cap.statements
            .push(fill(client, c, seen.map_or(&[][..], Vec::as_slice), &mut cache).await?);
    }
    cap.queries = queries + cache.queries;
    cap.seconds = started.elapsed().as_secs_f64();
    Ok(cap)
}

/// How executions seen are matched with statements: by `query_id`, or by the statement's name
/// (its fingerprint) when the server computes no query ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Id(i64),
    Fingerprint(String),
}

fn group(sampled: &activity::Sampled) -> BTreeMap<Key, Vec<String>> {
    let mut out: BTreeMap<Key, Vec<String>> = BTreeMap::new();
    for e in &sampled.executions {
        if let Some(id) = e.query_id.filter(|id| *id != 0) {
            out.entry(Key::Id(id)).or_default().push(e.query.clone());
        }
        if let Some(s) = shape::of(&e.query) {
            out.entry(Key::Fingerprint(s.name))
                .or_default()
                .push(e.query.clone());
        }
    }
    out
}

/// Give a chosen statement its values: from the executions seen, else the statistics, else
/// it is left out with the reason.
async fn fill(
    client: &Client,
    mut c: Captured,
    seen: &[String],
    cache: &mut colstats::StatsCache,
) -> Result<Captured, String> {
    let wanted = align::params(&c.normalized);
    if wanted.is_empty() {
        c.sql = Some(c.normalized.clone());
        return Ok(c);
    }
    let sets: Vec<BTreeMap<u32, String>> = seen
        .iter()
        .filter_map(|literal| align::values(literal, &c.normalized))
        .collect();
    let lined_up = sets.len();
    if let Some(first) = sets.first() {
        c.sql = align::fill(&c.normalized, first);
        c.values = Values::Activity {
            seen: lined_up,
            sets: sets.iter().map(crate::sql::normalized::set_text).collect(),
        };
        return Ok(c);
    }
    let targets = params::targets(&c.normalized);
    let pages = paging::paging(&c.normalized);
    let rows_per_call = c
        .baseline
        .as_ref()
        .filter(|b| b.calls > 0.0)
        .map(|b| b.rows / b.calls);
    let mut values = BTreeMap::new();
    let mut sources = Vec::new();
    let mut spreads: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    // Seeded by the statement: the same capture draws the same sets.
    let mut rng = ChaCha8Rng::seed_from_u64(seed_of(&c.normalized));
    for n in &wanted {
        let drawn = match (targets.get(n), pages.get(n)) {
            (Some(t), _) => cache.draw(client, t, &mut rng).await?.map(|d| {
                if !d.spread.is_empty() {
                    spreads.insert(*n, d.spread);
                }
                (d.literal, d.source)
            }).ok_or_else(|| {
                format!(
                    "meets column {} but no statistics this role may read give a value for it (ANALYZE, or SELECT on the table)",
                    t.column
                )
            }),
            (None, Some(p)) => paging::value(*p, rows_per_call),
            (None, None) => Err("meets no column whose statistics could give a value".into()),
        };
        match drawn {
            Ok((literal, source)) => {
                values.insert(*n, literal);
                sources.push((*n, source));
            }
            Err(why) => {
                c.left_out = Some(format!(
                    "${n} {why}, and no session was seen running the statement during the sample (a longer --sample may see one)"
                ));
                return Ok(c);
            }
        }
    }
    c.sql = align::fill(&c.normalized, &values);
    c.values = Values::Statistics {
        sources,
        sets: drawn_sets(&values, &spreads),
    };
    Ok(c)
}

/// Value sets from the spreads of the equalities (the fixed values of the others in each);
/// none when no parameter has a spread.
fn drawn_sets(fixed: &BTreeMap<u32, String>, spreads: &BTreeMap<u32, Vec<String>>) -> Vec<String> {
    let n = spreads.values().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            let mut set = fixed.clone();
            for (k, v) in spreads {
                set.insert(*k, v[i].clone());
            }
            crate::sql::normalized::set_text(&set)
        })
        .collect()
}

/// A seed from a statement's text (FNV-1a): stable across runs and builds.
fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
