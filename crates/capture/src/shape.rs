//! What kind of statement a captured text is, by PostgreSQL's grammar: a query, a write
//! (`INSERT`/`UPDATE`/`DELETE`/`MERGE` anywhere in it, data-modifying `WITH` included, or a
//! `SELECT … FOR UPDATE/SHARE`, which locks rows), or something a replay leaves out
//! (`BEGIN`, `SET`, DDL, several statements in one text); and its stable name, from the
//! fingerprint libpg_query computes (constants and parameters ignored).

use serde_json::Value;

/// The kind of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    /// Not replayed on its own (transaction control, settings, DDL, …).
    Other,
}

/// A statement's kind and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub kind: Kind,
    /// `select_accounts_1a2b3c4d`: verb, first table, fingerprint.
    pub name: String,
    /// The top-level statement type (`SelectStmt`).
    pub statement: String,
}

const WRITES: [&str; 4] = ["InsertStmt", "UpdateStmt", "DeleteStmt", "MergeStmt"];

/// Call `f(key, value)` for every value under a key of the tree, depth first.
pub(crate) fn walk_keys(v: &Value, f: &mut dyn FnMut(&str, &Value)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                f(k, x);
                walk_keys(x, f);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk_keys(x, f)),
        _ => {}
    }
}

/// The shape of `sql` (None: it does not parse).
pub fn of(sql: &str) -> Option<Shape> {
    let parsed = pg_query::parse(sql, 0).ok()?;
    let types = parsed.statement_types();
    let statement = types.first().copied().unwrap_or("").to_string();
    let tree = serde_json::to_value(&parsed.protobuf).ok()?;
    let (mut writes, mut locks, mut table) = (false, false, None::<String>);
    walk_keys(&tree, &mut |k, v| {
        if WRITES.contains(&k) && v.is_object() {
            writes = true;
        }
        if k == "locking_clause" && v.as_array().is_some_and(|a| !a.is_empty()) {
            locks = true;
        }
        if table.is_none()
            && (k == "RangeVar" || k == "relation")
            && let Some(n) = v.get("relname").and_then(Value::as_str)
        {
            table = Some(n.to_string());
        }
    });
    let kind = if types.len() != 1 {
        Kind::Other
    } else if WRITES.contains(&statement.as_str())
        || (statement == "SelectStmt" && (writes || locks))
    {
        Kind::Write
    } else if statement == "SelectStmt" {
        Kind::Read
    } else {
        Kind::Other
    };
    let fp = pg_query::fingerprint(sql, 0, 0).ok()?;
    let verb = statement.trim_end_matches("Stmt").to_ascii_lowercase();
    let table: String = table
        .unwrap_or_else(|| "q".into())
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(24)
        .collect();
    Some(Shape {
        kind,
        name: format!("{verb}_{table}_{}", &fp.hex[..fp.hex.len().min(8)]),
        statement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_the_rest() {
        let s = of("SELECT abalance FROM pgbench_accounts WHERE aid = $1").unwrap();
        assert_eq!(s.kind, Kind::Read);
        assert!(s.name.starts_with("select_pgbench_accounts_"), "{}", s.name);
        // Constants do not change the name; another statement does.
        let same = of("SELECT abalance FROM pgbench_accounts WHERE aid = 42").unwrap();
        assert_eq!(same.name, s.name);
        assert_ne!(
            of("SELECT bid FROM pgbench_accounts WHERE aid = 1")
                .unwrap()
                .name,
            s.name
        );
        assert_eq!(of("UPDATE t SET a = $1").unwrap().kind, Kind::Write);
        assert_eq!(of("SELECT * FROM t FOR UPDATE").unwrap().kind, Kind::Write);
        assert_eq!(
            of("WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d")
                .unwrap()
                .kind,
            Kind::Write
        );
        assert_eq!(of("BEGIN").unwrap().kind, Kind::Other);
        assert_eq!(of("SELECT 1; SELECT 2").unwrap().kind, Kind::Other);
        assert!(of("SELEC 1").is_none());
    }
}
