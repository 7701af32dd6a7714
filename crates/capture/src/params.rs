//! Which column each `$n` of a normalised statement meets, found with PostgreSQL's own
//! grammar (libpg_query's parse tree): `col op $n` (either side, through casts), `col IN ($1,
//! $2)`, `col BETWEEN $1 AND $2`, `INSERT INTO t (a, b) VALUES ($1, $2)` and `UPDATE t SET a =
//! $1`. The column's table comes from its qualifier (an alias or a table name of the
//! statement); an unqualified column may belong to any of the statement's tables, so all are
//! candidates and the catalogue decides (see `colstats`). Subquery scopes are not told apart:
//! a candidate that has no such column simply finds no statistics.

use std::collections::BTreeMap;

use pg_query::protobuf::AExprKind;
use serde_json::Value;

use super::shape::walk_keys;

/// How a parameter is compared with its column: what kind of value suits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// `=`, `IN`, `<>`, an inserted or assigned value: a value the column holds.
    Equal,
    /// `<`, `<=`: an upper bound.
    Below,
    /// `>`, `>=`: a lower bound.
    Above,
    /// The lower end of `BETWEEN`.
    From,
    /// The upper end of `BETWEEN`.
    To,
}

/// A table the statement names: its schema (may be empty), name and alias.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub schema: String,
    pub name: String,
    pub alias: String,
}

/// The column a parameter meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The tables it may belong to (one when the column is qualified).
    pub tables: Vec<Table>,
    pub column: String,
    pub how: Use,
}

/// Every `$n` that meets a column, by n (the first comparison found wins).
pub fn targets(normalized: &str) -> BTreeMap<u32, Target> {
    let mut out = BTreeMap::new();
    let Ok(parsed) = pg_query::parse(normalized, 0) else {
        return out;
    };
    let Ok(tree) = serde_json::to_value(&parsed.protobuf) else {
        return out;
    };
    let mut tables = Vec::new();
    walk_keys(&tree, &mut |key, v| {
        if (key == "RangeVar" || key == "relation") && v.get("relname").is_some() {
            tables.push(Table {
                schema: str_of(v, "schemaname"),
                name: str_of(v, "relname"),
                alias: v
                    .get("alias")
                    .map(|a| str_of(a, "aliasname"))
                    .unwrap_or_default(),
            });
        }
    });
    let mut found: Vec<(u32, Vec<String>, Use)> = Vec::new();
    walk_keys(&tree, &mut |key, v| match key {
        "AExpr" => comparison(v, &mut found),
        "InsertStmt" => inserted(v, &mut found),
        "UpdateStmt" => assigned(v, &mut found),
        _ => {}
    });
    for (n, fields, how) in found {
        let Some((column, qualifier)) = fields.split_last() else {
            continue;
        };
        let candidates: Vec<Table> = match qualifier.last() {
            Some(q) => tables
                .iter()
                .filter(|t| &t.alias == q || (t.alias.is_empty() && &t.name == q))
                .take(1)
                .cloned()
                .collect(),
            None => tables.clone(),
        };
        if candidates.is_empty() {
            continue;
        }
        out.entry(n).or_insert(Target {
            tables: candidates,
            column: column.clone(),
            how,
        });
    }
    out
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The node inside a `Node` wrapper: `{"node": {"Kind": {...}}}` → ("Kind", {...}).
pub(super) fn node(v: &Value) -> Option<(&str, &Value)> {
    let inner = v.get("node")?.as_object()?;
    inner.iter().next().map(|(k, x)| (k.as_str(), x))
}

/// The `$n` a node is, through casts.
pub(super) fn param(v: &Value) -> Option<u32> {
    match node(v)? {
        ("ParamRef", p) => p.get("number")?.as_u64().map(|n| n as u32),
        ("TypeCast", c) => param(c.get("arg")?),
        _ => None,
    }
}

/// The names of a column reference (`a`, `t.a`), through casts.
fn column(v: &Value) -> Option<Vec<String>> {
    match node(v)? {
        ("ColumnRef", c) => {
            let fields: Vec<String> = c
                .get("fields")?
                .as_array()?
                .iter()
                .filter_map(|f| match node(f)? {
                    ("String", s) => Some(str_of(s, "sval")),
                    _ => None,
                })
                .collect();
            (!fields.is_empty()).then_some(fields)
        }
        ("TypeCast", c) => column(c.get("arg")?),
        _ => None,
    }
}

fn list_items(v: &Value) -> Vec<&Value> {
    match node(v) {
        Some(("List", l)) => l
            .get("items")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
        _ => vec![v],
    }
}

const AEXPR_OP: u64 = AExprKind::AexprOp as u64;
const AEXPR_IN: u64 = AExprKind::AexprIn as u64;
const AEXPR_BETWEEN: u64 = AExprKind::AexprBetween as u64;
const AEXPR_NOT_BETWEEN_SYM: u64 = AExprKind::AexprNotBetweenSym as u64;

fn comparison(v: &Value, found: &mut Vec<(u32, Vec<String>, Use)>) {
    let kind = v.get("kind").and_then(Value::as_u64).unwrap_or(0);
    let op = v
        .get("name")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
        .and_then(node)
        .map(|(_, s)| str_of(s, "sval"))
        .unwrap_or_default();
    let (Some(l), Some(r)) = (v.get("lexpr"), v.get("rexpr")) else {
        return;
    };
    match kind {
        AEXPR_OP => {
            let flip = |u: Use| match u {
                Use::Below => Use::Above,
                Use::Above => Use::Below,
                u => u,
            };
            let how = match op.as_str() {
                "<" | "<=" => Use::Below,
                ">" | ">=" => Use::Above,
                "=" | "<>" | "!=" => Use::Equal,
                _ => return,
            };
            if let (Some(c), Some(n)) = (column(l), param(r)) {
                found.push((n, c, how));
            } else if let (Some(n), Some(c)) = (param(l), column(r)) {
                found.push((n, c, flip(how)));
            }
        }
        AEXPR_IN => {
            if let Some(c) = column(l) {
                for n in list_items(r).into_iter().filter_map(param) {
                    found.push((n, c.clone(), Use::Equal));
                }
            }
        }
        AEXPR_BETWEEN..=AEXPR_NOT_BETWEEN_SYM => {
            if let Some(c) = column(l) {
                let ends = list_items(r);
                for (end, how) in ends.iter().zip([Use::From, Use::To]) {
                    if let Some(n) = param(end) {
                        found.push((n, c.clone(), how));
                    }
                }
            }
        }
        _ => {}
    }
}

fn inserted(v: &Value, found: &mut Vec<(u32, Vec<String>, Use)>) {
    let cols: Vec<String> = v
        .get("cols")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| node(c).map(|(_, r)| str_of(r, "name")))
                .collect()
        })
        .unwrap_or_default();
    let rows = v
        .get("select_stmt")
        .and_then(node)
        .and_then(|(_, s)| s.get("values_lists"))
        .and_then(Value::as_array);
    for row in rows.into_iter().flatten() {
        for (col, item) in cols.iter().zip(list_items(row)) {
            if let Some(n) = param(item) {
                found.push((n, vec![col.clone()], Use::Equal));
            }
        }
    }
}

