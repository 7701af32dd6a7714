//! Deciding what the sandbox gets: for each source table the statements that recreate it in
//! the staging schema, what is loaded how, what comes after the load, and what had to be
//! left out (a note each); for each type whether it is created, reused or replaced. A table
//! pglab cannot recreate faithfully enough (a type it cannot make) is refused with a
//! sentence before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use super::catalog::{Column, Dependency, FIRST_USER_OID, SourceTable};
use super::ddl::{self, ColumnDef, ColumnTail};
use super::name::TableName;
use super::types::{TypeKind, UserType, same_definition, sandbox_twin};
use super::{ImportError, ImportSpec, Sample, SourceInfo};
use crate::experiment::sql::{ident, literal};

/// What to do with a source type in the sandbox.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeAction {
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
    pub after_load: Vec<(String, String)>,
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

/// Tables of these names the sandbox has now (they will be replaced), with what else
/// depends on them there.
async fn existing_tables(
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

struct Planner<'a> {
    spec: &'a ImportSpec,
    source: &'a SourceInfo,
    facts: &'a SandboxFacts,
    types: &'a BTreeMap<u32, UserType>,
    staging: &'a str,
    importing: &'a BTreeSet<&'a TableName>,
    notes: Vec<String>,
    extensions: BTreeSet<String>,
    type_actions: BTreeMap<u32, TypeAction>,
}

