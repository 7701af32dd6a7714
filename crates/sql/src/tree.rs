//! The parse tree of a command string: its statements as PostgreSQL's parser gives them, each
//! with its text, its node, and the whole tree as JSON for searches that must reach every
//! node (a function call in a subquery of a CTE of an EXPLAIN).

use pg_query::NodeEnum;
use serde_json::Value;

/// One statement of a command string.
#[derive(Debug, Clone)]
pub struct Statement {
    /// Its text as written (comments before it included).
    pub text: String,
    pub node: NodeEnum,
    pub json: Value,
}

/// Parse `sql` into its statements; a parse error as the parser's own sentence.
pub fn parse(sql: &str) -> Result<Vec<Statement>, String> {
    let parsed = pg_query::parse(sql, pg_query::ParserOptions::DEFAULT).map_err(|e| match e {
        pg_query::Error::Parse(m) => format!("PostgreSQL's parser does not take it: {m}"),
        pg_query::Error::Conversion(_) => "the statement holds a NUL byte".to_string(),
        other => format!("PostgreSQL's parser does not take it: {other}"),
    })?;
    let mut out = Vec::new();
    for raw in &parsed.protobuf.stmts {
        let Some(node) = raw.stmt.as_ref().and_then(|n| n.node.clone()) else {
            continue;
        };
        let start = usize::try_from(raw.stmt_location)
            .unwrap_or(0)
            .min(sql.len());
        let end = match raw.stmt_len {
            0 => sql.len(),
            n => (start + usize::try_from(n).unwrap_or(0)).min(sql.len()),
        };
        let text = sql.get(start..end).unwrap_or(sql).to_string();
        let json = serde_json::to_value(&node).unwrap_or(Value::Null);
        out.push(Statement { text, node, json });
    }
    Ok(out)
}

/// The tables a command string names, as written (schema-qualified when it is), sorted, each
/// once; empty when it does not parse.
pub fn tables(sql: &str) -> Vec<String> {
    let Ok(parsed) = pg_query::parse(sql, pg_query::ParserOptions::DEFAULT) else {
        return Vec::new();
    };
    let mut out = parsed.tables();
    out.sort();
    out.dedup();
    out
}

/// Every node of the tree, by its type name (`FuncCall`, `InsertStmt` …), depth first.
pub fn nodes<'a>(v: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push((k.as_str(), x));
                }
                nodes(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| nodes(x, out)),
        _ => {}
    }
}

/// Whether any object in the tree has field `field` set (not null, not empty).
pub(crate) fn has_field(v: &Value, field: &str) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            (k == field && !x.is_null() && x != &Value::Array(vec![])) || has_field(x, field)
        }),
        Value::Array(a) => a.iter().any(|x| has_field(x, field)),
        _ => false,
    }
}

/// The names of the functions the tree calls (`pg_catalog.set_config` as written).
pub fn function_calls(v: &Value) -> Vec<String> {
    let mut all = Vec::new();
    nodes(v, &mut all);
    all.iter()
        .filter(|(k, _)| *k == "FuncCall")
        .map(|(_, f)| {
            let parts: Vec<&str> = f["funcname"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|n| n["node"]["String"]["sval"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            parts.join(".")
        })
        .collect()
}

/// Whether the tree holds a node of type `tag`.
pub fn contains(v: &Value, tag: &str) -> bool {
    let mut all = Vec::new();
    nodes(v, &mut all);
    all.iter().any(|(k, _)| *k == tag)
}

/// The statement's first words as a DBA writes them (`CREATE TABLE`, `REINDEX`), comments
/// skipped: how sentences name it.
pub fn leading_words(text: &str) -> String {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map(|(_, b)| b).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|(_, b)| b).unwrap_or("");
        } else {
            break;
        }
    }
    let words: Vec<String> = rest
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .take(3)
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let take = match words.first().map(String::as_str) {
        Some("CREATE" | "ALTER" | "DROP") => match words.get(1).map(String::as_str) {
            Some("TEMP" | "TEMPORARY" | "UNIQUE" | "OR" | "UNLOGGED" | "MATERIALIZED") => 3,
            _ => 2,
        },
        Some("LOCK" | "PREPARE" | "SELECT" | "START")
            if words
                .get(1)
                .is_some_and(|w| w == "TRANSACTION" || w == "TABLE") =>
        {
            2
        }
        _ => 1,
    };
    words.into_iter().take(take).collect::<Vec<_>>().join(" ")
}

/// Whether an option list (`EXPLAIN (…)`, `BEGIN …`) turns `name` on: present with no
/// value, or a value that is not false/off/0.
pub(crate) fn option_on(options: &[pg_query::Node], name: &str) -> Option<bool> {
    options.iter().find_map(|o| match o.node.as_ref()? {
        NodeEnum::DefElem(d) if d.defname == name => Some(match d.arg.as_deref() {
            None => true,
            Some(a) => {
                let j = serde_json::to_value(a).unwrap_or(Value::Null).to_string();
                !(j.contains("\"boolval\":false")
                    || j.contains("\"ival\":0")
                    || j.contains("\"sval\":\"false\"")
                    || j.contains("\"sval\":\"off\"")
                    || j.contains("\"sval\":\"0\""))
            }
        }),
        _ => None,
    })
}
