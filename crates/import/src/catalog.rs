//! What the source's catalog says about a table, read inside the import's snapshot: its
//! columns, constraints, indexes, foreign keys, sequences and the non-built-in objects each
//! of them depends on. Reads only; nothing here decides what to recreate (see
//! [`super::plan`]).

use std::collections::BTreeMap;

use tokio_postgres::Client;

use crate::sql::names::TableName;

/// Object ids below this are PostgreSQL's own (created by initdb): they exist in any cluster
/// of the same major version.
pub(crate) const FIRST_USER_OID: u32 = 16384;

/// A column of a source table.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub type_oid: u32,
    /// `format_type(atttypid, atttypmod)`: `character varying(20)`, `status[]`.
    pub type_sql: String,
    /// The element type when the column is an array.
    pub array_of: Option<u32>,
    pub not_null: bool,
    /// The default expression (`pg_get_expr`) and the `pg_attrdef` row it lives in.
    pub default: Option<(u32, String)>,
    /// `a` (always) or `d` (by default) for an identity column.
    pub identity: Option<char>,
    /// A stored generated column's expression (its `pg_attrdef` row and text).
    pub generated: Option<(u32, String)>,
    /// An explicit collation other than the type's, qualified.
    pub collation: Option<String>,
    /// The type is collatable and the column uses the database's default collation.
    pub default_collation: bool,
}

/// A primary key, unique, check or exclusion constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    pub oid: u32,
    pub name: String,
    /// `p`, `u`, `c` or `x`.
    pub kind: char,
    /// `pg_get_constraintdef`: `PRIMARY KEY (id)`, `CHECK ((qty > 0))`.
    pub def: String,
    pub validated: bool,
    /// The index behind a key or exclusion constraint (0 for a check).
    pub index_oid: u32,
    /// The tablespace of that index when it is not the default one.
    pub index_tablespace: Option<String>,
}

/// An index that backs no constraint.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    pub oid: u32,
    pub name: String,
    /// `pg_get_indexdef`.
    pub def: String,
    pub valid: bool,
}

/// A foreign key, in parts so it can be pointed at the imported copy of the table it
/// references.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKey {
    pub name: String,
    pub columns: Vec<String>,
    pub references: TableName,
    pub ref_columns: Vec<String>,
    /// `confupdtype`, `confdeltype`, `confmatchtype`.
    pub on_update: char,
    pub on_delete: char,
    pub match_type: char,
    pub deferrable: bool,
    pub deferred: bool,
}

/// A sequence a column takes its values from (serial or identity).
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    pub oid: u32,
    pub name: TableName,
    /// `CREATE SEQUENCE` options: `AS bigint INCREMENT BY 1 …`.
    pub options: String,
    /// The source's `last_value` when pglab may read it.
    pub last_value: Option<i64>,
}

/// A non-built-in object something depends on (a function a default calls, an operator
/// class an index uses, a sequence, a type).
#[derive(Debug, Clone, PartialEq)]
pub struct Dependency {
    /// The catalog of the referenced object: `pg_proc`, `pg_type`, `pg_class`, …
    pub catalog: String,
    pub oid: u32,
    /// `pg_describe_object`: "function public.f(integer)".
    pub what: String,
    /// The extension the object belongs to.
    pub extension: Option<String>,
}

/// Everything about one source table.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceTable {
    pub name: TableName,
    pub oid: u32,
    /// `p` (permanent) or `u` (unlogged).
    pub persistence: char,
    pub reloptions: Vec<String>,
    /// `pg_class.reltuples` (negative: never analyzed).
    pub rows_estimate: f64,
    /// `pg_table_size` (heap, TOAST, maps) and `pg_indexes_size`.
    pub table_bytes: i64,
    pub index_bytes: i64,
    pub columns: Vec<Column>,
    pub constraints: Vec<Constraint>,
    pub indexes: Vec<Index>,
    pub foreign_keys: Vec<ForeignKey>,
    /// Sequences by the column that uses them.
    pub sequences: BTreeMap<String, Sequence>,
    /// Non-built-in dependencies by the object that has them (`pg_attrdef`, `pg_constraint`
    /// or `pg_class` oid).
    pub deps: BTreeMap<u32, Vec<Dependency>>,
}