impl Planner<'_> {
    /// Whether the sandbox can have this extension (it has it, or can create it).
    fn extension_ok(&self, ext: &str) -> bool {
        self.facts.installed_extensions.contains_key(ext)
            || self.facts.available_extensions.contains(ext)
    }

    fn use_extension(&mut self, ext: &str) {
        if !self.facts.installed_extensions.contains_key(ext) {
            self.extensions.insert(ext.to_string());
        }
    }

    /// Decide every type the columns use; refuse the ones that cannot be made.
    async fn decide_types(
        &mut self,
        sandbox: &Client,
        tables: &[SourceTable],
        replaced: &BTreeMap<TableName, u32>,
    ) -> Result<(), ImportError> {
        // The column that first uses each type, for the sentence.
        let mut used_by: BTreeMap<u32, String> = BTreeMap::new();
        for t in tables {
            for c in &t.columns {
                for oid in self.type_closure(c.type_oid) {
                    used_by
                        .entry(oid)
                        .or_insert_with(|| format!("column {} of {}", c.name, t.name));
                }
            }
        }
        for (oid, ut) in self.types {
            let who = used_by
                .get(oid)
                .cloned()
                .unwrap_or_else(|| "a column".into());
            let action = match &ut.kind {
                TypeKind::Unsupported(what) => {
                    return Err(ImportError::Refused(format!(
                        "{who} has the {what} {}, which pglab cannot recreate in the sandbox (it recreates enums, domains and types of extensions the sandbox has): leave the table out",
                        ut.name
                    )));
                }
                TypeKind::Extension(ext) => {
                    if !self.extension_ok(ext) {
                        return Err(ImportError::Refused(format!(
                            "{who} has the type {} of the extension {ext}, which the sandbox's PostgreSQL does not have: install it for PostgreSQL {} (e.g. the Debian package postgresql-{}-{ext}) or leave the table out",
                            ut.name,
                            self.facts.version_num / 10000,
                            self.facts.version_num / 10000
                        )));
                    }
                    self.use_extension(ext);
                    TypeAction::Extension(ext.clone())
                }
                TypeKind::Enum(_) | TypeKind::Domain(_) => {
                    match sandbox_twin(sandbox, ut)
                        .await
                        .map_err(ImportError::Failed)?
                    {
                        None => TypeAction::Create,
                        Some(k) if same_definition(&ut.kind, &k) => TypeAction::Reuse,
                        Some(_) => {
                            let others = other_users(sandbox, ut, replaced)
                                .await
                                .map_err(ImportError::Failed)?;
                            if !others.is_empty() {
                                return Err(ImportError::Refused(format!(
                                    "the sandbox has a type {} that differs from the source's, and {} uses it: import {} again together with this table, or drop it in the sandbox",
                                    ut.name,
                                    others.join(", "),
                                    if others.len() == 1 { "it" } else { "them" }
                                )));
                            }
                            TypeAction::Replace
                        }
                    }
                }
            };
            self.type_actions.insert(*oid, action);
        }
        Ok(())
    }

    /// The user types behind a column type (itself, an array's element, a domain's base).
    fn type_closure(&self, oid: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![oid];
        while let Some(o) = stack.pop() {
            if let Some(t) = self.types.get(&o) {
                if !out.contains(&o) {
                    out.push(o);
                }
                if let Some(b) = t.needs() {
                    stack.push(b);
                }
            }
        }
        // Arrays are not in the map: their element is, under the element's oid.
        out
    }

    /// How the sandbox's statements name a user type: staged ones by their staging name.
    fn type_name(&self, oid: u32) -> Option<String> {
        let t = self.types.get(&oid)?;
        match self.type_actions.get(&oid) {
            Some(TypeAction::Replace) => Some(t.name.in_schema(self.staging).sql()),
            _ => Some(t.name.sql()),
        }
    }

    /// CREATE TYPE / DOMAIN for the types made here, bases first.
    fn type_statements(&mut self) -> Vec<String> {
        let mut done: BTreeSet<u32> = BTreeSet::new();
        let mut out = Vec::new();
        let types = self.types;
        let oids: Vec<u32> = types.keys().copied().collect();
        for oid in oids {
            self.type_statement(oid, &mut done, &mut out);
        }
        out
    }

    fn type_statement(&mut self, oid: u32, done: &mut BTreeSet<u32>, out: &mut Vec<String>) {
        if !done.insert(oid) {
            return;
        }
        let types = self.types;
        let Some(t) = types.get(&oid) else {
            return;
        };
        if let Some(b) = t.needs() {
            self.type_statement(b, done, out);
        }
        let name = match self.type_actions.get(&oid) {
            Some(TypeAction::Create) => t.name.clone(),
            Some(TypeAction::Replace) => t.name.in_schema(self.staging),
            _ => return,
        };
        match &t.kind {
            TypeKind::Enum(labels) => out.push(ddl::create_enum(&name, labels)),
            TypeKind::Domain(d) => {
                let base = self
                    .type_name(d.base_oid)
                    .unwrap_or_else(|| d.base_sql.clone());
                let mut checks = Vec::new();
                for (cname, def, deps) in &d.checks {
                    match self.blocker(deps) {
                        None => checks.push((cname.clone(), def.clone())),
                        Some(why) => self.notes.push(format!(
                            "domain {}: its check {cname} is left out: it uses {why}",
                            t.name
                        )),
                    }
                }
                out.push(ddl::create_domain(
                    &name,
                    &base,
                    d.not_null,
                    d.default.as_deref(),
                    &checks,
                ));
            }
            _ => {}
        }
    }

    /// Why an object with these dependencies cannot be recreated (None: it can), bringing
    /// in the extensions it needs when the sandbox has them.
    fn blocker(&mut self, deps: &[Dependency]) -> Option<String> {
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
        let mut checks = Vec::new();
        let mut after_load = Vec::new();
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
        for k in &t.constraints {
            let mut deps = t.deps_of(k.oid).to_vec();
            if k.index_oid != 0 {
                deps.extend(t.deps_of(k.index_oid).iter().cloned());
            }
            // A constraint's own index and the table's types are no reason to leave it out.
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
                    ddl::add_constraint(&staged, &k.name, &k.def, k.index_tablespace.as_deref()),
                ));
            }
        }
        if self.spec.indexes {
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
                match ddl::retarget_index(i, &t.name, &staged) {
                    Some(sql) => after_load.push((format!("index {}", i.name), sql)),
                    None => self.notes.push(format!(
                        "{}: index {} is left out: its definition could not be read ({})",
                        t.name, i.name, i.def
                    )),
                }
            }
        } else if !t.indexes.is_empty() {
            self.notes.push(format!(
                "{}: {} index(es) left out (--indexes off); keys and unique constraints are kept",
                t.name,
                t.indexes.len()
            ));
        }
        let mut foreign_keys = Vec::new();
        for fk in &t.foreign_keys {
            if !self.importing.contains(&fk.references) {
                self.notes.push(format!(
                    "{}: foreign key {} is left out: it references {}, which is not imported",
                    t.name, fk.name, fk.references
                ));
                continue;
            }
            foreign_keys.push(ddl::foreign_key(
                &staged,
                fk,
                &fk.references.in_schema(self.staging),
                sample.is_some(),
            ));
        }
        if sample.is_some() && !foreign_keys.is_empty() {
            self.notes.push(format!(
                "{}: its foreign keys are added NOT VALID: a sample need not hold every row they reference",
                t.name
            ));
        }
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
            let deps = t.deps_of(*oid);
            let serial = seq.filter(|s| {
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
                tail =
                    ColumnTail::Default(format!("nextval({}::regclass)", literal(&seq_name.sql())));
                sequences.push(set_sequence(
                    &literal(&seq_name.sql()),
                    staged,
                    &c.name,
                    s.last_value,
                ));
            } else {
                match self.blocker(deps) {
                    None => tail = ColumnTail::Default(expr.clone()),
                    Some(why) => self.notes.push(format!(
                        "{}: the default of column {} is left out: it uses {why}",
                        t.name, c.name
                    )),
                }
            }
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

    /// At the end: drop the replaced tables and types, move the staged ones in.
    fn swap_statements(
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

/// What in the sandbox, besides the tables this import replaces, refers to one of them:
/// another table's foreign key is dropped with the old table (a note says so; the returned
/// statements do it); a view is a reason to refuse, since pglab does not drop the user's
/// views.
async fn outside_references(
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

/// Sandbox relations, other than the tables this import replaces, that use a type.
async fn other_users(
    c: &Client,
    t: &UserType,
    replaced: &BTreeMap<TableName, u32>,
) -> Result<Vec<String>, String> {
    let skip: Vec<u32> = replaced.values().copied().collect();
    Ok(c.query(
        "SELECT DISTINCT pg_describe_object(d.classid, d.objid, 0)
           FROM pg_depend d
           JOIN pg_type t ON t.oid = d.refobjid
           JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE n.nspname = $1 AND t.typname = $2 AND d.deptype = 'n'
            AND NOT (d.classid = 'pg_class'::regclass AND d.objid = ANY($3))
          ORDER BY 1",
        &[&t.name.schema, &t.name.name, &skip],
    )
    .await
    .map_err(|e| crate::server::error::describe_query_error(&e))?
    .iter()
    .map(|r| r.get(0))
    .collect())
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
