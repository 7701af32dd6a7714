//! A planner-only setting's values checked with a plain `EXPLAIN` before any is measured: the
//! planner reads it and the executor does not, so a value under which every statement keeps
//! its plan's shape cannot change the time and is not measured. Each value is tried in a
//! read-only transaction with `SET LOCAL`, rolled back: nothing runs, nothing is written.

use tokio_postgres::Client;

use crate::experiment::query::plan;
use crate::sql::quote::literal;

/// Why the plans could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("EXPLAIN of {statement} failed: {source}")]
    Explain {
        statement: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("{name}={value} was refused: {source}")]
    Set {
        name: String,
        value: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("the plan of {statement} could not be read: {why}")]
    Plan { statement: String, why: String },
}

/// A value of a setting and the statements whose plan it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueCheck {
    pub value: String,
    pub changed: Vec<String>,
}

/// The shape of each statement's plan under the settings in effect (and `set`, a setting
/// and its value, when given).
pub(crate) async fn shapes(
    client: &Client,
    statements: &[(String, String)],
    set: Option<(&str, &str)>,
) -> Result<Vec<String>, CheckError> {
    client
        .batch_execute("BEGIN READ ONLY")
        .await
        .map_err(|source| CheckError::Explain {
            statement: "BEGIN".into(),
            source,
        })?;
    let out = shapes_in(client, statements, set).await;
    let _ = client.batch_execute("ROLLBACK").await;
    out
}

async fn shapes_in(
    client: &Client,
    statements: &[(String, String)],
    set: Option<(&str, &str)>,
) -> Result<Vec<String>, CheckError> {
    if let Some((name, value)) = set {
        client
            .execute(
                "SELECT pg_catalog.set_config($1, $2, true)",
                &[&name, &value],
            )
            .await
            .map_err(|source| CheckError::Set {
                name: name.into(),
                value: value.into(),
                source,
            })?;
    }
    let mut out = Vec::new();
    for (statement, sql) in statements {
        let rows = client
            .simple_query(&format!("EXPLAIN (FORMAT JSON) {sql}"))
            .await
            .map_err(|source| CheckError::Explain {
                statement: statement.clone(),
                source,
            })?;
        let text = rows
            .iter()
            .find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .unwrap_or_default();
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| CheckError::Plan {
                statement: statement.clone(),
                why: e.to_string(),
            })?;
        let facts = plan::read(&json, plan::DEFAULT_BLOCK).map_err(|why| CheckError::Plan {
            statement: statement.clone(),
            why,
        })?;
        out.push(facts.fingerprint);
    }
    Ok(out)
}

/// Each of `values` of `name` against the plans in effect: the statements whose plan's
/// shape it changes (none: it cannot change the time).
pub async fn check(
    client: &Client,
    statements: &[(String, String)],
    name: &str,
    values: &[String],
) -> Result<Vec<ValueCheck>, CheckError> {
    let base = shapes(client, statements, None).await?;
    let mut out = Vec::new();
    for value in values {
        let under = shapes(client, statements, Some((name, value))).await?;
        let changed = statements
            .iter()
            .zip(base.iter().zip(&under))
            .filter(|(_, (a, b))| a != b)
            .map(|((s, _), _)| s.clone())
            .collect();
        out.push(ValueCheck {
            value: value.clone(),
            changed,
        });
    }
    Ok(out)
}

/// `SET search_path` for the tune's statements as the query experiment sets it (the lab
/// schema first, then the user's).
pub(crate) async fn use_schema(client: &Client, schema: &str) -> Result<(), CheckError> {
    let path = crate::experiment::query::session::user_search_path(schema);
    client
        .execute(
            "SELECT pg_catalog.set_config('search_path', $1, false)",
            &[&path],
        )
        .await
        .map(|_| ())
        .map_err(|source| CheckError::Set {
            name: "search_path".into(),
            value: literal(&path),
            source,
        })
}
