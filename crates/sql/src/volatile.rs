//! A function is only as read-only as its body. The grammar classifier reads a statement's
//! text; here, on a server pglab did not start, every function the statement calls is looked
//! up in `pg_proc` (by name, schema or search path, and number of arguments), and so are the
//! functions of the views it reads (their rewrite rules' dependencies in `pg_depend`). A
//! VOLATILE function is refused unless it is one of PostgreSQL's own built-ins that only read
//! (a built-in that acts beyond its statement is on [`crate::functions`]' list), a
//! known read-only extension function, or one the user vouches for with `--allow-function`.

use std::collections::HashMap;

use tokio_postgres::Client;

use crate::sql::calls::{Call, calls};
use crate::sql::functions::side_effect;

/// Extension functions known to only read, as `schema-less name`.
const READ_ONLY_EXTENSION: &[&str] = &[
    "pg_stat_statements",
    "pg_stat_statements_info",
    "pg_buffercache_pages",
    "pgstattuple",
    "pgstatindex",
    "hypopg_list_indexes",
];

/// A function a statement may not call here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub schema: String,
    pub name: String,
    /// `v` VOLATILE, `s` STABLE, `i` IMMUTABLE.
    pub volatility: char,
    pub security_definer: bool,
    /// The view it is called through (None: the statement calls it).
    pub via: Option<String>,
    /// A built-in on the side-effect list (through a view): what it does.
    pub builtin_effect: Option<&'static str>,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let via = self
            .via
            .as_ref()
            .map(|v| format!("reads view {v}, which "))
            .unwrap_or_default();
        if let Some(effect) = self.builtin_effect {
            return write!(
                f,
                "{via}calls {}.{}(), which {effect}: on a server pglab did not start it is not run; measure it on a copy in pglab's sandbox",
                self.schema, self.name
            );
        }
        let volatility = match self.volatility {
            'v' => "VOLATILE",
            's' => "STABLE",
            _ => "IMMUTABLE",
        };
        let definer = if self.security_definer {
            ", SECURITY DEFINER"
        } else {
            ""
        };
        write!(
            f,
            "{via}calls {s}.{n}(), a {volatility} function{definer}: what its body does (write, reload, signal) no rollback undoes, so on a server pglab did not start it is not run; if you know it only reads, pass --allow-function {s}.{n}, or measure it on a copy in pglab's sandbox",
            s = self.schema,
            n = self.name
        )
    }
}

/// One function as the catalog has it.
#[derive(Debug, Clone)]
struct Proc {
    schema: String,
    name: String,
    volatility: char,
    security_definer: bool,
    builtin: bool,
}

impl Proc {
    fn from_row(r: &tokio_postgres::Row) -> Proc {
        let v: String = r.get(2);
        Proc {
            schema: r.get(0),
            name: r.get(1),
            volatility: v.chars().next().unwrap_or('v'),
            security_definer: r.get(3),
            builtin: r.get(4),
        }
    }

    /// Why this function may not run here (None: it may).
    fn refused(&self, allowed: &[String], via: Option<&str>) -> Option<Refused> {
        let qualified = format!("{}.{}", self.schema, self.name).to_lowercase();
        if allowed.contains(&qualified) {
            return None;
        }
        let builtin_effect = self.builtin.then(|| side_effect(&self.name)).flatten();
        let volatile_user = !self.builtin
            && self.volatility == 'v'
            && !READ_ONLY_EXTENSION.contains(&self.name.as_str());
        // A built-in the statement names itself is the grammar classifier's: here only
        // through a view.
        let effect_via_view = builtin_effect.is_some() && via.is_some();
        (volatile_user || effect_via_view).then(|| Refused {
            schema: self.schema.clone(),
            name: self.name.clone(),
            volatility: self.volatility,
            security_definer: self.security_definer,
            via: via.map(str::to_string),
            builtin_effect: builtin_effect.filter(|_| self.builtin),
        })
    }
}

/// The catalog's answers, kept for the many statements of one run (a captured workload's
/// value sets call the same functions).
#[derive(Default)]
pub struct Lookup {
    calls: HashMap<Call, Vec<Proc>>,
    views: HashMap<String, Vec<Proc>>,
}

