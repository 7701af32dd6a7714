//! Finding and dropping what runs left behind: every pglab table carries a `pglab:` comment,
//! every live run holds an advisory lock, so a table whose run holds no lock is a leftover.
//! Unmarked objects are never listed or touched, and neither are tables imported into the
//! sandbox (`pglab:imported …`, see [`crate::sql::imported`]): they are the user's data,
//! whatever schema they live in.

use tokio_postgres::Client;

use crate::server::error::describe_query_error;
use crate::sql::lab::MARK;
use crate::sql::quote::ident;

/// The relation kinds pglab marks and drops: tables, and (from a query run's setup) views,
/// materialized views and sequences. Views come first: they may depend on the tables.
const MARKED_KINDS: &str = "c.relkind IN ('r', 'p', 'u', 'v', 'm', 'S')";
const KIND_ORDER: &str =
    "CASE c.relkind WHEN 'v' THEN 0 WHEN 'm' THEN 1 WHEN 'S' THEN 3 ELSE 2 END";

/// The `DROP` for a relation of kind `relkind` (`pg_class.relkind`).
pub(super) fn drop_sql(relkind: i8, schema: &str, name: &str) -> String {
    let what = match relkind as u8 {
        b'i' | b'I' => "INDEX",
        b'v' => "VIEW",
        b'm' => "MATERIALIZED VIEW",
        b'S' => "SEQUENCE",
        _ => "TABLE",
    };
    format!("DROP {what} IF EXISTS {}.{}", ident(schema), ident(name))
}

/// Drop tables (and views, materialized views, sequences) in `schema` whose comment is LIKE
/// `pattern` (always a pglab mark).
pub(crate) async fn drop_marked(
    client: &Client,
    schema: &str,
    pattern: &str,
) -> Result<Vec<String>, String> {
    if !pattern.starts_with(MARK) {
        return Err("refusing to drop objects that are not marked as pglab's".into());
    }
    let rows = client
        .query(
            &format!(
                "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1 AND {MARKED_KINDS}
                    AND obj_description(c.oid, 'pg_class') LIKE $2
                  ORDER BY {KIND_ORDER}, c.relname"
            ),
            &[&schema, &pattern],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    let mut dropped = Vec::new();
    for r in rows {
        let name: String = r.get(0);
        client
            .batch_execute(&drop_sql(r.get(1), schema, &name))
            .await
            .map_err(|e| describe_query_error(&e))?;
        dropped.push(name);
    }
    Ok(dropped)
}

/// The advisory-lock class pglab's runs hold (`'pglb'`): a run holds
/// `pg_advisory_lock(LOCK_CLASS, hashtext(run_id))` on its control session for its whole life,
/// so `pglab clean` can tell a live run's tables from an interrupted one's.
pub(crate) const LOCK_CLASS: i32 = 0x70676c62;

/// Take the run's advisory lock on `client` (held until that session ends).
pub async fn hold_run_lock(client: &Client, run_id: &str) -> Result<(), String> {
    client
        .query_one(
            "SELECT pg_advisory_lock($1, hashtext($2))",
            &[&LOCK_CLASS, &run_id],
        )
        .await
        .map(|_| ())
        .map_err(|e| describe_query_error(&e))
}

/// Whether run `run_id` is still alive: its advisory lock is held. (A free lock is taken and
/// released at once; an error counts as alive, so nothing of a live run is ever dropped.)
pub(crate) async fn run_is_live(client: &Client, run_id: &str) -> bool {
    let got: bool = client
        .query_one(
            "SELECT pg_catalog.pg_try_advisory_lock($1, pg_catalog.hashtext($2))",
            &[&LOCK_CLASS, &run_id],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(false);
    if got {
        let _ = client
            .query_one(
                "SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))",
                &[&LOCK_CLASS, &run_id],
            )
            .await;
    }
    !got
}

/// What a marked object in the lab schema is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabObjectKind {
    /// A table of one run (dropped when the run ends; left over only if pglab died).
    RunTable,
    /// A reusable dataset (index-build input) kept between runs.
    Dataset,
    /// An index on a pglab dataset left by an interrupted build.
    Index,
}

/// A pglab-marked table in the lab schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LabObject {
    pub name: String,
    pub kind: LabObjectKind,
    pub run_id: Option<String>,
    pub bytes: i64,
    /// True when the run that made it is still running (its advisory lock is held).
    pub live: bool,
    pub comment: String,
}