fn assigned(v: &Value, found: &mut Vec<(u32, Vec<String>, Use)>) {
    for t in v
        .get("target_list")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(("ResTarget", r)) = node(t)
            && let Some(n) = r.get("val").and_then(param)
        {
            found.push((n, vec![str_of(r, "name")], Use::Equal));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(sql: &str, n: u32) -> (Vec<String>, String, Use) {
        let t = targets(sql);
        let t = t.get(&n).unwrap_or_else(|| panic!("${n} in {sql}: {t:?}"));
        (
            t.tables.iter().map(|t| t.name.clone()).collect(),
            t.column.clone(),
            t.how,
        )
    }

    #[test]
    fn comparisons_find_their_column_and_table() {
        let sql = "SELECT a.x FROM accounts a JOIN branches b ON b.id = a.bid WHERE a.aid = $1 AND $2 < b.balance AND a.ts BETWEEN $3 AND $4::date AND b.kind IN ($5, $6) LIMIT $7";
        assert_eq!(
            one(sql, 1),
            (vec!["accounts".into()], "aid".into(), Use::Equal)
        );
        assert_eq!(
            one(sql, 2),
            (vec!["branches".into()], "balance".into(), Use::Above)
        );
        assert_eq!(one(sql, 3).2, Use::From);
        assert_eq!(one(sql, 4), (vec!["accounts".into()], "ts".into(), Use::To));
        assert_eq!(one(sql, 6).1, "kind");
        assert!(!targets(sql).contains_key(&7), "LIMIT meets no column");
        // Unqualified: every table is a candidate.
        let (tables, col, _) = one("SELECT 1 FROM s.t, u WHERE c >= $1", 1);
        assert_eq!((tables.len(), col.as_str()), (2, "c"));
    }

    #[test]
    fn inserts_and_updates_take_their_target_columns() {
        let sql = "INSERT INTO hist (aid, delta) VALUES ($1, $2)";
        assert_eq!(
            one(sql, 2),
            (vec!["hist".into()], "delta".into(), Use::Equal)
        );
        let sql = "UPDATE acc SET bal = bal + $1, note = $2 WHERE aid = $3";
        assert_eq!(one(sql, 2).1, "note");
        assert_eq!(one(sql, 3).1, "aid");
        assert!(
            !targets(sql).contains_key(&1),
            "bal + $1 is no column's value"
        );
    }
}
