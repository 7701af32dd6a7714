//! The plan's decisions about the source's own types: which are created in the sandbox,
//! reused (the sandbox has the same), replaced at the end (it has another definition that only
//! re-imported tables use), brought by their extension, or refused.

use std::collections::{BTreeMap, BTreeSet};

use tokio_postgres::Client;

use super::ImportError;
use super::catalog::SourceTable;
use super::ddl;
use super::plan::{Planner, TypeAction};
use super::types::{TypeKind, UserType, same_definition, sandbox_twin};
use crate::sql::names::TableName;

impl Planner<'_> {
    /// Decide every type the columns use; refuse the ones that cannot be made.
    pub(super) async fn decide_types(
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
    pub(super) fn type_name(&self, oid: u32) -> Option<String> {
        let t = self.types.get(&oid)?;
        match self.type_actions.get(&oid) {
            Some(TypeAction::Replace) => Some(t.name.in_schema(self.staging).sql()),
            _ => Some(t.name.sql()),
        }
    }

    /// CREATE TYPE / DOMAIN for the types made here, bases first.
    pub(super) fn type_statements(&mut self) -> Vec<String> {
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