impl SourceTable {
    /// The dependencies of one object (a default, a constraint, an index).
    pub(crate) fn deps_of(&self, oid: u32) -> &[Dependency] {
        self.deps.get(&oid).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Read one table (by oid) inside the caller's transaction.
pub async fn read_table(c: &Client, name: &TableName, oid: u32) -> Result<SourceTable, String> {
    let q = |e: tokio_postgres::Error| crate::server::error::describe_query_error(&e);
    let head = c
        .query_one(
            "SELECT relpersistence::text, coalesce(reloptions, '{}')::text[], reltuples::float8,
                    pg_table_size(oid), pg_indexes_size(oid)
               FROM pg_class WHERE oid = $1",
            &[&oid],
        )
        .await
        .map_err(q)?;
    let columns = read_columns(c, oid).await.map_err(q)?;
    let constraints = read_constraints(c, oid).await.map_err(q)?;
    let indexes = read_indexes(c, oid).await.map_err(q)?;
    let foreign_keys = read_foreign_keys(c, oid).await.map_err(q)?;
    let sequences = read_sequences(c, oid).await.map_err(q)?;
    let mut objects: Vec<(&str, u32)> = Vec::new();
    for col in &columns {
        for (d, _) in col.default.iter().chain(col.generated.iter()) {
            objects.push(("pg_attrdef", *d));
        }
    }
    for k in &constraints {
        objects.push(("pg_constraint", k.oid));
        if k.index_oid != 0 {
            objects.push(("pg_class", k.index_oid));
        }
    }
    for i in &indexes {
        objects.push(("pg_class", i.oid));
    }
    let mut deps = BTreeMap::new();
    for (catalog, objid) in objects {
        let d = dependencies(c, catalog, objid, oid).await.map_err(q)?;
        if !d.is_empty() {
            deps.insert(objid, d);
        }
    }
    let persistence: String = head.get(0);
    Ok(SourceTable {
        name: name.clone(),
        oid,
        persistence: persistence.chars().next().unwrap_or('p'),
        reloptions: head.get(1),
        rows_estimate: head.get(2),
        table_bytes: head.get(3),
        index_bytes: head.get(4),
        columns,
        constraints,
        indexes,
        foreign_keys,
        sequences,
        deps,
    })
}

async fn read_columns(c: &Client, oid: u32) -> Result<Vec<Column>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT a.attname::text, a.atttypid, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                    d.oid, pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,
                    CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                         THEN quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END,
                    a.attcollation <> 0 AND a.attcollation = t.typcollation AND t.typcollation = 100,
                    CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN t.typelem END
               FROM pg_attribute a
               JOIN pg_type t ON t.oid = a.atttypid
               LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
               LEFT JOIN pg_collation co ON co.oid = a.attcollation
               LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
              WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum",
            &[&oid],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let def = r
                .get::<_, Option<u32>>(4)
                .zip(r.get::<_, Option<String>>(5));
            let identity: String = r.get(6);
            let generated: String = r.get(7);
            let is_generated = generated == "s";
            Column {
                name: r.get(0),
                type_oid: r.get(1),
                type_sql: r.get(2),
                array_of: r.get(10),
                not_null: r.get(3),
                default: if is_generated { None } else { def.clone() },
                identity: identity.chars().next(),
                generated: if is_generated { def } else { None },
                collation: r.get(8),
                default_collation: r.get(9),
            }
        })
        .collect())
}

async fn read_constraints(c: &Client, oid: u32) -> Result<Vec<Constraint>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT k.oid, k.conname::text, k.contype::text, pg_get_constraintdef(k.oid), k.convalidated,
                    k.conindid, ts.spcname::text
               FROM pg_constraint k
               LEFT JOIN pg_class i ON i.oid = k.conindid
               LEFT JOIN pg_tablespace ts ON ts.oid = i.reltablespace AND i.reltablespace <> 0
              WHERE k.conrelid = $1 AND k.contype IN ('p', 'u', 'c', 'x')
              ORDER BY k.contype <> 'p', k.conname",
            &[&oid],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let kind: String = r.get(2);
            Constraint {
                oid: r.get(0),
                name: r.get(1),
                kind: kind.chars().next().unwrap_or('c'),
                def: r.get(3),
                validated: r.get(4),
                index_oid: r.get(5),
                index_tablespace: r.get(6),
            }
        })
        .collect())
}

