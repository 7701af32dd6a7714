//! pglab's objects outside the lab schema: an index-build on the user's own table builds
//! its trial index beside that table (in any schema), marked `pglab:run=ID …` in the
//! transaction that creates it. A run killed between two builds leaves that index; once the
//! run's advisory lock is free, `pglab clean` lists and drops it. Only objects carrying a
//! run's mark are ever considered.

use tokio_postgres::Client;

use super::leftovers::{drop_sql, run_is_live};
use crate::server::error::describe_query_error;

/// A run-marked relation outside the lab schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elsewhere {
    pub schema: String,
    pub name: String,
    /// `pg_class.relkind`.
    pub relkind: i8,
    pub run_id: String,
    pub bytes: i64,
    /// Its run is still going (its advisory lock is held).
    pub live: bool,
    pub comment: String,
}

/// The `pglab:run=ID` prefix of a run's mark, and the run id it names.
fn run_of(comment: &str) -> Option<String> {
    comment
        .strip_prefix(&format!("{}run=", crate::sql::lab::MARK))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
}

/// Every run-marked relation in a schema other than `lab_schema` (system schemas left out),
/// indexes first.
pub async fn marked_elsewhere(c: &Client, lab_schema: &str) -> Result<Vec<Elsewhere>, String> {
    let rows = c
        .query(
            "SELECT n.nspname::text, c.relname::text, c.relkind, obj_description(c.oid, 'pg_class'),
                    pg_total_relation_size(c.oid)
               FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname <> $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                AND n.nspname NOT LIKE 'pg\\_%'
                AND obj_description(c.oid, 'pg_class') LIKE 'pglab:run=%'
              ORDER BY c.relkind <> 'i', 1, 2",
            &[&lab_schema],
        )
        .await
        .map_err(|e| describe_query_error(&e))?;
    let mut out = Vec::new();
    for r in rows {
        // Dropped by its own run since the scan: no comment or size any more, and not left.
        let (Some(comment), Some(bytes)) =
            (r.get::<_, Option<String>>(3), r.get::<_, Option<i64>>(4))
        else {
            continue;
        };
        let Some(run_id) = run_of(&comment) else {
            continue;
        };
        out.push(Elsewhere {
            schema: r.get(0),
            name: r.get(1),
            relkind: r.get(2),
            live: run_is_live(c, &run_id).await,
            run_id,
            bytes,
            comment,
        });
    }
    Ok(out)
}

/// Drop each object that still carries the same mark and whose run is gone; their
/// `schema.name`.
pub async fn drop_elsewhere(c: &Client, objects: &[Elsewhere]) -> Result<Vec<String>, String> {
    let mut dropped = Vec::new();
    for o in objects {
        let same: bool = c
            .query_one(
                "SELECT coalesce(bool_or(obj_description(c.oid, 'pg_class') = $3), false)
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = $1 AND c.relname = $2",
                &[&o.schema, &o.name, &o.comment],
            )
            .await
            .map_err(|e| describe_query_error(&e))?
            .get(0);
        if !same || run_is_live(c, &o.run_id).await {
            continue;
        }
        c.batch_execute(&drop_sql(o.relkind, &o.schema, &o.name))
            .await
            .map_err(|e| describe_query_error(&e))?;
        // Named as the dry run names it, so a DBA can match the two lists.
        dropped.push(format!("{}.{}", o.schema, o.name));
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_runs_mark_names_a_run() {
        assert_eq!(
            run_of("pglab:run=20261203T153757Z-0f24 index-build trial index on public.t"),
            Some("20261203T153757Z-0f24".into())
        );
        assert_eq!(run_of("pglab:dataset ib_x"), None);
        assert_eq!(run_of("my own index"), None);
    }
}
