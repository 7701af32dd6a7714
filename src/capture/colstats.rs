//! Values for a `$n` no session was seen running, from the statistics the server keeps on the
//! column it meets (`pg_stats`, which shows a table's columns to roles that may read them):
//! the most common value for an equality, a histogram bound for a range (the 10th
//! percentile below which `col < $n` reads about a tenth of the rows, the 90th for `>`, the
//! 45th and 55th for the two ends of `BETWEEN`). Values are written as quoted literals, which
//! the server reads as the column's own type.

use std::collections::HashMap;

use tokio_postgres::Client;

use super::params::{Target, Use};

/// A column's statistics, as `pg_stats` gives them (text).
#[derive(Debug, Clone, Default)]
pub struct ColumnStats {
    /// `schema.table.column`.
    pub column: String,
    pub most_common: Vec<String>,
    pub histogram: Vec<String>,
}

/// A value drawn from the statistics and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The value as a SQL literal.
    pub literal: String,
    /// `accounts.aid: most common value`.
    pub source: String,
}

/// A SQL string literal of `v`.
pub fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

impl ColumnStats {
    /// The value suited to `how`, if the statistics have one.
    pub fn draw(&self, how: Use) -> Option<Drawn> {
        let pick = |p: f64, what: &str| {
            let h = &self.histogram;
            (!h.is_empty()).then(|| {
                let i = ((h.len() - 1) as f64 * p).round() as usize;
                Drawn {
                    literal: quote(&h[i]),
                    source: format!("{}: {what}", self.column),
                }
            })
        };
        let common = || {
            self.most_common.first().map(|v| Drawn {
                literal: quote(v),
                source: format!("{}: most common value", self.column),
            })
        };
        match how {
            Use::Equal => common().or_else(|| pick(0.5, "histogram median")),
            Use::Below => pick(0.1, "histogram 10th percentile").or_else(common),
            Use::Above => pick(0.9, "histogram 90th percentile").or_else(common),
            Use::From => pick(0.45, "histogram 45th percentile").or_else(common),
            Use::To => pick(0.55, "histogram 55th percentile").or_else(common),
        }
    }
}

/// The statistics of columns, read once each.
#[derive(Default)]
pub struct StatsCache {
    seen: HashMap<(String, String, String), Option<ColumnStats>>,
    /// Queries sent (capture's own cost on the source).
    pub queries: u64,
}

const STATS_SQL: &str = "/* pglab capture */ SELECT schemaname::text, tablename::text, \
     coalesce(most_common_vals::text::text[], '{}'), coalesce(histogram_bounds::text::text[], '{}') \
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
    ) -> Result<Option<Drawn>, String> {
        for t in &target.tables {
            if let Some(s) = self
                .column(client, &t.schema, &t.name, &target.column)
                .await?
                && let Some(d) = s.draw(target.how)
            {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_takes_the_most_common_value_and_ranges_a_bound() {
        let s = ColumnStats {
            column: "public.t.a".into(),
            most_common: vec!["O'Neil".into(), "b".into()],
            histogram: (0..=10).map(|i| (i * 10).to_string()).collect(),
        };
        assert_eq!(s.draw(Use::Equal).unwrap().literal, "'O''Neil'");
        assert_eq!(s.draw(Use::Below).unwrap().literal, "'10'");
        assert_eq!(s.draw(Use::Above).unwrap().literal, "'90'");
        let to = s.draw(Use::To).unwrap();
        assert_eq!(to.literal, "'60'");
        assert_eq!(to.source, "public.t.a: histogram 55th percentile");
        let unique = ColumnStats {
            histogram: vec!["1".into(), "5".into(), "9".into()],
            ..ColumnStats::default()
        };
        assert_eq!(unique.draw(Use::Equal).unwrap().literal, "'5'");
        assert!(ColumnStats::default().draw(Use::Equal).is_none());
    }
}
