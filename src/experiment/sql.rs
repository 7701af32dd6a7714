//! SQL text pglab builds by hand: quoted identifiers and literals, session settings sent as
//! parameters, and the lab schema's name rule. Values go as parameters wherever the protocol
//! allows (every setting through [`SessionSettings`]); [`literal`] is for the places it does
//! not (DDL such as `COMMENT ON`, `ALTER SYSTEM`).

use tokio_postgres::Client;
use tokio_postgres::types::{ToSql, Type};

/// Quote an identifier for SQL.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quote a string literal for SQL, the way `quote_literal()` does: a string holding a
/// backslash becomes an escape string (`E'…'`, backslashes doubled), which reads the same
/// whatever `standard_conforming_strings` says; a plain `'…'` would read `\` as an escape on
/// a server where it is off.
pub fn literal(s: &str) -> String {
    let quoted = s.replace('\'', "''");
    if s.contains('\\') {
        format!("E'{}'", quoted.replace('\\', "\\\\"))
    } else {
        format!("'{quoted}'")
    }
}

/// Settings for a session, in order, sent as the parameters of `pg_catalog.set_config` in
/// one statement — never spliced into SQL text, so a name or value may hold any character.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSettings(Vec<(String, String)>);

impl SessionSettings {
    pub fn new() -> SessionSettings {
        SessionSettings::default()
    }

    /// Add `name = value` (a later value of the same name wins, as with `SET`).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.0.push((name.into(), value.into()));
        self
    }

    /// Add every setting of `other`, after these.
    pub fn extend(&mut self, other: &SessionSettings) -> &mut Self {
        self.0.extend(other.0.iter().cloned());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// `SELECT pg_catalog.set_config($1, $2, false), …`: one call per setting, evaluated in
    /// order; `local` makes them last until the end of the transaction (`SET LOCAL`).
    pub fn sql(&self, local: bool) -> String {
        let calls: Vec<String> = (0..self.0.len())
            .map(|i| {
                format!(
                    "pg_catalog.set_config(${}, ${}, {local})",
                    2 * i + 1,
                    2 * i + 2
                )
            })
            .collect();
        format!("SELECT {}", calls.join(", "))
    }

    /// The parameters of [`SessionSettings::sql`]: name, value, name, value, …
    pub fn params(&self) -> Vec<&str> {
        self.0
            .iter()
            .flat_map(|(n, v)| [n.as_str(), v.as_str()])
            .collect()
    }

    /// Apply them to `client`'s session (one round trip; nothing when empty).
    pub async fn apply(&self, client: &Client) -> Result<(), tokio_postgres::Error> {
        self.send(client, false).await
    }

    /// Apply them until the end of the current transaction (`SET LOCAL`).
    pub async fn apply_local(&self, client: &Client) -> Result<(), tokio_postgres::Error> {
        self.send(client, true).await
    }

    async fn send(&self, client: &Client, local: bool) -> Result<(), tokio_postgres::Error> {
        if self.is_empty() {
            return Ok(());
        }
        let params: Vec<String> = self.params().into_iter().map(str::to_string).collect();
        let typed: Vec<(&(dyn ToSql + Sync), Type)> = params
            .iter()
            .map(|p| (p as &(dyn ToSql + Sync), Type::TEXT))
            .collect();
        client.query_typed(&self.sql(local), &typed).await?;
        Ok(())
    }
}

/// A valid lab schema name: letters, digits, underscores; not a system schema.
pub fn check_schema_name(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 63 {
        return Err("the lab schema name must be 1-63 characters".into());
    }
    if !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || s.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!(
            "'{s}' is not a plain schema name (letters, digits, _)"
        ));
    }
    if s == "public" || s.starts_with("pg_") || s == "information_schema" {
        return Err(format!(
            "'{s}' is not pglab's to use: choose a schema of its own, e.g. pglab"
        ));
    }
    Ok(())
}

/// A run id as a plain identifier part: ASCII letters and digits lowercased, anything else
/// `_` (run ids look like `20250101T120000Z-ab12`).
pub fn plain_name(run_id: &str) -> String {
    run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_the_same_whatever_standard_conforming_strings_says() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(r"C:\temp"), r"E'C:\\temp'");
        assert_eq!(literal(r"a\'b"), r"E'a\\''b'");
    }

    #[test]
    fn settings_are_parameters_in_order() {
        let mut s = SessionSettings::new();
        s.set("search_path", "pg_catalog, \"lab\"")
            .set("work_mem", "4MB");
        assert_eq!(
            s.sql(false),
            "SELECT pg_catalog.set_config($1, $2, false), pg_catalog.set_config($3, $4, false)"
        );
        assert_eq!(
            s.params(),
            ["search_path", "pg_catalog, \"lab\"", "work_mem", "4MB"]
        );
        assert!(s.sql(true).ends_with("$4, true)"));
    }
}
