//! Deciding what the sandbox gets: for each source table the statements that recreate it in
//! the staging schema, what is loaded how, what comes after the load, and what had to be
//! left out (a note each); for each type whether it is created, reused or replaced. A table
//! pglab cannot recreate faithfully enough (a type it cannot make) is refused with a
//! sentence before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use super::catalog::{Column, Dependency, FIRST_USER_OID, SourceTable};
use super::ddl::{self, ColumnDef, ColumnTail};
pub use super::plan_sandbox::SandboxFacts;
use super::plan_sandbox::{existing_tables, outside_references};
use super::types::{TypeKind, UserType};
use super::{ImportError, ImportSpec, Sample, SourceInfo};
use crate::sql::names::TableName;
use crate::sql::quote::{ident, literal};

/// What to do with a source type in the sandbox.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TypeAction {
    /// Create it under its own name (absent from the sandbox).
    Create,
    /// The sandbox has the same one.
    Reuse,
    /// The sandbox has another definition under that name, used only by tables this import
    /// replaces: create it in the staging schema and swap it in at the end.
    Replace,
    /// Made by its extension.
    Extension(String),
}

/// A statement or definition with what it is: (name or description, SQL).
pub type Named = (String, String);

/// One table's part of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct TablePlan {
    pub source: TableName,
    /// Its name in the staging schema while it loads.
    pub staged: TableName,
    /// `CREATE SEQUENCE`, `CREATE TABLE`, `ALTER SEQUENCE … OWNED BY`.
    pub create: Vec<String>,
    /// The columns COPY moves (generated columns are computed by the sandbox).
    pub copy_columns: Vec<String>,
    /// Binary COPY (false: text, for a column whose binary form names a type by its oid).
    pub binary: bool,
    /// The sample this table is read with: (percent, seed).
    pub sample: Option<(f64, u64)>,
    /// Rows the source expects to send (its estimate × the sample), for progress.
    pub rows_expected: Option<u64>,
    /// Keys and other indexes after the load: (what, statement).
    pub after_load: Vec<Named>,
    /// Setting each sequence to where the source's is (or past the largest value loaded).
    pub sequences: Vec<String>,
    /// Foreign keys to other imported tables, once all are loaded.
    pub foreign_keys: Vec<String>,
    /// Sandbox bytes it will take: table and indexes (source sizes × the sample).
    pub bytes: u64,
    /// An existing sandbox table of this name is replaced at the end.
    pub replaces: bool,
}

/// The whole import.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub staging: String,
    /// The sandbox session's search path: staging, then the source's own schemas, so the
    /// expressions the source printed resolve the same way.
    pub search_path: String,
    /// `CREATE SCHEMA IF NOT EXISTS`, `CREATE EXTENSION`, types: before the tables.
    pub before: Vec<String>,
    pub tables: Vec<TablePlan>,
    /// At the end: drop what is replaced, move the staged objects in, drop the staging schema.
    pub swap: Vec<String>,
    pub notes: Vec<String>,
}

/// The percentage a table is sampled at: `--sample PCT`, or `--rows N` over its estimate.
pub fn sample_of(spec: &ImportSpec, t: &SourceTable) -> Option<(f64, u64)> {
    match spec.sample {
        Sample::All => None,
        Sample::Percent(p) => Some((p, spec.seed)),
        Sample::Rows(n) => {
            let est = t.rows_estimate.max(1.0);
            let pct = (n as f64 / est * 100.0).min(100.0);
            // Asking for more rows than the table has: all of it.
            (pct < 100.0).then_some((pct, spec.seed))
        }
    }
}