async fn read_indexes(c: &Client, oid: u32) -> Result<Vec<Index>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT x.indexrelid, i.relname::text, pg_get_indexdef(x.indexrelid), x.indisvalid
               FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
              WHERE x.indrelid = $1
                AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = $1)
              ORDER BY i.relname",
            &[&oid],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Index {
            oid: r.get(0),
            name: r.get(1),
            def: r.get(2),
            valid: r.get(3),
        })
        .collect())
}

async fn read_foreign_keys(c: &Client, oid: u32) -> Result<Vec<ForeignKey>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT k.conname::text,
                    ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, o)
                            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o),
                    rn.nspname::text, rc.relname::text,
                    ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, o)
                            JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o),
                    k.confupdtype::text, k.confdeltype::text, k.confmatchtype::text,
                    k.condeferrable, k.condeferred
               FROM pg_constraint k
               JOIN pg_class rc ON rc.oid = k.confrelid
               JOIN pg_namespace rn ON rn.oid = rc.relnamespace
              WHERE k.conrelid = $1 AND k.contype = 'f'
              ORDER BY k.conname",
            &[&oid],
        )
        .await?;
    let ch = |s: String| s.chars().next().unwrap_or(' ');
    Ok(rows
        .iter()
        .map(|r| ForeignKey {
            name: r.get(0),
            columns: r.get(1),
            references: TableName::new(&r.get::<_, String>(2), &r.get::<_, String>(3)),
            ref_columns: r.get(4),
            on_update: ch(r.get(5)),
            on_delete: ch(r.get(6)),
            match_type: ch(r.get(7)),
            deferrable: r.get(8),
            deferred: r.get(9),
        })
        .collect())
}

/// The sequences the table's columns draw from: a serial default's (`nextval('s'::regclass)`)
/// or an identity column's, with the source's last value when the role may read it.
async fn read_sequences(
    c: &Client,
    oid: u32,
) -> Result<BTreeMap<String, Sequence>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT a.attname::text, s.oid, sn.nspname::text, s.relname::text,
                    format('AS %s INCREMENT BY %s MINVALUE %s MAXVALUE %s START WITH %s CACHE %s%s',
                           format_type(q.seqtypid, NULL), q.seqincrement, q.seqmin, q.seqmax,
                           q.seqstart, q.seqcache, CASE WHEN q.seqcycle THEN ' CYCLE' ELSE '' END),
                    has_sequence_privilege(s.oid, 'SELECT')
               FROM pg_depend d
               JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
               JOIN pg_namespace sn ON sn.oid = s.relnamespace
               JOIN pg_sequence q ON q.seqrelid = s.oid
               JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                AND d.refobjid = $1 AND d.deptype IN ('a', 'i')",
            &[&oid],
        )
        .await?;
    let mut out = BTreeMap::new();
    for r in rows {
        let seq = TableName::new(&r.get::<_, String>(2), &r.get::<_, String>(3));
        let readable: bool = r.get(5);
        let last_value = if readable {
            c.query_one(
                &format!(
                    "SELECT CASE WHEN is_called THEN last_value END FROM {}",
                    seq.sql()
                ),
                &[],
            )
            .await?
            .get::<_, Option<i64>>(0)
        } else {
            None
        };
        out.insert(
            r.get::<_, String>(0),
            Sequence {
                oid: r.get(1),
                name: seq,
                options: r.get(4),
                last_value,
            },
        );
    }
    Ok(out)
}

/// The non-built-in objects `objid` (in `catalog`) depends on by its definition, leaving out
/// the table itself (an index's columns, a default's column).
pub async fn dependencies(
    c: &Client,
    catalog: &str,
    objid: u32,
    table: u32,
) -> Result<Vec<Dependency>, tokio_postgres::Error> {
    let rows = c
        .query(
            "SELECT d.refclassid::regclass::text, d.refobjid,
                    pg_describe_object(d.refclassid, d.refobjid, 0), e.extname::text
               FROM pg_depend d
               LEFT JOIN pg_depend de ON de.classid = d.refclassid AND de.objid = d.refobjid AND de.deptype = 'e'
               LEFT JOIN pg_extension e ON e.oid = de.refobjid
              WHERE d.classid = $1::text::regclass AND d.objid = $2 AND d.deptype = 'n'
                AND d.refobjid >= $3 AND NOT (d.refclassid = 'pg_class'::regclass AND d.refobjid = $4)",
            &[&catalog, &objid, &FIRST_USER_OID, &table],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Dependency {
            catalog: r.get(0),
            oid: r.get(1),
            what: r.get(2),
            extension: r.get(3),
        })
        .collect())
}
