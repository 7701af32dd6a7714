//! What the plan needs to know about the sandbox: its version, extensions and collations,
//! the tables an import replaces and what else refers to them, and the statements that swap
//! the staged objects in at the end.

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use super::catalog::SourceTable;
use super::plan::{Planner, TypeAction};
use super::{ImportError, SourceInfo};
use crate::sql::names::TableName;
use crate::sql::quote::ident;

/// What the sandbox already has that the plan depends on.
pub struct SandboxFacts {
    pub version_num: i32,
    pub available_extensions: BTreeSet<String>,
    pub installed_extensions: BTreeMap<String, String>,
    /// The sandbox collation matching the source database's (None: the same or none found).
    pub default_collation: Option<String>,
}

impl SandboxFacts {
    pub async fn read(c: &Client, source: &SourceInfo) -> Result<SandboxFacts, String> {
        let q = |e: tokio_postgres::Error| crate::server::error::describe_query_error(&e);
        let version_num: i32 = c
            .query_one("SELECT current_setting('server_version_num')::int", &[])
            .await
            .map_err(q)?
            .get(0);
        let available_extensions = c
            .query("SELECT name::text FROM pg_available_extensions", &[])
            .await
            .map_err(q)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let installed_extensions = c
            .query(
                "SELECT e.extname::text, n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace",
                &[],
            )
            .await
            .map_err(q)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let ours: String = c
            .query_one(
                "SELECT datcollate::text FROM pg_database WHERE datname = current_database()",
                &[],
            )
            .await
            .map_err(q)?
            .get(0);
        let plain = |s: &str| matches!(s, "C" | "POSIX" | "");
        let default_collation = if source.collate == ours || plain(&source.collate) {
            None
        } else {
            c.query_opt(
                "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.collname) FROM pg_collation c
                   JOIN pg_namespace n ON n.oid = c.collnamespace
                  WHERE c.collprovider = 'c'
                    AND lower(replace(c.collcollate, '-', '')) = lower(replace($1, '-', ''))
                    AND c.collencoding IN (-1, pg_char_to_encoding('UTF8'))
                  ORDER BY c.collencoding DESC LIMIT 1",
                &[&source.collate],
            )
            .await
            .map_err(q)?
            .map(|r| r.get(0))
        };
        Ok(SandboxFacts {
            version_num,
            available_extensions,
            installed_extensions,
            default_collation,
        })
    }
}

/// Tables of these names the sandbox has now (they will be replaced), with what else
/// depends on them there.
pub(super) async fn existing_tables(
    c: &Client,
    names: &BTreeSet<&TableName>,
) -> Result<BTreeMap<TableName, u32>, String> {
    let mut out = BTreeMap::new();
    for n in names {
        if let Some(r) = c
            .query_opt(
                "SELECT c.oid FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
                  WHERE ns.nspname = $1 AND c.relname = $2",
                &[&n.schema, &n.name],
            )
            .await
            .map_err(|e| crate::server::error::describe_query_error(&e))?
        {
            out.insert((*n).clone(), r.get(0));
        }
    }
    Ok(out)
}

/// What in the sandbox, besides the tables this import replaces, refers to one of them:
/// another table's foreign key is dropped with the old table (a note says so; the returned
/// statements do it); a view is a reason to refuse, since pglab does not drop the user's
/// views.
pub(super) async fn outside_references(
    c: &Client,
    replaced: &BTreeMap<TableName, u32>,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, ImportError> {
    let failed = |e: tokio_postgres::Error| {
        ImportError::Failed(crate::server::error::describe_query_error(&e))
    };
    let oids: Vec<u32> = replaced.values().copied().collect();
    let views: Vec<String> = c
        .query(
            "SELECT DISTINCT v.oid::regclass::text FROM pg_depend d
               JOIN pg_rewrite r ON r.oid = d.objid JOIN pg_class v ON v.oid = r.ev_class
              WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = ANY($1) AND NOT v.oid = ANY($1)
              ORDER BY 1",
            &[&oids],
        )
        .await
        .map_err(failed)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !views.is_empty() {
        return Err(ImportError::Refused(format!(
            "the sandbox's {} {} {} on a table this import replaces: drop {} first, then import again",
            if views.len() == 1 { "view" } else { "views" },
            views.join(", "),
            if views.len() == 1 {
                "depends"
            } else {
                "depend"
            },
            if views.len() == 1 { "it" } else { "them" }
        )));
    }
    let mut out = Vec::new();
    for r in c
        .query(
            "SELECT conrelid::regclass::text, conname::text, confrelid::regclass::text FROM pg_constraint
              WHERE contype = 'f' AND confrelid = ANY($1) AND NOT conrelid = ANY($1) ORDER BY 1, 2",
            &[&oids],
        )
        .await
        .map_err(failed)?
    {
        let (table, name, refd): (String, String, String) = (r.get(0), r.get(1), r.get(2));
        notes.push(format!(
            "the sandbox's {table} loses its foreign key {name}: it references {refd}, which this import replaces (import {table} again with it to keep the key)"
        ));
        out.push(format!("ALTER TABLE {table} DROP CONSTRAINT {}", ident(&name)));
    }
    Ok(out)
}

impl Planner<'_> {
    /// At the end: drop the replaced tables and types, move the staged ones in.
    pub(super) fn swap_statements(
        &self,
        tables: &[SourceTable],
        replaced: &BTreeMap<TableName, u32>,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for t in tables.iter().filter(|t| replaced.contains_key(&t.name)) {
            out.push(format!("DROP TABLE {}", t.name.sql()));
        }
        for (oid, a) in &self.type_actions {
            if *a == TypeAction::Replace {
                let t = &self.types[oid];
                out.push(format!("DROP TYPE {}", t.name.sql()));
                out.push(format!(
                    "ALTER TYPE {} SET SCHEMA {}",
                    t.name.in_schema(self.staging).sql(),
                    ident(&t.name.schema)
                ));
            }
        }
        for t in tables {
            out.push(format!(
                "ALTER TABLE {} SET SCHEMA {}",
                t.name.in_schema(self.staging).sql(),
                ident(&t.name.schema)
            ));
        }
        out.push(format!("DROP SCHEMA {}", ident(self.staging)));
        out
    }
}
