//! Values for a `$n` no session was seen running, from the statistics the server keeps on the
//! column it meets (`pg_stats`, which shows a table's columns to roles that may read them):
//! the most common value for an equality, a histogram bound for a range (the 10th
//! percentile below which `col < $n` reads about a tenth of the rows, the 90th for `>`, the
//! 45th and 55th for the two ends of `BETWEEN`). Values are written as quoted literals, which
//! the server reads as the column's own type.
//!
//! An equality also gets [`SETS`] values drawn as the column's values are spread: a most
//! common value as often as its frequency says, else a histogram bound (the bounds cut the
//! other rows into equal shares, so each is as likely), from a generator seeded by the
//! statement, so the same capture writes the same sets. A replay runs them in turn rather than
//! one value every time. A range keeps its one percentile: its width is what its cost follows.

use std::collections::HashMap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio_postgres::Client;

use super::params::{Target, Use};

/// A column's statistics, as `pg_stats` gives them (text).
#[derive(Debug, Clone, Default)]
pub(crate) struct ColumnStats {
    /// `schema.table.column`.
    pub column: String,
    pub most_common: Vec<String>,
    /// The share of the rows each most common value holds.
    pub common_freqs: Vec<f64>,
    pub histogram: Vec<String>,
}

/// Values drawn per equality parameter from its column's statistics.
pub(crate) const SETS: usize = 50;

/// A value drawn from the statistics and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The value as a SQL literal.
    pub literal: String,
    /// `accounts.aid: most common value`.
    pub source: String,
    /// [`SETS`] values spread as the column's are (equalities only; empty otherwise).
    pub spread: Vec<String>,
}

/// A SQL string literal of `v`.
pub fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

impl ColumnStats {
    /// [`SETS`] values as the column's are spread: a most common value with its frequency,
    /// else a histogram bound, each as likely.
    fn spread(&self, rng: &mut ChaCha8Rng) -> Vec<String> {
        let common: f64 = self.common_freqs.iter().sum();
        (0..SETS)
            .filter_map(|_| self.one(rng, common).map(|v| quote(v)))
            .collect()
    }

    /// One value: a most common one with the share of rows it holds (`common`: theirs
    /// together), else a histogram bound.
    fn one(&self, rng: &mut ChaCha8Rng, common: f64) -> Option<&String> {
        let h = &self.histogram;
        let u = rng.random::<f64>();
        if h.is_empty() || u < common {
            let mut at = if h.is_empty() { u * common } else { u };
            for (v, f) in self.most_common.iter().zip(&self.common_freqs) {
                if at < *f {
                    return Some(v);
                }
                at -= f;
            }
            return self.most_common.last();
        }
        h.get(rng.random_range(0..h.len()))
    }

    /// The value suited to `how`, if the statistics have one (an equality's with its
    /// spread, drawn from `rng`).
    pub fn draw(&self, how: Use, rng: &mut ChaCha8Rng) -> Option<Drawn> {
        let pick = |p: f64, what: &str| {
            let h = &self.histogram;
            (!h.is_empty()).then(|| {
                let i = ((h.len() - 1) as f64 * p).round() as usize;
                Drawn {
                    literal: quote(&h[i]),
                    source: format!("{}: {what}", self.column),
                    spread: Vec::new(),
                }
            })
        };
        let common = || {
            self.most_common.first().map(|v| Drawn {
                literal: quote(v),
                source: format!("{}: most common value", self.column),
                spread: Vec::new(),
            })
        };
        match how {
            Use::Equal => common()
                .or_else(|| pick(0.5, "histogram median"))
                .map(|d| Drawn {
                    spread: self.spread(rng),
                    ..d
                }),
            Use::Below => pick(0.1, "histogram 10th percentile").or_else(common),
            Use::Above => pick(0.9, "histogram 90th percentile").or_else(common),
            Use::From => pick(0.45, "histogram 45th percentile").or_else(common),
            Use::To => pick(0.55, "histogram 55th percentile").or_else(common),
        }
    }
}

/// The statistics of columns, read once each.
#[derive(Default)]
pub(crate) struct StatsCache {
    seen: HashMap<(String, String, String), Option<ColumnStats>>,
    /// Queries sent (capture's own cost on the source).
    pub queries: u64,
}

const STATS_SQL: &str = "/* pglab capture */ SELECT schemaname::text, tablename::text, \
     coalesce(most_common_vals::text::text[], '{}'), coalesce(histogram_bounds::text::text[], '{}'), \
     coalesce(most_common_freqs::float8[], '{}') \
     FROM pg_stats WHERE tablename = $1 AND attname = $2 AND ($3 = '' OR schemaname = $3) \
     ORDER BY array_position(current_schemas(false), schemaname) NULLS LAST, inherited LIMIT 1";