/// Build the plan: refuse what cannot be recreated, note what is left out.
pub async fn plan(
    spec: &ImportSpec,
    source: &SourceInfo,
    tables: &[SourceTable],
    types: &BTreeMap<u32, UserType>,
    sandbox: &Client,
    staging: &str,
) -> Result<Plan, ImportError> {
    let failed = |e: String| ImportError::Failed(e);
    let facts = SandboxFacts::read(sandbox, source).await.map_err(failed)?;
    let importing: BTreeSet<&TableName> = tables.iter().map(|t| &t.name).collect();
    let replaced = existing_tables(sandbox, &importing).await.map_err(failed)?;
    let mut p = Planner {
        spec,
        source,
        facts: &facts,
        types,
        staging,
        importing: &importing,
        notes: Vec::new(),
        extensions: BTreeSet::new(),
        type_actions: BTreeMap::new(),
    };
    p.decide_types(sandbox, tables, &replaced).await?;
    let mut table_plans = Vec::new();
    for t in tables {
        table_plans.push(p.table(t, replaced.contains_key(&t.name))?);
    }
    let mut before: Vec<String> = Vec::new();
    let mut schemas: BTreeSet<String> = tables.iter().map(|t| t.name.schema.clone()).collect();
    for ext in &p.extensions {
        if let Some(schema) = source.extensions.get(ext) {
            schemas.insert(schema.clone());
        }
    }
    for (oid, a) in &p.type_actions {
        if *a == TypeAction::Create {
            schemas.insert(types[oid].name.schema.clone());
        }
    }
    for s in &schemas {
        before.push(format!("CREATE SCHEMA IF NOT EXISTS {}", ident(s)));
    }
    for ext in &p.extensions {
        let schema = source
            .extensions
            .get(ext)
            .map(|s| format!(" SCHEMA {}", ident(s)))
            .unwrap_or_default();
        before.push(format!(
            "CREATE EXTENSION IF NOT EXISTS {}{schema}",
            ident(ext)
        ));
    }
    before.extend(p.type_statements());
    let mut swap = outside_references(sandbox, &replaced, &mut p.notes).await?;
    swap.extend(p.swap_statements(tables, &replaced));
    let mut path: Vec<String> = vec![ident(staging)];
    path.extend(source.search_path.iter().map(|s| ident(s)));
    Ok(Plan {
        staging: staging.to_string(),
        search_path: path.join(", "),
        before,
        tables: table_plans,
        swap,
        notes: p.notes,
    })
}

/// The decisions being made: what is imported, what the sandbox has, what was decided so far.
pub(super) struct Planner<'a> {
    pub(super) spec: &'a ImportSpec,
    pub(super) source: &'a SourceInfo,
    pub(super) facts: &'a SandboxFacts,
    pub(super) types: &'a BTreeMap<u32, UserType>,
    pub(super) staging: &'a str,
    pub(super) importing: &'a BTreeSet<&'a TableName>,
    pub(super) notes: Vec<String>,
    pub(super) extensions: BTreeSet<String>,
    pub(super) type_actions: BTreeMap<u32, TypeAction>,
}

