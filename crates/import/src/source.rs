//! The source server, read and never written: which tables there are (for the TUI's list),
//! whether the named ones exist and may be read, and the one `REPEATABLE READ READ ONLY`
//! transaction every table is read in (one consistent snapshot, like `pg_dump`'s). No
//! object, temporary table or setting is created or changed there; the tables are locked in
//! `ACCESS SHARE` mode (what any `SELECT` takes) so no DDL changes them mid-import, with
//! row-level security off and a lock timeout ([`super::source_guard`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use tokio_postgres::Client;

use super::ImportError;
use super::source_guard::{Readable, inheritance_refusal, lock_wait_sentence, rls_refusal};
use crate::server::error::{describe_query_error, sqlstate};
use crate::sql::imported::SourceFingerprint;
use crate::sql::names::TableName;

/// What the import needs to know about the source besides its tables.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceInfo {
    pub fingerprint: SourceFingerprint,
    pub version_num: i32,
    /// `current_schemas(false)`: how the source's printed expressions resolve names.
    pub search_path: Vec<String>,
    /// The database's collation (`datcollate`).
    pub collate: String,
    /// Installed extensions and their schemas.
    pub extensions: BTreeMap<String, String>,
    /// The session's `DateStyle` and `IntervalStyle`, for a text COPY.
    pub datestyle: String,
    pub intervalstyle: String,
    pub snapshot_at: DateTime<Utc>,
}

/// A table the source has, for choosing what to import.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub name: TableName,
    pub rows_estimate: f64,
    /// `pg_total_relation_size`.
    pub bytes: i64,
    pub readable: bool,
}

/// The source's tables (not its catalogs), largest first.
pub async fn list_tables(c: &Client) -> Result<Vec<Listed>, String> {
    let rows = c
        .query(
            "SELECT n.nspname::text, c.relname::text, c.reltuples::float8, pg_total_relation_size(c.oid),
                    has_table_privilege(c.oid, 'SELECT')
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'u') AND NOT c.relispartition
                AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
              ORDER BY 4 DESC, 1, 2",
            &[],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    Ok(rows
        .iter()
        .map(|r| Listed {
            name: TableName::new(&r.get::<_, String>(0), &r.get::<_, String>(1)),
            rows_estimate: r.get(2),
            bytes: r.get(3),
            readable: r.get(4),
        })
        .collect())
}

/// Find each named table and check it can be imported: it exists, is a table, and the role
/// may read it. Returns the oids in the order given (duplicates dropped).
pub async fn check_tables(
    c: &Client,
    names: &[TableName],
    source: &str,
) -> Result<Vec<(TableName, u32)>, ImportError> {
    let user: String = c
        .query_one("SELECT current_user::text", &[])
        .await
        .map_err(query_failed)?
        .get(0);
    let mut out: Vec<(TableName, u32)> = Vec::new();
    let mut parents = Vec::new();
    for n in names {
        if out.iter().any(|(o, _)| o == n) {
            continue;
        }
        refuse_system_schema(n)?;
        let found = find_table(c, n, source).await?;
        refuse_not_a_table(n, &found)?;
        refuse_without_select(n, &user, &found)?;
        let readable = Readable {
            name: n,
            user: &user,
            rls_filters: found.rls_filters,
            children: found.children,
        };
        if let Some(why) = rls_refusal(&readable) {
            return Err(ImportError::Refused(why));
        }
        parents.push((readable.name.clone(), readable.children));
        out.push((n.clone(), found.oid));
    }
    refuse_partial_inheritance(parents, &user, names)?;
    Ok(out)
}

fn query_failed(e: tokio_postgres::Error) -> ImportError {
    ImportError::Failed(describe_query_error(&e))
}

/// pglab imports the tables of the user's own schemas, not the catalogs.
fn refuse_system_schema(n: &TableName) -> Result<(), ImportError> {
    if n.schema == "information_schema" || n.schema.starts_with("pg_") {
        return Err(ImportError::Refused(format!(
            "{n} is in a system schema: pglab imports the tables of your own schemas"
        )));
    }
    Ok(())
}

/// A named relation as the source's catalog shows it.
struct Found {
    oid: u32,
    /// `pg_class.relkind`.
    kind: String,
    /// The role has `SELECT` on it.
    may_select: bool,
    /// A partitioned table's first partitions (at most 4), for the refusal.
    partitions: Vec<String>,
    rls_filters: bool,
    /// Its inheritance children.
    children: Vec<TableName>,
}

