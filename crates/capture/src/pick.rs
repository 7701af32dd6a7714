//! Which statements a capture keeps: the top N by total execution time, or as many as cover
//! a share of it (`--coverage 90%`), among those a replay can run on their own (queries and
//! writes; `BEGIN`, `SET`, DDL and the capture's own queries are passed over and counted).
//! Without `pg_stat_statements`, executions seen in the samples stand in for time.

use std::collections::BTreeMap;

use super::activity::Sampled;
use super::shape::{self, Kind};
use super::statements::Statements;
use super::{Captured, Values};

/// How many statements to keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pick {
    Top(usize),
    /// A share of the time, 0..1.
    Coverage(f64),
}

/// At most this many statements, whatever the coverage asked.
pub(crate) const MAX_STATEMENTS: usize = 200;

impl Pick {
    /// `--top N` / `--coverage P%` (one at most; neither: the top 20).
    pub fn parse(top: Option<usize>, coverage: Option<&str>) -> Result<Pick, String> {
        match (top, coverage) {
            (Some(_), Some(_)) => Err(
                "give --top N or --coverage P%, not both: one says how many statements to keep"
                    .into(),
            ),
            (Some(n), None) if n == 0 || n > MAX_STATEMENTS => {
                Err(format!("--top {n}: give 1..{MAX_STATEMENTS} statements"))
            }
            (Some(n), None) => Ok(Pick::Top(n)),
            (None, Some(c)) => {
                let t = c.trim().trim_end_matches('%');
                match t.parse::<f64>() {
                    Ok(p) if p > 0.0 && p <= 100.0 => Ok(Pick::Coverage(p / 100.0)),
                    _ => Err(format!(
                        "--coverage {c}: give a share of the time above 0 and at most 100%, e.g. --coverage 90%"
                    )),
                }
            }
            (None, None) => Ok(Pick::Top(20)),
        }
    }

    fn enough(self, kept: usize, covered: f64) -> bool {
        match self {
            Pick::Top(n) => kept >= n,
            Pick::Coverage(c) => covered >= c - 1e-12 || kept >= MAX_STATEMENTS,
        }
    }
}

/// The statements chosen, what they cover, and how many were passed over.
#[derive(Debug, Default)]
pub struct Chosen {
    pub statements: Vec<Captured>,
    pub coverage: f64,
    pub other: usize,
}

fn captured(name: String, normalized: String, kind: Kind, weight: u64, share: f64) -> Captured {
    Captured {
        name,
        normalized,
        sql: None,
        values: Values::None,
        left_out: None,
        write: kind == Kind::Write,
        baseline: None,
        weight,
        share,
    }
}

/// Keep from `pg_stat_statements`, most total time first.
pub fn from_statements(s: &Statements, pick: Pick) -> Chosen {
    let mut out = Chosen::default();
    for b in &s.rows {
        if pick.enough(out.statements.len(), out.coverage) {
            break;
        }
        let Some(shape) = shape::of(&b.query).filter(|s| s.kind != Kind::Other) else {
            out.other += 1;
            continue;
        };
        let share = if s.total_ms > 0.0 {
            b.total_ms / s.total_ms
        } else {
            0.0
        };
        out.coverage += share;
        let mut c = captured(
            shape.name,
            b.query.clone(),
            shape.kind,
            b.calls.round().max(1.0) as u64,
            share,
        );
        c.baseline = Some(b.clone());
        out.statements.push(c);
    }
    out
}

/// Keep from the samples alone, most executions first (their normalised text from
/// libpg_query, as `pg_stat_statements` would write it).
pub(crate) fn from_activity(sampled: &Sampled, pick: Pick) -> Chosen {
    let mut out = Chosen::default();
    let mut by_name: BTreeMap<String, (String, Kind, u64)> = BTreeMap::new();
    let mut counted = 0u64;
    for e in &sampled.executions {
        let Some(shape) = shape::of(&e.query) else {
            continue;
        };
        counted += 1;
        if shape.kind == Kind::Other {
            continue;
        }
        let Ok(normalized) = pg_query::normalize(&e.query) else {
            continue;
        };
        by_name
            .entry(shape.name)
            .or_insert((normalized, shape.kind, 0))
            .2 += 1;
    }
    let kept: u64 = by_name.values().map(|v| v.2).sum();
    out.other = (counted - kept) as usize;
    let mut ranked: Vec<(String, (String, Kind, u64))> = by_name.into_iter().collect();
    ranked.sort_by(|a, b| b.1.2.cmp(&a.1.2).then(a.0.cmp(&b.0)));
    for (name, (normalized, kind, n)) in ranked {
        if pick.enough(out.statements.len(), out.coverage) {
            break;
        }
        let share = n as f64 / counted.max(1) as f64;
        out.coverage += share;
        out.statements
            .push(captured(name, normalized, kind, n, share));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::statements::Baseline;

    fn row(id: i64, query: &str, total_ms: f64) -> Baseline {
        Baseline {
            query_id: id,
            query: query.into(),
            calls: 10.0,
            total_ms,
            mean_ms: total_ms / 10.0,
            stddev_ms: 0.0,
            rows: 10.0,
            shared_hit: 0.0,
            shared_read: 0.0,
            temp: 0.0,
        }
    }

    #[test]
    fn coverage_keeps_statements_until_the_share_is_reached() {
        let s = Statements {
            rows: vec![
                row(1, "SELECT * FROM a WHERE x = $1", 60.0),
                row(2, "BEGIN", 20.0),
                row(3, "UPDATE a SET y = $1 WHERE x = $2", 15.0),
                row(4, "SELECT $1", 5.0),
            ],
            total_ms: 100.0,
            ..Statements::default()
        };
        let c = from_statements(&s, Pick::Coverage(0.7));
        assert_eq!(c.statements.len(), 2);
        assert_eq!(c.other, 1);
        assert!((c.coverage - 0.75).abs() < 1e-9);
        assert!(c.statements[1].write);
        assert_eq!(c.statements[0].weight, 10);
        assert_eq!(from_statements(&s, Pick::Top(1)).statements.len(), 1);
        assert_eq!(Pick::parse(None, Some("90%")), Ok(Pick::Coverage(0.9)));
        assert!(Pick::parse(Some(3), Some("90%")).is_err());
        assert!(Pick::parse(None, Some("0%")).is_err());
        assert_eq!(Pick::parse(None, None), Ok(Pick::Top(20)));
    }
}