impl StatsCache {
    async fn column(
        &mut self,
        client: &Client,
        schema: &str,
        table: &str,
        column: &str,
    ) -> Result<Option<ColumnStats>, String> {
        let key = (schema.to_string(), table.to_string(), column.to_string());
        if let Some(s) = self.seen.get(&key) {
            return Ok(s.clone());
        }
        self.queries += 1;
        let row = client
            .query_opt(STATS_SQL, &[&table, &column, &schema])
            .await
            .map_err(|e| format!("reading pg_stats: {e}"))?;
        let stats = row.map(|r| ColumnStats {
            column: format!(
                "{}.{}.{column}",
                r.get::<_, String>(0),
                r.get::<_, String>(1)
            ),
            most_common: r
                .get::<_, Vec<Option<String>>>(2)
                .into_iter()
                .flatten()
                .collect(),
            histogram: r
                .get::<_, Vec<Option<String>>>(3)
                .into_iter()
                .flatten()
                .collect(),
            common_freqs: r.get(4),
        });
        self.seen.insert(key, stats.clone());
        Ok(stats)
    }

    /// A value for a parameter that meets `target`: from the first of its candidate tables
    /// whose column has statistics.
    pub async fn draw(
        &mut self,
        client: &Client,
        target: &Target,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Drawn>, String> {
        for t in &target.tables {
            if let Some(s) = self
                .column(client, &t.schema, &t.name, &target.column)
                .await?
                && let Some(d) = s.draw(target.how, rng)
            {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn equality_takes_the_most_common_value_and_ranges_a_bound() {
        let rng = &mut ChaCha8Rng::seed_from_u64(1);
        let s = ColumnStats {
            column: "public.t.a".into(),
            most_common: vec!["O'Neil".into(), "b".into()],
            common_freqs: vec![0.2, 0.1],
            histogram: (0..=10).map(|i| (i * 10).to_string()).collect(),
        };
        assert_eq!(s.draw(Use::Equal, rng).unwrap().literal, "'O''Neil'");
        assert_eq!(s.draw(Use::Below, rng).unwrap().literal, "'10'");
        assert_eq!(s.draw(Use::Above, rng).unwrap().literal, "'90'");
        let to = s.draw(Use::To, rng).unwrap();
        assert_eq!(to.literal, "'60'");
        assert_eq!(to.source, "public.t.a: histogram 55th percentile");
        assert!(to.spread.is_empty(), "a range keeps its one percentile");
        let unique = ColumnStats {
            histogram: vec!["1".into(), "5".into(), "9".into()],
            ..ColumnStats::default()
        };
        assert_eq!(unique.draw(Use::Equal, rng).unwrap().literal, "'5'");
        assert!(ColumnStats::default().draw(Use::Equal, rng).is_none());
    }

    #[test]
    fn an_equality_spreads_as_the_column_does() {
        // Most common values hold 20 % and 10 % of the rows; the histogram the other 70 %.
        let s = ColumnStats {
            column: "public.t.a".into(),
            most_common: vec!["x".into(), "y".into()],
            common_freqs: vec![0.2, 0.1],
            histogram: (0..=10).map(|i| (i * 10).to_string()).collect(),
        };
        let (mut x, mut y, mut bounds, mut n) = (0, 0, 0, 0);
        for seed in 0..40 {
            let d = s
                .draw(Use::Equal, &mut ChaCha8Rng::seed_from_u64(seed))
                .unwrap();
            assert_eq!(d.spread.len(), SETS);
            for v in &d.spread {
                n += 1;
                match v.as_str() {
                    "'x'" => x += 1,
                    "'y'" => y += 1,
                    _ => bounds += 1,
                }
            }
        }
        let share = |k: i32| k as f64 / n as f64;
        assert!((share(x) - 0.2).abs() < 0.03, "x {}", share(x));
        assert!((share(y) - 0.1).abs() < 0.03, "y {}", share(y));
        assert!(
            (share(bounds) - 0.7).abs() < 0.03,
            "bounds {}",
            share(bounds)
        );
        // The same seed draws the same values.
        let again = |seed| {
            s.draw(Use::Equal, &mut ChaCha8Rng::seed_from_u64(seed))
                .unwrap()
        };
        assert_eq!(again(7).spread, again(7).spread);
        // Without a histogram, only the most common values, by their frequencies.
        let only = ColumnStats {
            histogram: Vec::new(),
            ..s.clone()
        };
        let d = only
            .draw(Use::Equal, &mut ChaCha8Rng::seed_from_u64(3))
            .unwrap();
        assert!(d.spread.iter().all(|v| v == "'x'" || v == "'y'"));
    }
}
