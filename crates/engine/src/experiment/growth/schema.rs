//! The growth tables: names, DDL, and the index sets each design carries (created, dropped
//! and rebuilt by the same definitions).

use tokio_postgres::Client;

use super::key::{Key, KeyShape};
use super::kinds::{Design, IndexKind};
use super::spec::GrowthSpec;
use crate::experiment::lab::{RunCtx, RunError};
use crate::sql::quote::ident;

/// One index of a growth table.
#[derive(Debug, Clone)]
pub(crate) struct IndexDef {
    /// The name reports use: pk, version, content, version_content, versions.
    pub name: &'static str,
    /// `"schema"."relname"`.
    pub qualified: String,
    pub create: String,
    pub drop: String,
}

/// A design's association table.
#[derive(Debug, Clone)]
pub(crate) struct TableDef {
    pub design: Design,
    pub relname: String,
    /// `"schema"."relname"`.
    pub qualified: String,
    pub indexes: Vec<IndexDef>,
    pub shape: KeyShape,
}

/// A name unique to this run: `growth_<what>_<run id>`.
pub(crate) fn run_table_name(run_id: &str, what: &str) -> String {
    let id = crate::sql::lab::plain_name(run_id);
    format!("growth_{what}_{id}")
}

impl TableDef {
    pub(crate) fn new(ctx: &RunCtx, spec: &GrowthSpec, design: Design) -> TableDef {
        let relname = run_table_name(&ctx.run_id, design.table_key());
        let qualified = ctx.table(&relname);
        let schema = ident(&ctx.opts.schema);
        let index = |name: &'static str, unique: bool, cols: &str| {
            let rel = format!("{relname}_{name}");
            IndexDef {
                name,
                create: format!(
                    "CREATE {}INDEX {} ON {qualified} ({cols})",
                    if unique { "UNIQUE " } else { "" },
                    ident(&rel)
                ),
                drop: format!("DROP INDEX {schema}.{}", ident(&rel)),
                qualified: format!("{schema}.{}", ident(&rel)),
            }
        };
        // Citus: a distributed table's unique constraints must hold its distribution column.
        let pk_columns = match design.distribution() {
            Some(col) => format!("id, {col}"),
            None => "id".into(),
        };
        let pk = || {
            let rel = format!("{relname}_pkey");
            IndexDef {
                name: "pk",
                create: format!(
                    "ALTER TABLE {qualified} ADD CONSTRAINT {} PRIMARY KEY ({pk_columns})",
                    ident(&rel)
                ),
                drop: format!("ALTER TABLE {qualified} DROP CONSTRAINT {}", ident(&rel)),
                qualified: format!("{schema}.{}", ident(&rel)),
            }
        };
        let indexes = match design.base() {
            Design::Snapshot => spec
                .indexes
                .iter()
                .map(|k| match k {
                    IndexKind::Pk => pk(),
                    IndexKind::Version => index("version", false, "version"),
                    IndexKind::Content => index("content", false, "content"),
                    IndexKind::VersionContent => index("version_content", true, "version, content"),
                })
                .collect(),
            _ => vec![
                pk(),
                index("content", true, "content"),
                index("versions", false, "version_added, version_removed"),
            ],
        };
        TableDef {
            design,
            relname,
            qualified,
            indexes,
            shape: spec.key_shape,
        }
    }

    fn columns(&self) -> String {
        columns(self.design, self.shape)
    }

    /// The parameter that names version `v` in this table's read query.
    pub(crate) fn version_param(&self, v: i64) -> Key {
        match self.design.base() {
            Design::Snapshot => self.shape.version(v),
            _ => Key::Int(v),
        }
    }

    /// The columns a bulk COPY fills (the id comes from its sequence).
    pub(crate) fn copy_columns(&self) -> &'static str {
        match self.design.base() {
            Design::Snapshot => "version, content",
            _ => "content, version_added, version_removed",
        }
    }

    /// Create the table, marked as this run's in the same transaction (so that a cancel can
    /// never leave an unmarked table behind), with its indexes.
    pub(crate) async fn create(&self, ctx: &RunCtx, client: &Client) -> Result<(), RunError> {
        ctx.create_marked(
            client,
            &self.relname,
            &format!(
                "CREATE TABLE {} ({}) WITH (autovacuum_enabled = off)",
                self.qualified,
                self.columns()
            ),
            &format!("growth {} table", self.design.as_str()),
        )
        .await?;
        if let Some(col) = self.design.distribution() {
            // Before the indexes, so that each is created on every shard.
            crate::experiment::lab::distribute::distribute(ctx, client, &self.qualified, col, None)
                .await?;
        }
        for i in &self.indexes {
            ctx.cancellable(client, client.batch_execute(&i.create))
                .await?;
        }
        Ok(())
    }
}

/// A design's columns under a key shape (ranges keeps integer version bounds: a range needs
/// ordered versions).
pub(crate) fn columns(design: Design, shape: KeyShape) -> String {
    let id = shape.id_column();
    let key = shape.sql_type();
    match design.base() {
        Design::Snapshot => format!("{id}, version {key} NOT NULL, content {key} NOT NULL"),
        _ => format!(
            "{id}, content {key} NOT NULL, version_added int8 NOT NULL, version_removed int8"
        ),
    }
}

/// The content table: one row per content unit any version refers to.
pub(crate) struct ContentTable {
    pub relname: String,
    pub qualified: String,
    /// Units present (ids 0..have).
    pub have: i64,
}

impl ContentTable {
    pub(crate) async fn create(ctx: &RunCtx, client: &Client) -> Result<ContentTable, RunError> {
        let relname = run_table_name(&ctx.run_id, "content");
        let qualified = ctx.table(&relname);
        ctx.create_marked(
            client,
            &relname,
            &format!(
                "CREATE TABLE {qualified} (id int8 PRIMARY KEY, name text NOT NULL) WITH (autovacuum_enabled = off)"
            ),
            "growth content table",
        )
        .await?;
        Ok(ContentTable {
            relname,
            qualified,
            have: 0,
        })
    }

    /// Make sure units 0..upto exist (server-side, untimed).
    pub(crate) async fn ensure(
        &mut self,
        ctx: &RunCtx,
        client: &Client,
        upto: i64,
    ) -> Result<(), RunError> {
        if upto <= self.have {
            return Ok(());
        }
        let sql = format!(
            "INSERT INTO {} SELECT g, 'unit ' || g FROM generate_series($1::int8, $2::int8) g",
            self.qualified
        );
        let hi = upto - 1;
        ctx.cancellable(client, client.execute(&sql, &[&self.have, &hi]))
            .await?;
        self.have = upto;
        Ok(())
    }
}
