//! Settings as SQL: a session's settings sent as parameters of `pg_catalog.set_config` (never
//! spliced into text), and the `SET` / `ALTER SYSTEM SET` lines pglab writes for a DBA to
//! paste, all with one quoting rule ([`setting_name`], [`setting_value`]).

use tokio_postgres::Client;
use tokio_postgres::types::{ToSql, Type};

use super::quote::{ident, literal};

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

/// A setting's name as `SET` takes it: bare when every dot-separated part is a plain lower-case
/// identifier (`work_mem`, `citus.shard_count`), else quoted as one identifier.
pub(crate) fn setting_name(name: &str) -> String {
    let plain = |p: &str| {
        p.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if !name.is_empty() && name.split('.').all(plain) {
        name.to_string()
    } else {
        ident(name)
    }
}

/// A setting's value as `SET` takes it: a whole number bare, everything else a quoted literal
/// (`'64MB'`, `'on'`, `'pg_catalog, "lab"'`).
pub(crate) fn setting_value(value: &str) -> String {
    let number = value.strip_prefix('-').unwrap_or(value);
    if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) {
        value.to_string()
    } else {
        literal(value)
    }
}

/// `SET name = value;`
pub fn set_line(name: &str, value: &str) -> String {
    format!("SET {} = {};", setting_name(name), setting_value(value))
}

/// `ALTER SYSTEM SET name = value;`
pub fn alter_system_line(name: &str, value: &str) -> String {
    format!(
        "ALTER SYSTEM SET {} = {};",
        setting_name(name),
        setting_value(value)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn setting_lines_have_one_quoting_rule() {
        assert_eq!(set_line("work_mem", "64MB"), "SET work_mem = '64MB';");
        assert_eq!(
            alter_system_line("max_parallel_workers", "8"),
            "ALTER SYSTEM SET max_parallel_workers = 8;"
        );
        assert_eq!(
            alter_system_line("citus.shard_count", "-1"),
            "ALTER SYSTEM SET citus.shard_count = -1;"
        );
        assert_eq!(
            set_line("search_path", "pg_catalog, \"lab\""),
            "SET search_path = 'pg_catalog, \"lab\"';"
        );
        assert_eq!(set_line("Odd Name", "it's"), "SET \"Odd Name\" = 'it''s';");
        assert_eq!(set_line("x", "1.5"), "SET x = '1.5';");
    }
}
