//! A statement as the server saw it with its literal values (`pg_stat_activity.query`) laid
//! beside its normalised text (`pg_stat_statements.query`, `$1` for each constant): the value
//! of each `$n`, as the literal's own source text (`42`, `-1.5`, `'abc'`, `E'x\n'`), so it can
//! be written back in place of `$n` as it was sent. Both texts go through PostgreSQL's own
//! lexer (libpg_query); every other token must match, so a different statement (or one cut
//! short by `track_activity_query_size`) gives nothing rather than wrong values.

use std::collections::BTreeMap;

use pg_query::protobuf::Token;

use crate::sql::normalized::{constant_at, is_constant, text, tokens};
pub use crate::sql::normalized::{fill, params};

/// The value of every `$n` of `normalized` in `literal` (by n), or None when the two are not
/// the same statement up to its constants.
pub fn values(literal: &str, normalized: &str) -> Option<BTreeMap<u32, String>> {
    let lit = tokens(literal)?;
    let norm = tokens(normalized)?;
    let mut out = BTreeMap::new();
    let mut i = 0;
    for n in &norm {
        let l = lit.get(i)?;
        if n.token == Token::Param as i32 {
            let number: u32 = text(normalized, n).trim_start_matches('$').parse().ok()?;
            let (value, used) = constant_at(literal, &lit, i)?;
            i += used;
            if let Some(prev) = out.insert(number, value.clone())
                && prev != value
            {
                return None;
            }
            continue;
        }
        let same = l.token == n.token
            && (text(literal, l).eq_ignore_ascii_case(text(normalized, n)) || is_constant(n));
        if !same {
            return None;
        }
        i += 1;
    }
    (i == lit.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_line_up_with_their_parameters() {
        let v = values(
            "SELECT * FROM t WHERE a = 42 AND b = 'x''y' AND c > -1.5 AND d = true LIMIT 10",
            "SELECT * FROM t WHERE a = $1 AND b = $2 AND c > $3 AND d = $4 LIMIT $5",
        )
        .unwrap();
        let got: Vec<&str> = v.values().map(String::as_str).collect();
        assert_eq!(got, ["42", "'x''y'", "-1.5", "true", "10"]);
        let filled = fill("SELECT * FROM t WHERE a = $1 AND b = $2", &v).unwrap();
        assert_eq!(filled, "SELECT * FROM t WHERE a = 42 AND b = 'x''y'");
        assert_eq!(params("SELECT $2, $1, $2"), [2, 1]);
    }

    #[test]
    fn another_statement_or_a_cut_text_gives_nothing() {
        assert!(
            values(
                "SELECT * FROM u WHERE a = 1",
                "SELECT * FROM t WHERE a = $1"
            )
            .is_none()
        );
        assert!(
            values(
                "SELECT * FROM t WHERE a = 1 AND",
                "SELECT * FROM t WHERE a = $1"
            )
            .is_none()
        );
        assert!(
            values(
                "SELECT * FROM t WHERE a = b",
                "SELECT * FROM t WHERE a = $1"
            )
            .is_none()
        );
        // Comments and case do not matter.
        let v = values(
            "select * /* hi */ from T where A = 7",
            "SELECT * FROM t WHERE a = $1",
        )
        .unwrap();
        assert_eq!(v[&1], "7");
        assert!(fill("SELECT $1, $2", &v).is_none());
        // The `;` a client ends its statement with (pgbench does) is not in the normalised
        // text; one in the middle is another statement.
        let v = values(
            "INSERT INTO hist (aid, delta) VALUES (920, -29);",
            "INSERT INTO hist (aid, delta) VALUES ($1, $2)",
        )
        .unwrap();
        assert_eq!((v[&1].as_str(), v[&2].as_str()), ("920", "-29"));
        assert!(values("SELECT 1; SELECT 2", "SELECT $1").is_none());
    }
}
