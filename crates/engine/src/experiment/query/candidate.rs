//! A candidate index as the DBA writes it (`CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT
//! EXISTS] [name] ON [ONLY] table [USING method] (…) …`), read far enough to know its table and
//! to build it under a name of pglab's own: plain (the build is timed, CONCURRENTLY would time
//! waiting), so two runs never collide and cleanup finds it by name and comment.

use crate::sql::quote::ident;

/// A parsed candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub unique: bool,
    /// The table as written (`t`, `s.t`, `"My T"`).
    pub table: String,
    /// Everything after the table (`USING …`, the columns, `INCLUDE`, `WHERE` …).
    pub rest: String,
}

#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Quoted(&'a str),
    Dot,
    Other,
}

/// The next token of `s` and the text after it.
fn next(s: &str) -> Option<(Tok<'_>, &str)> {
    let s = s.trim_start();
    let c = s.chars().next()?;
    if c == '"' {
        let mut i = 1;
        let b = s.as_bytes();
        while i < b.len() {
            if b[i] == b'"' {
                if b.get(i + 1) == Some(&b'"') {
                    i += 2;
                    continue;
                }
                return Some((Tok::Quoted(&s[..=i]), &s[i + 1..]));
            }
            i += 1;
        }
        return Some((Tok::Other, ""));
    }
    if c == '.' {
        return Some((Tok::Dot, &s[1..]));
    }
    if c.is_alphabetic() || c == '_' {
        let end = s
            .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '$'))
            .unwrap_or(s.len());
        return Some((Tok::Word(&s[..end]), &s[end..]));
    }
    Some((Tok::Other, &s[c.len_utf8()..]))
}

fn is_kw(t: &Tok<'_>, kw: &str) -> bool {
    matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
}

const SHAPE: &str = "write a candidate as CREATE INDEX ON table (columns), e.g. CREATE INDEX ON orders (customer_id)";

impl Candidate {
    pub fn parse(sql: &str) -> Result<Candidate, String> {
        let bad = |why: &str| format!("'{}': {why}; {SHAPE}", sql.trim());
        let (t, mut rest) = next(sql).ok_or_else(|| bad("empty"))?;
        if !is_kw(&t, "CREATE") {
            return Err(bad("not a CREATE INDEX"));
        }
        let (mut t, r) = next(rest).ok_or_else(|| bad("incomplete"))?;
        rest = r;
        let unique = is_kw(&t, "UNIQUE");
        if unique {
            (t, rest) = next(rest).ok_or_else(|| bad("incomplete"))?;
        }
        if !is_kw(&t, "INDEX") {
            return Err(bad("not a CREATE INDEX"));
        }
        (t, rest) = next(rest).ok_or_else(|| bad("incomplete"))?;
        if is_kw(&t, "CONCURRENTLY") {
            (t, rest) = next(rest).ok_or_else(|| bad("incomplete"))?;
        }
        if is_kw(&t, "IF") {
            let (n, r) = next(rest).ok_or_else(|| bad("incomplete"))?;
            let (e, r) = next(r).ok_or_else(|| bad("incomplete"))?;
            if !is_kw(&n, "NOT") || !is_kw(&e, "EXISTS") {
                return Err(bad("IF must be IF NOT EXISTS"));
            }
            (t, rest) = next(r).ok_or_else(|| bad("incomplete"))?;
        }
        if !is_kw(&t, "ON") {
            // The index's own name: pglab builds under a name of its own.
            if !matches!(t, Tok::Word(_) | Tok::Quoted(_)) {
                return Err(bad("no ON table"));
            }
            (t, rest) = next(rest).ok_or_else(|| bad("no ON table"))?;
            if !is_kw(&t, "ON") {
                return Err(bad("no ON table"));
            }
        }
        let (mut t, r) = next(rest).ok_or_else(|| bad("no table after ON"))?;
        rest = r;
        if is_kw(&t, "ONLY") {
            (t, rest) = next(rest).ok_or_else(|| bad("no table after ON"))?;
        }
        let part = |t: &Tok<'_>| -> Option<String> {
            match t {
                Tok::Word(w) => Some(w.to_string()),
                Tok::Quoted(q) => Some(q.to_string()),
                _ => None,
            }
        };
        let mut table = part(&t).ok_or_else(|| bad("no table after ON"))?;
        if let Some((Tok::Dot, r)) = next(rest) {
            let (t2, r2) = next(r).ok_or_else(|| bad("no table after the schema"))?;
            table.push('.');
            table.push_str(&part(&t2).ok_or_else(|| bad("no table after the schema"))?);
            rest = r2;
        }
        let rest = rest.trim().to_string();
        if !rest.contains('(') {
            return Err(bad("no columns"));
        }
        Ok(Candidate {
            unique,
            table,
            rest,
        })
    }

    /// The statement that builds it as `name`, plain (not concurrently).
    pub(crate) fn build_sql(&self, name: &str) -> String {
        format!(
            "CREATE {}INDEX {} ON {} {}",
            if self.unique { "UNIQUE " } else { "" },
            ident(name),
            self.table,
            self.rest
        )
    }

    /// The statement HypoPG takes (no name, not concurrently).
    pub(crate) fn hypothetical_sql(&self) -> String {
        format!(
            "CREATE {}INDEX ON {} {}",
            if self.unique { "UNIQUE " } else { "" },
            self.table,
            self.rest
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_table_and_keeps_the_rest() {
        let c = Candidate::parse("create index on t (a)").unwrap();
        assert_eq!(
            (c.unique, c.table.as_str(), c.rest.as_str()),
            (false, "t", "(a)")
        );
        let c = Candidate::parse(
            "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS my_idx ON ONLY \"S\".\"My T\" USING btree (a, lower(b)) INCLUDE (c) WHERE d > 0",
        )
        .unwrap();
        assert!(c.unique);
        assert_eq!(c.table, "\"S\".\"My T\"");
        assert_eq!(c.rest, "USING btree (a, lower(b)) INCLUDE (c) WHERE d > 0");
        assert_eq!(
            c.build_sql("pglab_q_1"),
            "CREATE UNIQUE INDEX \"pglab_q_1\" ON \"S\".\"My T\" USING btree (a, lower(b)) INCLUDE (c) WHERE d > 0"
        );
        assert_eq!(
            Candidate::parse("CREATE INDEX i ON s.t (a)")
                .unwrap()
                .hypothetical_sql(),
            "CREATE INDEX ON s.t (a)"
        );
    }

    #[test]
    fn anything_else_is_a_sentence() {
        for bad in [
            "DROP TABLE t",
            "CREATE TABLE t (a int)",
            "CREATE INDEX i t (a)",
            "CREATE INDEX ON t",
            "CREATE INDEX IF EXISTS i ON t (a)",
            "",
        ] {
            let e = Candidate::parse(bad).unwrap_err();
            assert!(e.contains("CREATE INDEX ON table (columns)"), "{bad}: {e}");
        }
    }
}
