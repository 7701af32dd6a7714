//! What the import does to the source besides reading it, said and bounded: row-level
//! security is off for its session (a role the policies would filter fails with a sentence
//! instead of copying a silent subset), its lock waits end after [`LOCK_TIMEOUT_S`] with a
//! sentence naming the lock and who holds it, and before the rows are read it says what its
//! repeatable-read snapshot and `ACCESS SHARE` locks hold back there and for about how long.

use tokio_postgres::Client;

use crate::measure::units::{format_bytes, format_seconds};
use crate::sql::names::TableName;

/// How long the source session waits for any lock before it gives up.
pub(crate) const LOCK_TIMEOUT_S: u64 = 5;

/// A read rate to turn the tables' size into a duration: a local disk and network read
/// faster, a slow link slower (the sentence says so).
const ASSUMED_READ_BYTES_PER_S: f64 = 100.0 * 1024.0 * 1024.0;

/// The settings of the source's snapshot transaction, after its `BEGIN`.
pub fn session_settings() -> String {
    format!("SET LOCAL row_security = off; SET LOCAL lock_timeout = '{LOCK_TIMEOUT_S}s'")
}

/// The facts about one table that decide whether its rows can be read whole.
pub struct Readable<'a> {
    pub name: &'a TableName,
    pub user: &'a str,
    /// Row-level security would filter this role's reads (enabled, and the role is neither
    /// a superuser, `BYPASSRLS`, nor the owner of a table that does not force it).
    pub rls_filters: bool,
    /// Inheritance children, as `schema.name`.
    pub children: Vec<TableName>,
}

/// Refuse a table whose rows this role would only partly see.
pub(crate) fn rls_refusal(r: &Readable) -> Option<String> {
    r.rls_filters.then(|| {
        format!(
            "{} has row-level security and the role {} cannot bypass it: the import would copy only the rows its policies show, so it does not start; import as the table's owner or a role with BYPASSRLS (ALTER ROLE {} BYPASSRLS)",
            r.name,
            r.user,
            crate::sql::quote::ident(r.user)
        )
    })
}

/// Refuse an inheritance parent unless every child of it is imported too: pglab copies a
/// table's own rows (`COPY … TO`, like `FROM ONLY`), so a parent alone would be a silent
/// subset of what a query on it returns. With its children, each comes as a table of its
/// own and the rows are all there.
pub(crate) fn inheritance_refusal(r: &Readable, listed: &[TableName]) -> Option<String> {
    let missing: Vec<String> = r
        .children
        .iter()
        .filter(|c| !listed.contains(c))
        .map(|c| c.to_string())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} is an inheritance parent: alone it would bring only its own rows, not those of {}; add {} to the import (each becomes a table of its own, the rows all there)",
            r.name,
            missing.join(", "),
            missing
                .iter()
                .map(|m| format!("--table {m}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    })
}

/// The note said before the rows are read: what the open snapshot and locks hold back.
/// `read_bytes` is what the copies scan (a sample scans the whole table).
pub(crate) fn holds_back(tables: &[TableName], read_bytes: u64) -> String {
    let names: Vec<String> = tables.iter().map(|t| t.to_string()).collect();
    let secs = read_bytes as f64 / ASSUMED_READ_BYTES_PER_S;
    format!(
        "while it reads about {} on the source (≈{} at 100 MB/s, longer on a slower link) the import holds a repeatable-read snapshot there, so vacuum cannot remove rows deleted or updated after it began, and ACCESS SHARE locks on {}, so an ALTER TABLE, DROP, TRUNCATE, VACUUM FULL or REINDEX of them waits until it ends, and every query queued behind that DDL waits too; cancel the import (Ctrl-C) to let them go",
        format_bytes(read_bytes),
        format_seconds(secs.max(0.1)),
        names.join(", ")
    )
}

/// After a lock wait ran out (SQLSTATE 55P03): which lock, held by whom, and how to go on.
/// The session must no longer be in the failed transaction.
pub async fn lock_wait_sentence(c: &Client, oids: &[u32]) -> String {
    let holder = c
        .query_opt(
            "SELECT l.relation::regclass::text, l.mode, l.pid, coalesce(a.state, ''),
                    coalesce(left(regexp_replace(a.query, '\\s+', ' ', 'g'), 80), '')
               FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
              WHERE l.locktype = 'relation' AND l.relation = ANY($1::oid[])
                AND l.mode = 'AccessExclusiveLock' AND l.pid <> pg_backend_pid()
              ORDER BY l.granted DESC LIMIT 1",
            &[&oids],
        )
        .await
        .ok()
        .flatten();
    let waited = format!(
        "the import waited {LOCK_TIMEOUT_S} s (lock_timeout) for an ACCESS SHARE lock on the source and gave up, reading nothing"
    );
    match holder {
        Some(r) => {
            let (table, mode, pid): (String, String, i32) = (r.get(0), r.get(1), r.get(2));
            let (state, query): (String, String) = (r.get(3), r.get(4));
            let doing = if query.is_empty() {
                String::new()
            } else {
                format!(" ({state}: {query})")
            };
            format!(
                "{waited}: session {pid} holds {mode} on {table}{doing}; try again when it has finished, or end it if it is stuck (SELECT pg_terminate_backend({pid}))"
            )
        }
        None => format!(
            "{waited}: another session's DDL held a table it reads; try again when it has finished"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parent_needs_all_its_children() {
        let p = TableName::new("public", "p");
        let (c1, c2) = (TableName::new("public", "c1"), TableName::new("x", "c2"));
        let r = Readable {
            name: &p,
            user: "u",
            rls_filters: false,
            children: vec![c1.clone(), c2.clone()],
        };
        let s = inheritance_refusal(&r, &[p.clone(), c1.clone()]).unwrap();
        assert!(s.contains("not those of x.c2; add --table x.c2"), "{s}");
        assert!(inheritance_refusal(&r, &[p.clone(), c2, c1]).is_none());
        assert!(rls_refusal(&r).is_none());
    }

    #[test]
    fn holding_back_names_the_tables_and_a_duration() {
        let s = holds_back(&[TableName::new("public", "t")], 200 * 1024 * 1024);
        assert!(s.contains("about 200 MB"), "{s}");
        assert!(s.contains("≈2.0 s"), "{s}");
        assert!(s.contains("ACCESS SHARE locks on public.t"), "{s}");
    }
}
