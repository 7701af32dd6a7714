//! The source's own types behind the imported columns: enums and domains pglab recreates,
//! extension types it can bring with their extension, and the kinds it cannot recreate
//! (composite, range, base types written in C), each read inside the import's snapshot.

use std::collections::BTreeMap;

use tokio_postgres::Client;

use super::catalog::{Dependency, FIRST_USER_OID, dependencies};
use crate::sql::names::TableName;

/// What a non-built-in type is.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeKind {
    /// An enum's labels in their sort order.
    Enum(Vec<String>),
    Domain(Domain),
    /// A type that belongs to an extension (created with the extension).
    Extension(String),
    /// Composite, range, multirange or a base type outside an extension: the sentence's noun.
    Unsupported(&'static str),
}

/// A domain: base type, NOT NULL, default and CHECK constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    pub base_oid: u32,
    /// `format_type(typbasetype, typtypmod)`.
    pub base_sql: String,
    pub not_null: bool,
    pub default: Option<String>,
    /// (name, `pg_get_constraintdef`, the constraint's non-built-in dependencies).
    pub checks: Vec<(String, String, Vec<Dependency>)>,
}

/// A non-built-in type.
#[derive(Debug, Clone, PartialEq)]
pub struct UserType {
    pub oid: u32,
    pub name: TableName,
    pub kind: TypeKind,
}

impl UserType {
    /// The types this one needs first (a domain's base).
    pub fn needs(&self) -> Option<u32> {
        match &self.kind {
            TypeKind::Domain(d) if d.base_oid >= FIRST_USER_OID => Some(d.base_oid),
            _ => None,
        }
    }
}

/// The non-built-in types the columns use, arrays resolved to their elements and domains to
/// their bases too, by oid.
pub async fn read_types(
    c: &Client,
    column_types: &[u32],
) -> Result<BTreeMap<u32, UserType>, String> {
    let q = |e: tokio_postgres::Error| crate::server::error::describe_query_error(&e);
    let rows = c
        .query(
            "WITH RECURSIVE ts(oid) AS (
                 SELECT unnest($1::oid[])
                 UNION
                 SELECT v.x FROM ts JOIN pg_type t ON t.oid = ts.oid,
                        LATERAL (VALUES (CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE 0 END),
                                        (t.typbasetype)) v(x)
                  WHERE v.x <> 0)
             SELECT t.oid, n.nspname::text, t.typname::text, t.typtype::text, t.typcategory::text,
                    t.typbasetype, format_type(t.typbasetype, t.typtypmod), t.typnotnull, t.typdefault,
                    e.extname::text
               FROM ts JOIN pg_type t ON t.oid = ts.oid JOIN pg_namespace n ON n.oid = t.typnamespace
               LEFT JOIN pg_depend d ON d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e'
               LEFT JOIN pg_extension e ON e.oid = d.refobjid
              WHERE t.oid >= $2",
            &[&column_types, &FIRST_USER_OID],
        )
        .await
        .map_err(q)?;
    let mut out = BTreeMap::new();
    for r in rows {
        let oid: u32 = r.get(0);
        let typtype: String = r.get(3);
        let category: String = r.get(4);
        let extension: Option<String> = r.get(9);
        // An array of a user type stands for its element, which the recursion brought in.
        if category == "A" && extension.is_none() {
            continue;
        }
        let name = TableName::new(&r.get::<_, String>(1), &r.get::<_, String>(2));
        let kind = match (extension, typtype.as_str()) {
            (Some(ext), _) => TypeKind::Extension(ext),
            (None, "e") => TypeKind::Enum(labels(c, oid).await.map_err(q)?),
            (None, "d") => {
                let mut checks = Vec::new();
                for k in c
                    .query(
                        "SELECT oid, conname::text, pg_get_constraintdef(oid) FROM pg_constraint
                          WHERE contypid = $1 AND contype = 'c' ORDER BY conname",
                        &[&oid],
                    )
                    .await
                    .map_err(q)?
                {
                    let con: u32 = k.get(0);
                    let deps = dependencies(c, "pg_constraint", con, 0)
                        .await
                        .map_err(q)?
                        .into_iter()
                        .filter(|d| !(d.catalog == "pg_type" && d.oid == oid))
                        .collect();
                    checks.push((k.get(1), k.get(2), deps));
                }
                TypeKind::Domain(Domain {
                    base_oid: r.get(5),
                    base_sql: r.get(6),
                    not_null: r.get(7),
                    default: r.get(8),
                    checks,
                })
            }
            (None, "c") => TypeKind::Unsupported("composite type"),
            (None, "r") => TypeKind::Unsupported("range type"),
            (None, "m") => TypeKind::Unsupported("multirange type"),
            (None, "p") => TypeKind::Unsupported("pseudo-type"),
            (None, _) => TypeKind::Unsupported("base type defined outside any extension"),
        };
        out.insert(oid, UserType { oid, name, kind });
    }
    Ok(out)
}

async fn labels(c: &Client, oid: u32) -> Result<Vec<String>, tokio_postgres::Error> {
    Ok(c.query(
        "SELECT enumlabel::text FROM pg_enum WHERE enumtypid = $1 ORDER BY enumsortorder",
        &[&oid],
    )
    .await?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// The same type as the sandbox has it (by name), for "reuse or replace": an enum's labels,
/// a domain's base and constraints in the same text form. None when there is no such type.
pub async fn sandbox_twin(c: &Client, t: &UserType) -> Result<Option<TypeKind>, String> {
    let q = |e: tokio_postgres::Error| crate::server::error::describe_query_error(&e);
    let Some(r) = c
        .query_opt(
            "SELECT t.oid, t.typtype::text, format_type(t.typbasetype, t.typtypmod), t.typnotnull, t.typdefault
               FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
              WHERE n.nspname = $1 AND t.typname = $2",
            &[&t.name.schema, &t.name.name],
        )
        .await
        .map_err(q)?
    else {
        return Ok(None);
    };
    let oid: u32 = r.get(0);
    let typtype: String = r.get(1);
    Ok(Some(match typtype.as_str() {
        "e" => TypeKind::Enum(labels(c, oid).await.map_err(q)?),
        "d" => {
            let checks = c
                .query(
                    "SELECT conname::text, pg_get_constraintdef(oid) FROM pg_constraint
                      WHERE contypid = $1 AND contype = 'c' ORDER BY conname",
                    &[&oid],
                )
                .await
                .map_err(q)?
                .iter()
                .map(|k| (k.get(0), k.get(1), Vec::new()))
                .collect();
            TypeKind::Domain(Domain {
                base_oid: 0,
                base_sql: r.get(2),
                not_null: r.get(3),
                default: r.get(4),
                checks,
            })
        }
        _ => TypeKind::Unsupported("type"),
    }))
}

/// True when the sandbox's type is the source's (same labels, or same domain definition).
pub(crate) fn same_definition(source: &TypeKind, sandbox: &TypeKind) -> bool {
    match (source, sandbox) {
        (TypeKind::Enum(a), TypeKind::Enum(b)) => a == b,
        (TypeKind::Domain(a), TypeKind::Domain(b)) => {
            a.base_sql == b.base_sql
                && a.not_null == b.not_null
                && a.default == b.default
                && a.checks.len() == b.checks.len()
                && a.checks
                    .iter()
                    .zip(&b.checks)
                    .all(|(x, y)| x.0 == y.0 && x.1 == y.1)
        }
        _ => false,
    }
}
