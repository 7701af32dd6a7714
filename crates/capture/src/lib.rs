//! `pglab capture`: what production runs, turned into a workload pglab replays. The top
//! statements by total execution time come from `pg_stat_statements` (their calls become
//! weights, their times, rows and blocks the production baseline); the values of their `$n`
//! come from sessions seen running them in `pg_stat_activity` ([`activity`], lined up with
//! [`align`]), else from the statistics of the column each `$n` meets ([`params`],
//! [`colstats`]); a statement with a `$n` neither gives is left out with the reason. Without
//! `pg_stat_statements` the samples alone give the statements and weights. Capture only
//! reads: its session is `default_transaction_read_only`, every query a read-only
//! transaction. [`file`] writes the workload.

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as capture;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_paths as paths;
#[allow(unused_imports)]
use pglab_sql as sql;

pub mod activity;
pub mod align;
pub mod colstats;
pub mod error;
pub mod file;
pub mod file_window;
pub mod own;
pub mod paging;
pub mod params;
pub mod pick;
pub mod reads;
pub mod session;
pub mod shape;
pub mod statements;
pub mod verify;
mod volatile;
pub mod window;

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
    /// How long to sample `pg_stat_activity` (zero: not at all). The figures are the
    /// difference of two reads of `pg_stat_statements` around it.
    pub sample: Duration,
    /// The totals since the last reset instead of the window (`--since-reset`; also what a
    /// zero sample gives: it has no window).
    pub since_reset: bool,
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
    /// Statements whose text this role may not see, and their share of the statement time.
    pub hidden: usize,
    pub hidden_share: f64,
    /// The role that read (named in the grant that shows hidden statements).
    pub role: String,
    /// pglab's own statements and the DBA's administration and monitoring calls, left out.
    pub own: statements::LeftOut,
    pub monitoring: statements::LeftOut,
    /// Statements whose counters went back inside the window (reset or evicted).
    pub went_back: usize,
    /// What the figures stand for: the window (or the totals since the reset).
    pub window: Option<window::Window>,
    /// Every application statement of the window, most time first (for `pglab verify`).
    pub all: Vec<Baseline>,
    /// The window's own cost on the source: its reads of `pg_stat_statements`,
    /// `pg_stat_database` and `pg_settings` (queries, seconds at the client), the sample apart.
    pub window_queries: u64,
    pub window_seconds: f64,
    pub samples: u64,
    pub executions_seen: usize,
    pub sample_seconds: f64,
    /// Queries capture sent to the source, and its time there.
    pub queries: u64,
    pub seconds: f64,
}

/// The session: read-only, named, and what the server is.
async fn prepare(client: &Client) -> Result<(i32, String, String, String), String> {
    client
        .batch_execute(
            "/* pglab capture */ SET default_transaction_read_only = on; \
             /* pglab capture */ SET application_name = 'pglab capture'; \
             /* pglab capture */ SET statement_timeout = '30s'",
        )
        .await
        .map_err(|e| format!("setting the session up: {e}"))?;
    let r = client
        .query_one(
            "/* pglab capture */ SELECT current_setting('server_version_num')::int, \
             current_setting('server_version'), current_database()::text, current_user::text",
            &[],
        )
        .await
        .map_err(|e| format!("reading the server version: {e}"))?;
    Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
}

/// Capture from `client` (a session on the source, which is only read).
pub async fn capture(
    client: &Client,
    spec: &CaptureSpec,
    stop: &CancellationToken,
    progress: &mut (dyn FnMut(usize, Duration) + Send),
) -> Result<Capture, String> {
    let started = Instant::now();
    let (version, server_version, database, role) = prepare(client).await?;
    // The session's setup, the version, the extension's schema.
    let mut queries = 3;
    let mut cap = Capture {
        database,
        server_version,
        role,
        ..Capture::default()
    };
    let schema = match statements::available(client, version).await {
        Ok(s) => Some(s),
        Err(None) => None,
        Err(Some(e)) => return Err(e.to_string()),
    };
    let windowed = !spec.since_reset && !spec.sample.is_zero();
    let before = match (&schema, windowed) {
        (Some(schema), true) => {
            let t = Instant::now();
            let read = read_at(client, schema, version).await?;
            cap.window_seconds += t.elapsed().as_secs_f64();
            cap.window_queries += 3;
            Some(read)
        }
        _ => None,
    };
    let sampled = if spec.sample.is_zero() {
        activity::Sampled::default()
    } else {
        activity::sample(client, version, spec.sample, stop, progress).await?
    };
    queries += sampled.samples;
    let stats = match &schema {
        Some(schema) => {
            let t = Instant::now();
            let after = read_at(client, schema, version).await?;
            let stats = figures(client, &mut cap, before, after).await?;
            cap.window_seconds += t.elapsed().as_secs_f64();
            cap.window_queries += 4;
            Some(stats)
        }
        None => None,
    };
    if stats.is_none() && spec.sample.is_zero() {
        return Err(format!(
            "{}; or give --sample 60s to capture from pg_stat_activity samples alone",
            statements::ENABLE
        ));
    }
    (cap.samples, cap.executions_seen, cap.sample_seconds) =
        (sampled.samples, sampled.executions.len(), sampled.seconds);
    let cache = choose_and_fill(client, &mut cap, spec.pick, stats.as_ref(), &sampled).await?;
    cap.queries = queries + cap.window_queries + cache.queries;
    cap.seconds = started.elapsed().as_secs_f64();
    Ok(cap)
}