impl Planner<'_> {
    /// Whether the sandbox can have this extension (it has it, or can create it).
    pub(super) fn extension_ok(&self, ext: &str) -> bool {
        self.facts.installed_extensions.contains_key(ext)
            || self.facts.available_extensions.contains(ext)
    }

    pub(super) fn use_extension(&mut self, ext: &str) {
        if !self.facts.installed_extensions.contains_key(ext) {
            self.extensions.insert(ext.to_string());
        }
    }

    /// Why an object with these dependencies cannot be recreated (None: it can), bringing
    /// in the extensions it needs when the sandbox has them.
    pub(super) fn blocker(&mut self, deps: &[Dependency]) -> Option<String> {
        let mut needs = Vec::new();
        for d in deps {
            if let Some(ext) = &d.extension {
                if self.extension_ok(ext) {
                    needs.push(ext.clone());
                    continue;
                }
                return Some(format!(
                    "{} of the extension {ext}, which the sandbox does not have",
                    d.what
                ));
            }
            let fine = match d.catalog.as_str() {
                "pg_type" => self.types.contains_key(&d.oid),
                // Another imported table (a check cannot reference one; an index cannot).
                "pg_class" => false,
                _ => false,
            };
            if !fine {
                return Some(format!("{}, which exists only on the source", d.what));
            }
        }
        for e in needs {
            self.use_extension(&e);
        }
        None
    }

    fn table(&mut self, t: &SourceTable, replaces: bool) -> Result<TablePlan, ImportError> {
        let staged = t.name.in_schema(self.staging);
        let sample = sample_of(self.spec, t);
        let fraction = sample.map(|(p, _)| p / 100.0).unwrap_or(1.0);
        let mut create = Vec::new();
        let mut columns = Vec::new();
        let mut sequences = Vec::new();
        let mut owned = Vec::new();
        let mut copy_columns = Vec::new();
        for c in &t.columns {
            let def = self.column(t, c, &staged, &mut create, &mut owned, &mut sequences);
            if !matches!(def.tail, ColumnTail::Generated(_)) {
                copy_columns.push(c.name.clone());
            }
            columns.push(def);
        }
        let (checks, mut after_load) = self.constraints(t, &staged);
        after_load.extend(self.indexes(t, &staged));
        let foreign_keys = self.foreign_keys(t, &staged, sample.is_some());
        create.push(ddl::create_table(
            &staged,
            t.persistence == 'u',
            &columns,
            &checks,
            &t.reloptions,
        ));
        create.extend(owned);
        let index_bytes = if self.spec.indexes {
            t.index_bytes
        } else {
            t.index_bytes.min(t.table_bytes / 2)
        };
        Ok(TablePlan {
            source: t.name.clone(),
            staged,
            create,
            binary: self.binary(t),
            copy_columns,
            sample,
            rows_expected: (t.rows_estimate >= 0.0)
                .then(|| (t.rows_estimate * fraction).round() as u64),
            after_load,
            sequences,
            foreign_keys,
            bytes: ((t.table_bytes.max(0) + index_bytes.max(0)) as f64 * fraction) as u64,
            replaces,
        })
    }

    /// Checks (inside `CREATE TABLE`), and keys, exclusion constraints and checks not
    /// validated on the source (after the load).
    fn constraints(&mut self, t: &SourceTable, staged: &TableName) -> (Vec<Named>, Vec<Named>) {
        let (mut checks, mut after_load) = (Vec::new(), Vec::new());
        for k in &t.constraints {
            let mut deps = t.deps_of(k.oid).to_vec();
            if k.index_oid != 0 {
                deps.extend(t.deps_of(k.index_oid).iter().cloned());
            }
            // A constraint's own index is no reason to leave it out.
            deps.retain(|d| !(d.catalog == "pg_class" && d.oid == k.index_oid));
            if let Some(why) = self.blocker(&deps) {
                self.notes.push(format!(
                    "{}: constraint {} is left out: it uses {why}",
                    t.name, k.name
                ));
                continue;
            }
            if k.kind == 'c' && k.validated {
                checks.push((k.name.clone(), k.def.clone()));
            } else {
                let what = match k.kind {
                    'p' => "primary key",
                    'u' => "unique constraint",
                    'x' => "exclusion constraint",
                    _ => "check (not validated on the source)",
                };
                after_load.push((
                    format!("{what} {}", k.name),
                    ddl::add_constraint(staged, &k.name, &k.def, k.index_tablespace.as_deref()),
                ));
            }
        }
        (checks, after_load)
    }

    /// The indexes that back no constraint, pointed at the staged table (none with
    /// `--indexes off`).
    fn indexes(&mut self, t: &SourceTable, staged: &TableName) -> Vec<Named> {
        let mut out = Vec::new();
        if !self.spec.indexes {
            if !t.indexes.is_empty() {
                self.notes.push(format!(
                    "{}: {} index(es) left out (--indexes off); keys and unique constraints are kept",
                    t.name,
                    t.indexes.len()
                ));
            }
            return out;
        }
        for i in &t.indexes {
            if !i.valid {
                self.notes.push(format!(
                    "{}: index {} is left out: it is invalid on the source (an interrupted CREATE INDEX CONCURRENTLY)",
                    t.name, i.name
                ));
                continue;
            }
            if let Some(why) = self.blocker(t.deps_of(i.oid)) {
                self.notes.push(format!(
                    "{}: index {} is left out: it uses {why}",
                    t.name, i.name
                ));
                continue;
            }
            match ddl::retarget_index(i, &t.name, staged) {
                Some(sql) => out.push((format!("index {}", i.name), sql)),
                None => self.notes.push(format!(
                    "{}: index {} is left out: its definition could not be read ({})",
                    t.name, i.name, i.def
                )),
            }
        }
        out
    }

    /// Foreign keys to other tables of this import (`NOT VALID` with a sample).
    fn foreign_keys(&mut self, t: &SourceTable, staged: &TableName, sampled: bool) -> Vec<String> {
        let mut out = Vec::new();
        for fk in &t.foreign_keys {
            if !self.importing.contains(&fk.references) {
                self.notes.push(format!(
                    "{}: foreign key {} is left out: it references {}, which is not imported",
                    t.name, fk.name, fk.references
                ));
                continue;
            }
            out.push(ddl::foreign_key(
                staged,
                fk,
                &fk.references.in_schema(self.staging),
                sampled,
            ));
        }
        if sampled && !out.is_empty() {
            self.notes.push(format!(
                "{}: its foreign keys are added NOT VALID: a sample need not hold every row they reference",
                t.name
            ));
        }
        out
    }

    /// One column: its type, collation, default / identity / generation.
    fn column(
        &mut self,
        t: &SourceTable,
        c: &Column,
        staged: &TableName,
        create: &mut Vec<String>,
        owned: &mut Vec<String>,
        sequences: &mut Vec<String>,
    ) -> ColumnDef {
        let type_sql = self.column_type(c);
        let collation = match &c.collation {
            Some(coll) => Some(coll.clone()),
            None if c.default_collation => self.facts.default_collation.clone(),
            None => None,
        };
        let seq = t.sequences.get(&c.name);
        let mut tail = ColumnTail::None;
        if let Some(how) = c.identity.filter(|h| *h == 'a' || *h == 'd') {
            tail = ColumnTail::Identity(if how == 'a' { "ALWAYS" } else { "BY DEFAULT" });
            if let Some(s) = seq {
                sequences.push(set_sequence(
                    &format!(
                        "pg_get_serial_sequence({}, {})",
                        literal(&staged.sql()),
                        literal(&c.name)
                    ),
                    staged,
                    &c.name,
                    s.last_value,
                ));
            }
        } else if let Some((oid, expr)) = &c.default {
            tail = self.default(t, c, (*oid, expr), staged, (create, owned, sequences));
        } else if let Some((oid, expr)) = &c.generated {
            match self.blocker(t.deps_of(*oid)) {
                None => tail = ColumnTail::Generated(expr.clone()),
                Some(why) => self.notes.push(format!(
                    "{}: generated column {} becomes a plain column holding the source's values: its expression uses {why}",
                    t.name, c.name
                )),
            }
        }
        ColumnDef {
            name: c.name.clone(),
            type_sql,
            collation,
            not_null: c.not_null,
            tail,
        }
    }

    /// A column's default: a serial's `nextval` pointed at the staged sequence (created and
    /// owned here, set after the load), the expression as the source has it, or nothing when
    /// it calls what only the source has (a note says so).
    fn default(
        &mut self,
        t: &SourceTable,
        c: &Column,
        (oid, expr): (u32, &str),
        staged: &TableName,
        (create, owned, sequences): (&mut Vec<String>, &mut Vec<String>, &mut Vec<String>),
    ) -> ColumnTail {
        let deps = t.deps_of(oid);
        let serial = t.sequences.get(&c.name).filter(|s| {
            expr.starts_with("nextval(")
                && deps
                    .iter()
                    .all(|d| d.catalog == "pg_class" && d.oid == s.oid)
        });
        if let Some(s) = serial {
            let seq_name = s.name.in_schema(self.staging);
            create.push(format!("CREATE SEQUENCE {} {}", seq_name.sql(), s.options));
            owned.push(format!(
                "ALTER SEQUENCE {} OWNED BY {}.{}",
                seq_name.sql(),
                staged.sql(),
                ident(&c.name)
            ));
            sequences.push(set_sequence(
                &literal(&seq_name.sql()),
                staged,
                &c.name,
                s.last_value,
            ));
            return ColumnTail::Default(format!("nextval({}::regclass)", literal(&seq_name.sql())));
        }
        match self.blocker(deps) {
            None => ColumnTail::Default(expr.to_string()),
            Some(why) => {
                self.notes.push(format!(
                    "{}: the default of column {} is left out: it uses {why}",
                    t.name, c.name
                ));
                ColumnTail::None
            }
        }
    }

    /// A column's type as the sandbox names it: a staged type by its staging name.
    fn column_type(&self, c: &Column) -> String {
        if let Some(TypeAction::Replace) = self.type_actions.get(&c.type_oid) {
            return self.type_name(c.type_oid).unwrap_or(c.type_sql.clone());
        }
        if let Some(elem) = c.array_of
            && let Some(TypeAction::Replace) = self.type_actions.get(&elem)
        {
            let dims = c.type_sql.matches("[]").count().max(1);
            return format!(
                "{}{}",
                self.type_name(elem).unwrap_or_default(),
                "[]".repeat(dims)
            );
        }
        c.type_sql.clone()
    }

    /// Binary COPY carries arrays and composites with their element types' oids, which
    /// differ between the source and the sandbox for the source's own types; binary forms
    /// may also differ between major versions. Text COPY is used then.
    fn binary(&mut self, t: &SourceTable) -> bool {
        if self.source.version_num / 10000 != self.facts.version_num / 10000 {
            return false;
        }
        let oid_bound = t.columns.iter().any(|c| {
            c.array_of.is_some_and(|e| e >= FIRST_USER_OID)
                || self
                    .types
                    .get(&c.type_oid)
                    .is_some_and(|ut| match &ut.kind {
                        TypeKind::Domain(d) => d.base_sql.ends_with("[]"),
                        _ => false,
                    })
        });
        !oid_bound
    }
}

/// `setval` a loaded table's sequence to the source's last value, or past the largest value
/// the column holds when that is larger (a sample, or a source pglab may not read).
fn set_sequence(seq: &str, table: &TableName, column: &str, last: Option<i64>) -> String {
    let floor = last.map(|v| v.to_string()).unwrap_or_else(|| "NULL".into());
    format!(
        "SELECT setval({seq}::regclass, v) FROM (SELECT greatest({floor}, max({col})::int8) AS v FROM {t}) s WHERE v IS NOT NULL",
        col = ident(column),
        t = table.sql()
    )
}