const CALL_SQL: &str =
    "SELECT n.nspname::text, p.proname::text, p.provolatile::text, p.prosecdef, p.oid < 16384
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE p.proname = $1
   AND CASE WHEN $2::text IS NULL THEN pg_function_is_visible(p.oid) ELSE n.nspname = $2::text END
   AND ($3::int BETWEEN p.pronargs - p.pronargdefaults AND p.pronargs
        OR (p.provariadic <> 0 AND $3::int >= p.pronargs - 1))";

/// The functions the rules of a view (and of the views it reads, all the way down) call.
const VIEW_SQL: &str = "WITH RECURSIVE rels(oid) AS (
    SELECT c.oid FROM pg_class c WHERE c.oid = to_regclass($1) AND c.relkind IN ('v', 'm')
    UNION
    SELECT d.refobjid FROM rels
      JOIN pg_rewrite r ON r.ev_class = rels.oid
      JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                      AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> rels.oid
)
SELECT DISTINCT n.nspname::text, p.proname::text, p.provolatile::text, p.prosecdef, p.oid < 16384
  FROM rels
  JOIN pg_rewrite r ON r.ev_class = rels.oid
  JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                  AND d.refclassid = 'pg_proc'::regclass
  JOIN pg_proc p ON p.oid = d.refobjid
  JOIN pg_namespace n ON n.oid = p.pronamespace";

impl Lookup {
    /// The functions `sql` may not call here, given the names the user vouches for; one per
    /// function, in the order of the calls then of the views. The session's search path
    /// decides which function an unqualified name is, as it will when the statement runs.
    pub async fn refused(
        &mut self,
        client: &Client,
        sql: &str,
        allowed: &[String],
    ) -> Result<Vec<Refused>, tokio_postgres::Error> {
        let mut out: Vec<Refused> = Vec::new();
        for call in calls(sql) {
            if !self.calls.contains_key(&call) {
                let args = call.args as i32;
                let rows = client
                    .query(CALL_SQL, &[&call.name, &call.schema, &args])
                    .await?;
                self.calls
                    .insert(call.clone(), rows.iter().map(Proc::from_row).collect());
            }
            out.extend(
                self.calls[&call]
                    .iter()
                    .filter_map(|p| p.refused(allowed, None)),
            );
        }
        for view in crate::sql::tree::tables(sql) {
            if !self.views.contains_key(&view) {
                let rows = client.query(VIEW_SQL, &[&view]).await?;
                self.views
                    .insert(view.clone(), rows.iter().map(Proc::from_row).collect());
            }
            out.extend(
                self.views[&view]
                    .iter()
                    .filter_map(|p| p.refused(allowed, Some(&view))),
            );
        }
        out.dedup_by(|a, b| a.schema == b.schema && a.name == b.name);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc(schema: &str, name: &str, v: char, builtin: bool) -> Proc {
        Proc {
            schema: schema.into(),
            name: name.into(),
            volatility: v,
            security_definer: false,
            builtin,
        }
    }

    #[test]
    fn a_volatile_user_function_is_refused_by_name_with_the_flag_that_allows_it() {
        let p = proc("public", "quiet_reload", 'v', false);
        let r = p.refused(&[], None).unwrap();
        assert_eq!(
            r.to_string(),
            "calls public.quiet_reload(), a VOLATILE function: what its body does (write, reload, signal) no rollback undoes, so on a server pglab did not start it is not run; if you know it only reads, pass --allow-function public.quiet_reload, or measure it on a copy in pglab's sandbox"
        );
        assert_eq!(p.refused(&["public.quiet_reload".into()], None), None);
        assert_eq!(proc("public", "f", 's', false).refused(&[], None), None);
        // PostgreSQL's own read-only built-ins (random(), clock_timestamp()) run.
        assert_eq!(
            proc("pg_catalog", "random", 'v', true).refused(&[], None),
            None
        );
        let via = proc("pg_catalog", "pg_reload_conf", 'v', true)
            .refused(&[], Some("public.v"))
            .unwrap();
        assert!(
            via.to_string()
                .starts_with("reads view public.v, which calls pg_catalog.pg_reload_conf()"),
            "{via}"
        );
    }
}