/// Choose the statements (from the window's figures, else the samples) and give each its
/// values; the column statistics read on the way.
async fn choose_and_fill(
    client: &Client,
    cap: &mut Capture,
    pick: Pick,
    stats: Option<&statements::Statements>,
    sampled: &activity::Sampled,
) -> Result<colstats::StatsCache, String> {
    let chosen = match stats {
        Some(s) => {
            cap.from_statements = true;
            pick::from_statements(s, pick)
        }
        None => {
            cap.note = Some(format!(
                "{}; this capture comes from pg_stat_activity samples alone (weights are the executions seen, no production timings)",
                statements::ENABLE
            ));
            pick::from_activity(sampled, pick)
        }
    };
    cap.other = chosen.other;
    cap.coverage = chosen.coverage;
    let by_id = group(sampled);
    let mut cache = colstats::StatsCache::default();
    let mut functions = crate::sql::volatile::Lookup::default();
    for c in chosen.statements {
        // By query id; by fingerprint where the server computes none (the texts must still
        // line up token by token, see `align`).
        let seen = c
            .baseline
            .as_ref()
            .and_then(|b| by_id.get(&Key::Id(b.query_id)))
            .or_else(|| by_id.get(&Key::Fingerprint(c.name.clone())));
        let mut filled = fill(client, c, seen.map_or(&[][..], Vec::as_slice), &mut cache).await?;
        volatile::leave_out(client, &mut filled, &mut functions).await;
        cap.statements.push(filled);
    }
    Ok(cache)
}

/// One read of `pg_stat_statements` with the server's context at that moment.
async fn read_at(
    client: &Client,
    schema: &str,
    version: i32,
) -> Result<(reads::Read, window::Context), String> {
    let read = reads::read(client, schema, version)
        .await
        .map_err(|e| e.map_or_else(|| statements::ENABLE.to_string(), |e| e.to_string()))?;
    let ctx = window::context(client).await.map_err(|e| e.to_string())?;
    Ok((read, ctx))
}

/// The statements' figures: the window between the two reads (or, with none before, the
/// totals since the reset), recorded in `cap` with what was hidden and left out.
async fn figures(
    client: &Client,
    cap: &mut Capture,
    before: Option<(reads::Read, window::Context)>,
    (r1, c1): (reads::Read, window::Context),
) -> Result<statements::Statements, String> {
    let settings = window::settings(client).await.map_err(|e| e.to_string())?;
    let (read, w) = match before {
        Some((r0, c0)) => {
            let w = window::between((&r0, &c0), (&r1, &c1), settings).map_err(|e| e.to_string())?;
            let (d, went_back) = window::difference(&r0, &r1);
            cap.went_back = went_back;
            (d, w)
        }
        None => {
            let w = window::since_reset(&r1, &c1, settings);
            (r1, w)
        }
    };
    let stats = statements::Statements::from_read(&read);
    cap.window = Some(w);
    cap.hidden = stats.hidden;
    cap.hidden_share = stats.hidden_share();
    cap.own = stats.own.clone();
    cap.monitoring = stats.monitoring.clone();
    cap.all = stats
        .rows
        .iter()
        .filter(|b| compared(&b.query))
        .take(pick::MAX_STATEMENTS)
        .cloned()
        .collect();
    Ok(stats)
}

/// Whether `verify` compares a statement: queries, writes and the transaction ends (their
/// time is the commit's); not settings, DDL or maintenance, which are no part of the load.
fn compared(query: &str) -> bool {
    match shape::of(query) {
        Some(s) if s.kind != shape::Kind::Other => true,
        Some(s) if s.statement == "TransactionStmt" => {
            let w = crate::sql::tree::leading_words(query).to_ascii_uppercase();
            w.starts_with("COMMIT") || w.starts_with("END")
        }
        _ => false,
    }
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