/// Every pglab-marked table in `schema`. Unmarked tables are never listed (or touched).
pub async fn lab_objects(client: &Client, schema: &str) -> Result<Vec<LabObject>, String> {
    let rows = client
        .query(
            &format!(
                "SELECT c.relname::text, obj_description(c.oid, 'pg_class'), pg_total_relation_size(c.oid)
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1 AND {MARKED_KINDS}
                    AND obj_description(c.oid, 'pg_class') LIKE 'pglab:%'
                    AND obj_description(c.oid, 'pg_class') NOT LIKE 'pglab:imported %'
                  ORDER BY {KIND_ORDER}, 1"
            ),
            &[&schema],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    let mut out = Vec::new();
    // Indexes on pglab's tables are pglab's; between runs there should be none.
    let any_live: bool = client
        .query_one(
            "SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::int::oid AND granted",
            &[&LOCK_CLASS],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(true);
    for r in client
        .query(
            "SELECT i.relname::text, t.relname::text, pg_relation_size(i.oid)
               FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
               JOIN pg_namespace n ON n.oid = t.relnamespace
              WHERE n.nspname = $1 AND obj_description(t.oid, 'pg_class') LIKE 'pglab:dataset%'",
            &[&schema],
        )
        .await
        .map_err(|e| describe_query_error(&e))?
    {
        let table: String = r.get(1);
        // Dropped since the scan (see below): gone, not left.
        let Some(bytes) = r.get::<_, Option<i64>>(2) else {
            continue;
        };
        out.push(LabObject {
            name: r.get(0),
            kind: LabObjectKind::Index,
            run_id: None,
            bytes,
            live: any_live,
            comment: format!("index on pglab dataset {table}"),
        });
    }
    for r in rows {
        // A table dropped (by its own run) between the catalog scan and the size has no
        // size any more: it is gone, not a leftover.
        let Some(bytes) = r.get::<_, Option<i64>>(2) else {
            continue;
        };
        let comment: String = r.get::<_, Option<String>>(1).unwrap_or_default();
        let run_id = comment
            .strip_prefix(&format!("{MARK}run="))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string);
        let kind = if run_id.is_some() {
            LabObjectKind::RunTable
        } else {
            LabObjectKind::Dataset
        };
        let live = match &run_id {
            Some(id) => run_is_live(client, id).await,
            None => false,
        };
        out.push(LabObject {
            name: r.get(0),
            kind,
            run_id,
            bytes,
            live,
            comment,
        });
    }
    Ok(out)
}

/// Drop the given tables, each only if it still carries a pglab mark (on Citus, then the
/// deferred shard drops as [`citus_cleanup`] allows; its sentence goes to the log).
pub async fn drop_objects(
    client: &Client,
    schema: &str,
    objects: &[LabObject],
) -> Result<Vec<String>, String> {
    let (dropped, note) = drop_leftovers(client, schema, objects).await?;
    if let Some(n) = note {
        tracing::info!("{n}");
    }
    Ok(dropped)
}

/// [`drop_objects`], with what [`citus_cleanup`] had to say.
pub async fn drop_leftovers(
    client: &Client,
    schema: &str,
    objects: &[LabObject],
) -> Result<(Vec<String>, Option<String>), String> {
    let mut dropped = Vec::new();
    for o in objects {
        let still_marked: Option<i8> = client
            .query_opt(
                "SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1 AND c.relname = $2 AND obj_description(c.oid, 'pg_class') LIKE 'pglab:%'
                    AND obj_description(c.oid, 'pg_class') NOT LIKE 'pglab:imported %'",
                &[&schema, &o.name],
            )
            .await
            .map_err(|e| describe_query_error(&e))?
            .map(|r| r.get(0));
        if o.kind == LabObjectKind::Index {
            // Only an index on a table that carries a pglab dataset mark.
            let on_dataset = client
                .query_opt(
                    "SELECT 1 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
                       JOIN pg_namespace n ON n.oid = i.relnamespace
                      WHERE n.nspname = $1 AND i.relname = $2 AND obj_description(t.oid, 'pg_class') LIKE 'pglab:dataset%'",
                    &[&schema, &o.name],
                )
                .await
                .map_err(|e| describe_query_error(&e))?
                .is_some();
            if on_dataset {
                client
                    .batch_execute(&format!(
                        "DROP INDEX IF EXISTS {}.{}",
                        ident(schema),
                        ident(&o.name)
                    ))
                    .await
                    .map_err(|e| describe_query_error(&e))?;
                dropped.push(o.name.clone());
            }
            continue;
        }
        if let Some(kind) = still_marked {
            client
                .batch_execute(&drop_sql(kind, schema, &o.name))
                .await
                .map_err(|e| describe_query_error(&e))?;
            dropped.push(o.name.clone());
        }
    }
    let note = if dropped.is_empty() {
        None
    } else {
        citus_cleanup(client, schema).await
    };
    Ok((dropped, note))
}

/// The lab schema as the catalog has it: None when it does not exist, else its comment (a
/// schema pglab created carries a `pglab:` mark).
pub async fn schema_comment(client: &Client, schema: &str) -> Result<Option<String>, String> {
    let row = client
        .query_opt(
            "SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    Ok(row.map(|r| r.get(0)))
}

/// Everything in `schema` that is not pglab's, as the catalog describes it ("view pglab.v",
/// "function pglab.f()"): every object that depends on the schema itself, except
/// pglab-marked tables and the sequences such a table owns. Indexes and row types go with
/// their tables and are not listed.
pub async fn foreign_objects(client: &Client, schema: &str) -> Result<Vec<String>, String> {
    let rows = client
        .query(
            "SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
               FROM pg_depend d JOIN pg_namespace n ON n.oid = d.refobjid
              WHERE d.refclassid = 'pg_namespace'::regclass AND n.nspname = $1 AND d.deptype = 'n'
                AND NOT (d.classid = 'pg_class'::regclass AND (
                      coalesce(obj_description(d.objid, 'pg_class'), '') LIKE 'pglab:%'
                   OR EXISTS (SELECT 1 FROM pg_depend o
                               WHERE o.classid = 'pg_class'::regclass AND o.objid = d.objid
                                 AND o.refclassid = 'pg_class'::regclass AND o.deptype IN ('a', 'i')
                                 AND coalesce(obj_description(o.refobjid, 'pg_class'), '') LIKE 'pglab:%')))
              ORDER BY 1",
            &[&schema],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    Ok(rows.into_iter().map(|r| r.get(0)).collect())
}

/// Drop the (emptied) lab schema: RESTRICT, so anything that appeared since it was checked
/// makes the drop fail rather than go with it.
pub async fn drop_schema(client: &Client, schema: &str) -> Result<(), String> {
    client
        .batch_execute(&format!("DROP SCHEMA {} RESTRICT", ident(schema)))
        .await
        .map_err(|e| describe_query_error(&e))
}

/// On a Citus coordinator: remove now the shards whose removal Citus deferred (a shard left
/// by an interrupted `create_distributed_table` or move is only recorded for cleanup), so
/// that after `pglab clean` nothing of pglab's is left on any worker — but only when every
/// pending record in `pg_dist_cleanup` is pglab's own (a shard of a table in the lab schema):
/// `citus_cleanup_orphaned_resources()` acts on them all, and the others are not pglab's to
/// touch. Then Citus's maintenance daemon removes them all in the background, and the
/// sentence returned says so. A no-op (None) elsewhere or with nothing pending.
pub(crate) async fn citus_cleanup(client: &Client, schema: &str) -> Option<String> {
    let citus = client
        .query_opt(
            "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus'",
            &[],
        )
        .await
        .ok()
        .flatten()
        .is_some();
    if !citus {
        return None;
    }
    // Shard names are qualified: `schema.table_102008`, or `"Schema".…` when quoting is needed.
    let counts = client
        .query_one(
            "SELECT count(*) FILTER (WHERE object_type = 1 AND (starts_with(object_name, $1) OR starts_with(object_name, $2))),
                    count(*)
               FROM pg_catalog.pg_dist_cleanup",
            &[&format!("{schema}."), &format!("{}.", ident(schema))],
        )
        .await;
    let (ours, all): (i64, i64) = match counts {
        Ok(r) => (r.get(0), r.get(1)),
        Err(e) => {
            tracing::warn!("pg_dist_cleanup cannot be read ({e}): Citus cleans up on its own");
            return None;
        }
    };
    if all == 0 {
        return None;
    }
    if ours < all {
        return Some(format!(
            "{} cleanup record{} in pg_dist_cleanup {} not pglab's: pglab leaves {} (and its own {ours}) to Citus, which removes them in the background (citus.defer_shard_delete_interval)",
            all - ours,
            if all - ours == 1 { "" } else { "s" },
            if all - ours == 1 { "is" } else { "are" },
            if all - ours == 1 { "it" } else { "them" },
        ));
    }
    match client
        .batch_execute("CALL pg_catalog.citus_cleanup_orphaned_resources()")
        .await
    {
        Ok(()) => None,
        Err(e) => {
            tracing::warn!("citus_cleanup_orphaned_resources: {e}");
            None
        }
    }
}