/// `n` in the source's catalog; refused, naming the closest table there, when there is none.
async fn find_table(c: &Client, n: &TableName, source: &str) -> Result<Found, ImportError> {
    let row = c
        .query_opt(
            "SELECT c.oid, c.relkind::text, has_table_privilege(c.oid, 'SELECT'),
                    ARRAY(SELECT i.inhrelid::regclass::text FROM pg_inherits i WHERE i.inhparent = c.oid ORDER BY 1 LIMIT 4),
                    c.relrowsecurity
                      AND NOT (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
                      AND (c.relforcerowsecurity OR NOT pg_has_role(c.relowner, 'USAGE')),
                    ARRAY(SELECT cn.nspname::text FROM pg_inherits i JOIN pg_class ch ON ch.oid = i.inhrelid
                            JOIN pg_namespace cn ON cn.oid = ch.relnamespace WHERE i.inhparent = c.oid ORDER BY i.inhrelid),
                    ARRAY(SELECT ch.relname::text FROM pg_inherits i JOIN pg_class ch ON ch.oid = i.inhrelid
                           WHERE i.inhparent = c.oid ORDER BY i.inhrelid)
               FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
              WHERE ns.nspname = $1 AND c.relname = $2",
            &[&n.schema, &n.name],
        )
        .await
        .map_err(query_failed)?;
    let Some(row) = row else {
        let hint = crate::sql::names::closest(c, n)
            .await
            .map_err(query_failed)?;
        return Err(ImportError::Refused(format!(
            "there is no table {n} on the source ({source}){hint}"
        )));
    };
    let (schemas, child_names): (Vec<String>, Vec<String>) = (row.get(5), row.get(6));
    Ok(Found {
        oid: row.get(0),
        kind: row.get(1),
        may_select: row.get(2),
        partitions: row.get(3),
        rls_filters: row.get(4),
        children: schemas
            .iter()
            .zip(&child_names)
            .map(|(s, t)| TableName::new(s, t))
            .collect(),
    })
}

/// Refused unless `found` is a table (plain or unlogged): a view, an index, … say what they
/// are, a partitioned table names its partitions to import instead.
fn refuse_not_a_table(n: &TableName, found: &Found) -> Result<(), ImportError> {
    let what = match found.kind.as_str() {
        "r" | "u" => None,
        "v" => Some("a view"),
        "m" => Some("a materialized view"),
        "f" => Some("a foreign table"),
        "S" => Some("a sequence"),
        "i" | "I" => Some("an index"),
        "p" => {
            let parts = &found.partitions;
            return Err(ImportError::Refused(format!(
                "{n} is partitioned: import its partitions as tables instead ({}{})",
                parts.join(", "),
                if parts.len() >= 4 { ", …" } else { "" }
            )));
        }
        _ => Some("not a table"),
    };
    if let Some(what) = what {
        return Err(ImportError::Refused(format!(
            "{n} is {what} on the source, not a table: pglab imports tables"
        )));
    }
    Ok(())
}

/// Refused, with the GRANT that would allow it, when `user` may not read `n`.
fn refuse_without_select(n: &TableName, user: &str, found: &Found) -> Result<(), ImportError> {
    if !found.may_select {
        return Err(ImportError::Refused(format!(
            "no permission: the role {user} may not read {n} on the source (it needs SELECT: GRANT SELECT ON {} TO {})",
            n.sql(),
            crate::sql::quote::ident(user)
        )));
    }
    Ok(())
}

/// Refused when a named parent's children are not all named too ([`inheritance_refusal`]).
fn refuse_partial_inheritance(
    parents: Vec<(TableName, Vec<TableName>)>,
    user: &str,
    names: &[TableName],
) -> Result<(), ImportError> {
    for (parent, children) in parents {
        let r = Readable {
            name: &parent,
            user,
            rls_filters: false,
            children,
        };
        if let Some(why) = inheritance_refusal(&r, names) {
            return Err(ImportError::Refused(why));
        }
    }
    Ok(())
}

/// Open the import's snapshot: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`, lock the
/// tables in `ACCESS SHARE` mode without waiting, and read what the plan needs. The
/// transaction stays open until the caller ends it with [`end`].
pub async fn begin(
    c: &Client,
    tables: &[(TableName, u32)],
    target: &str,
) -> Result<SourceInfo, ImportError> {
    let failed = |e: tokio_postgres::Error| ImportError::Failed(describe_query_error(&e));
    c.batch_execute(&format!(
        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {}",
        super::source_guard::session_settings()
    ))
    .await
    .map_err(failed)?;
    let list: Vec<String> = tables.iter().map(|(n, _)| n.sql()).collect();
    if let Err(e) = c
        .batch_execute(&format!(
            "LOCK TABLE {} IN ACCESS SHARE MODE",
            list.join(", ")
        ))
        .await
    {
        let _ = c.batch_execute("ROLLBACK").await;
        if sqlstate(&e) == Some("55P03") {
            let oids: Vec<u32> = tables.iter().map(|(_, o)| *o).collect();
            return Err(ImportError::Refused(lock_wait_sentence(c, &oids).await));
        }
        return Err(failed(e));
    }
    let r = c
        .query_one(
            "SELECT now(), current_setting('server_version'), current_setting('server_version_num')::int,
                    current_schemas(false)::text[], current_database()::text,
                    (SELECT datcollate::text FROM pg_database WHERE datname = current_database()),
                    current_setting('DateStyle'), current_setting('IntervalStyle'),
                    has_function_privilege('pg_control_system()', 'EXECUTE')",
            &[],
        )
        .await
        .map_err(failed)?;
    let system_identifier = if r.get::<_, bool>(8) {
        c.query_one(
            "SELECT system_identifier::text FROM pg_control_system()",
            &[],
        )
        .await
        .map_err(failed)?
        .get(0)
    } else {
        None
    };
    let extensions = c
        .query(
            "SELECT e.extname::text, n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace",
            &[],
        )
        .await
        .map_err(failed)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(SourceInfo {
        fingerprint: SourceFingerprint {
            target: target.to_string(),
            version: r.get(1),
            system_identifier,
            database: r.get(4),
        },
        version_num: r.get(2),
        search_path: r.get(3),
        collate: r.get(5),
        extensions,
        datestyle: r.get(6),
        intervalstyle: r.get(7),
        snapshot_at: r.get(0),
    })
}

/// End the snapshot (nothing was written, so commit and rollback are the same to the source).
pub async fn end(c: &Client) {
    if let Err(e) = c.batch_execute("COMMIT").await {
        tracing::warn!("ending the source's transaction: {e}");
    }
}
