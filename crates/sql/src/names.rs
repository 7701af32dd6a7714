//! A table's name as the user writes it: `SCHEMA.NAME`, either part in double quotes when it
//! holds a dot, capitals or other characters (`"Sales"."Order Lines"`), as PostgreSQL reads
//! identifiers: unquoted parts are folded to lower case. A bare `NAME` is `public.NAME`.

use serde::{Deserialize, Serialize};

use tokio_postgres::Client;

use super::quote::ident;

/// A schema-qualified table name, both parts as stored in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TableName {
    pub schema: String,
    pub name: String,
}

impl TableName {
    pub fn new(schema: &str, name: &str) -> TableName {
        TableName {
            schema: schema.to_string(),
            name: name.to_string(),
        }
    }

    /// Parse `schema.name`, `name` (in `public`) or quoted parts.
    pub fn parse(input: &str) -> Result<TableName, String> {
        let s = input.trim();
        if s.is_empty() {
            return Err("no table named: write SCHEMA.NAME, e.g. public.orders".into());
        }
        let parts = split_parts(s)?;
        match parts.as_slice() {
            [name] => Ok(TableName::new("public", name)),
            [schema, name] => Ok(TableName::new(schema, name)),
            _ => Err(format!(
                "'{s}' has more than two parts: write SCHEMA.NAME (quote a part that holds a dot: \"my.schema\".orders)"
            )),
        }
    }

    /// `"schema"."name"` for SQL.
    pub fn sql(&self) -> String {
        format!("{}.{}", ident(&self.schema), ident(&self.name))
    }

    /// The same name in another schema (the staging schema).
    pub fn in_schema(&self, schema: &str) -> TableName {
        TableName::new(schema, &self.name)
    }
}

impl std::fmt::Display for TableName {
    /// `schema.name`, quoting a part only when it needs it (as `quote_ident` would).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}.{}",
            display_part(&self.schema),
            display_part(&self.name)
        )
    }
}

fn display_part(p: &str) -> String {
    let plain = !p.is_empty()
        && p.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !p.starts_with(|c: char| c.is_ascii_digit());
    if plain { p.to_string() } else { ident(p) }
}

/// `a, "B", c` as column names (unquoted folded to lower case, as PostgreSQL reads them).
pub fn parse_column_list(input: &str) -> Result<Vec<String>, String> {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in input.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => items.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    items.push(cur);
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("'{input}': an empty column name in the list"));
        }
        match split_parts(item)?.as_slice() {
            [one] if !out.contains(one) => out.push(one.clone()),
            [one] => return Err(format!("'{input}': column {one} is listed twice")),
            _ => {
                return Err(format!(
                    "'{item}' is not a column name (quote one that holds a dot: \"a.b\")"
                ));
            }
        }
    }
    Ok(out)
}

/// Split on dots outside double quotes; fold unquoted parts to lower case.
fn split_parts(s: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted_part = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if !cur.is_empty() {
                    return Err(format!("'{s}': a quote may only open a part of the name"));
                }
                quoted_part = true;
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            cur.push('"');
                        }
                        Some('"') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err(format!("'{s}': a quote is not closed")),
                    }
                }
                if !matches!(chars.peek(), None | Some('.')) {
                    return Err(format!("'{s}': text after a closing quote"));
                }
            }
            '.' => {
                if cur.is_empty() {
                    return Err(format!("'{s}': an empty part in the name"));
                }
                parts.push(std::mem::take(&mut cur));
                quoted_part = false;
            }
            c if c.is_whitespace() && !quoted_part => {
                return Err(format!(
                    "'{s}': a name with spaces must be quoted: \"my table\""
                ));
            }
            c => cur.push(c.to_ascii_lowercase()),
        }
    }
    if cur.is_empty() {
        return Err(format!("'{s}': an empty part in the name"));
    }
    parts.push(cur);
    Ok(parts)
}

/// ", did you mean public.orders?" for the closest table name the source has.
pub async fn closest(c: &Client, n: &TableName) -> Result<String, tokio_postgres::Error> {
    let names: Vec<TableName> = c
        .query(
            "SELECT n.nspname::text, c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'u', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')",
            &[],
        )
        .await?
        .iter()
        .map(|r| TableName::new(&r.get::<_, String>(0), &r.get::<_, String>(1)))
        .collect();
    let want = n.to_string();
    let best = names
        .iter()
        .map(|t| (strsim::jaro_winkler(&want, &t.to_string()), t))
        .filter(|(s, _)| *s > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    Ok(match best {
        Some((_, t)) => format!(": did you mean {t}?"),
        None => ": check the name (SCHEMA.NAME; list them with \\dt *.* in psql)".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_as_postgres_reads_them() {
        assert_eq!(
            TableName::parse("Public.Orders").unwrap(),
            TableName::new("public", "orders")
        );
        assert_eq!(
            TableName::parse("orders").unwrap(),
            TableName::new("public", "orders")
        );
        let q = TableName::parse("\"Sales\".\"Order \"\"x\"\".lines\"").unwrap();
        assert_eq!(q, TableName::new("Sales", "Order \"x\".lines"));
        assert_eq!(q.to_string(), "\"Sales\".\"Order \"\"x\"\".lines\"");
        assert_eq!(TableName::new("public", "t1").to_string(), "public.t1");
        for bad in ["", "a.b.c", "a..b", ".a", "\"a", "a b", "\"a\"b.c"] {
            assert!(TableName::parse(bad).is_err(), "{bad}");
        }
    }
}
