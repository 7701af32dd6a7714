//! Values for a `$n` that is a `LIMIT` count or an `OFFSET`, which meet no column and so get
//! nothing from statistics. A page's size is in production's figures: a `LIMIT` lets through
//! at most its count, so the rows a call returned on production (`pg_stat_statements`' rows
//! per call, rounded up) is the count that reproduces its work; that holds only for the
//! statement's own, outermost `LIMIT` (a subquery's count is not what the statement returns).
//! An `OFFSET` is written as 0, the first page, and says so: how deep production pages is not
//! in any statistic.

use std::collections::BTreeMap;

use serde_json::Value;

use super::params::{node, param};
use super::shape::walk_keys;

/// What a paging parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// A `LIMIT`/`FETCH FIRST` count; `outer` when it is the statement's own.
    Limit {
        outer: bool,
    },
    Offset,
}

/// Every `$n` that is a `LIMIT` count or an `OFFSET` in `normalized`, by n.
pub(crate) fn paging(normalized: &str) -> BTreeMap<u32, Paging> {
    let mut out = BTreeMap::new();
    let Ok(parsed) = pg_query::parse(normalized, 0) else {
        return out;
    };
    let Ok(tree) = serde_json::to_value(&parsed.protobuf) else {
        return out;
    };
    let outer = tree
        .pointer("/stmts/0/stmt")
        .and_then(node)
        .filter(|(kind, _)| *kind == "SelectStmt")
        .map(|(_, s)| s as *const Value);
    walk_keys(&tree, &mut |key, v| {
        if key != "SelectStmt" {
            return;
        }
        if let Some(n) = v.get("limit_count").and_then(param) {
            let outer = outer.is_some_and(|o| std::ptr::eq(o, v));
            out.entry(n).or_insert(Paging::Limit { outer });
        }
        if let Some(n) = v.get("limit_offset").and_then(param) {
            out.entry(n).or_insert(Paging::Offset);
        }
    });
    out
}

/// The value of a paging `$n` and where it came from, given production's rows per call
/// (None: no production figures, as in a capture from samples alone). None when there is no
/// value to give, with the reason.
pub fn value(p: Paging, rows_per_call: Option<f64>) -> Result<(String, String), String> {
    match (p, rows_per_call) {
        (Paging::Offset, _) => Ok((
            "0".into(),
            "OFFSET 0, the first page (how deep production pages is not known; write a deeper offset by hand)".into(),
        )),
        (Paging::Limit { outer: true }, Some(rows)) if rows.is_finite() && rows >= 0.0 => {
            let n = (rows - 1e-9).ceil().max(1.0) as u64;
            Ok((
                n.to_string(),
                format!("LIMIT {n}, production's rows per call ({rows:.2}), which the LIMIT let through"),
            ))
        }
        (Paging::Limit { outer: true }, _) => Err(
            "is a LIMIT count, and without pg_stat_statements there are no rows per call to take it from".into(),
        ),
        (Paging::Limit { outer: false }, _) => Err(
            "is the LIMIT count of a subquery, which no production figure gives".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_offsets_are_found_and_told_apart() {
        let p = paging("SELECT aid FROM acc WHERE bid = $1 ORDER BY aid LIMIT $2 OFFSET $3");
        assert_eq!(p.get(&1), None, "a comparison is no page");
        assert_eq!(p[&2], Paging::Limit { outer: true });
        assert_eq!(p[&3], Paging::Offset);
        // Through a cast, and FETCH FIRST is a LIMIT.
        let p = paging("SELECT 1 FROM t FETCH FIRST $1 ROWS ONLY");
        assert_eq!(p[&1], Paging::Limit { outer: true });
        let p = paging("SELECT 1 FROM t LIMIT $1::int");
        assert_eq!(p[&1], Paging::Limit { outer: true });
        // A subquery's count is not the statement's.
        let p = paging("SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT $1) s WHERE a > $2");
        assert_eq!(p[&1], Paging::Limit { outer: false });
        // A set operation's LIMIT is the outermost statement's.
        let p = paging("SELECT a FROM t UNION ALL SELECT a FROM u LIMIT $1");
        assert_eq!(p[&1], Paging::Limit { outer: true });
        // A write has no page of its own.
        assert!(
            paging("DELETE FROM t WHERE a IN (SELECT a FROM t LIMIT $1)")[&1]
                != Paging::Limit { outer: true }
        );
    }

    #[test]
    fn a_limit_takes_productions_rows_per_call_and_an_offset_the_first_page() {
        let v = |p, r| value(p, r).map(|(v, _)| v);
        let outer = Paging::Limit { outer: true };
        assert_eq!(v(outer, Some(10.0)), Ok("10".into()));
        assert_eq!(v(outer, Some(9.2)), Ok("10".into()));
        // A page that returned nothing still has a count of at least 1.
        assert_eq!(v(outer, Some(0.0)), Ok("1".into()));
        assert!(v(outer, None).unwrap_err().contains("pg_stat_statements"));
        assert!(
            v(Paging::Limit { outer: false }, Some(10.0))
                .unwrap_err()
                .contains("subquery")
        );
        assert_eq!(v(Paging::Offset, None), Ok("0".into()));
    }
}
