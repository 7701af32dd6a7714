//! `sandbox import` against a real second cluster, on the source's side: a role under
//! row-level security fails with a sentence instead of copying a subset, an inheritance
//! parent comes with its children or not at all, a DDL lock ends the wait with a sentence
//! naming it, and before the rows are read the import says what it holds back there.

use crate::common;
use crate::common::source;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pglab::import::{self, ImportEvent, ImportOptions, ImportSpec, Sample, TableName};
use pglab::server::{Target, conninfo};

fn target(conninfo: &str) -> Arc<Target> {
    let params = conninfo::resolve(Some(conninfo), &conninfo::ProcessEnv).unwrap();
    Arc::new(Target::new(params, false).unwrap())
}

/// Run an import of `tables` (all rows) to its end; every event, the last one final.
async fn import(from: &str, tables: &[&str]) -> Vec<ImportEvent> {
    let spec = ImportSpec {
        tables: tables
            .iter()
            .map(|t| TableName::parse(t).unwrap())
            .collect(),
        sample: Sample::All,
        seed: 1,
        indexes: true,
    };
    let mut h = import::spawn(
        target(from),
        common::lab().target(),
        spec,
        ImportOptions::default(),
    );
    let mut events = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(120), h.events.recv())
        .await
        .expect("the import answers")
    {
        let last = matches!(
            ev,
            ImportEvent::Finished(_) | ImportEvent::Failed { .. } | ImportEvent::Cancelled
        );
        events.push(ev);
        if last {
            break;
        }
    }
    events
}

/// The refusal sentence the import ended with.
fn refusal(events: &[ImportEvent]) -> String {
    match events.last() {
        Some(ImportEvent::Failed {
            error,
            refused: true,
        }) => error.clone(),
        other => panic!("not refused: {other:?}"),
    }
}

/// Rows the import brought, by table.
fn rows(events: &[ImportEvent]) -> Vec<(String, u64)> {
    match events.last() {
        Some(ImportEvent::Finished(r)) => r
            .records
            .iter()
            .map(|r| (r.table.to_string(), r.rows))
            .collect(),
        other => panic!("not finished: {other:?}"),
    }
}

async fn count(c: &tokio_postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

#[tokio::test]
async fn a_role_under_row_level_security_is_refused_not_given_a_subset() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA rls; CREATE TABLE rls.accounts (id int PRIMARY KEY, tenant int);
             INSERT INTO rls.accounts SELECT g, g % 4 FROM generate_series(1, 400) g;
             ALTER TABLE rls.accounts ENABLE ROW LEVEL SECURITY;
             CREATE POLICY only_tenant_1 ON rls.accounts FOR SELECT USING (tenant = 1);
             CREATE ROLE tenant_reader LOGIN; GRANT USAGE ON SCHEMA rls TO tenant_reader;
             GRANT SELECT ON rls.accounts TO tenant_reader;",
        )
        .await
        .unwrap();
    // As that role a plain SELECT sees a quarter of the rows: the subset the import refuses.
    let (reader, conn) =
        tokio_postgres::connect(&src.conninfo("tenant_reader"), tokio_postgres::NoTls)
            .await
            .unwrap();
    tokio::spawn(conn);
    assert_eq!(
        count(&reader, "SELECT count(*) FROM rls.accounts").await,
        100
    );
    let events = import(&src.conninfo("tenant_reader"), &["rls.accounts"]).await;
    let why = refusal(&events);
    assert!(
        why.contains(
            "rls.accounts has row-level security and the role tenant_reader cannot bypass it"
        ) && why.contains("BYPASSRLS"),
        "{why}"
    );
    // A role that bypasses it gets every row.
    admin
        .batch_execute("ALTER ROLE tenant_reader BYPASSRLS")
        .await
        .unwrap();
    let events = import(&src.conninfo("tenant_reader"), &["rls.accounts"]).await;
    assert_eq!(rows(&events), vec![("rls.accounts".to_string(), 400)]);
}

#[tokio::test]
async fn an_inheritance_parent_comes_with_its_children_or_not_at_all() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA inh; CREATE TABLE inh.events (id int, at date);
             CREATE TABLE inh.events_2025 () INHERITS (inh.events);
             CREATE TABLE inh.events_2026 (extra text) INHERITS (inh.events);
             INSERT INTO inh.events SELECT g, '2024-01-01' FROM generate_series(1, 10) g;
             INSERT INTO inh.events_2025 SELECT g, '2025-01-01' FROM generate_series(1, 20) g;
             INSERT INTO inh.events_2026 SELECT g, '2026-01-01', 'x' FROM generate_series(1, 30) g;",
        )
        .await
        .unwrap();
    let from = src.conninfo("postgres");
    let why = refusal(&import(&from, &["inh.events"]).await);
    assert!(
        why.contains("inh.events is an inheritance parent")
            && why.contains("not those of inh.events_2025, inh.events_2026")
            && why.contains("--table inh.events_2025 --table inh.events_2026"),
        "{why}"
    );
    let why = refusal(&import(&from, &["inh.events", "inh.events_2025"]).await);
    assert!(why.contains("not those of inh.events_2026;"), "{why}");
    let sb = common::lab().target().connect().await.unwrap();
    assert_eq!(
        count(
            &sb,
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'inh'"
        )
        .await,
        0,
        "a refused import writes nothing"
    );
    let events = import(&from, &["inh.events", "inh.events_2025", "inh.events_2026"]).await;
    let got = rows(&events);
    assert_eq!(
        got,
        vec![
            ("inh.events".to_string(), 10),
            ("inh.events_2025".to_string(), 20),
            ("inh.events_2026".to_string(), 30)
        ]
    );
    // Every row a query on the parent returns is in the sandbox.
    let whole = count(&admin, "SELECT count(*) FROM inh.events").await;
    assert_eq!(got.iter().map(|(_, n)| *n as i64).sum::<i64>(), whole);
}

#[tokio::test]
async fn a_ddl_lock_ends_the_wait_with_a_sentence_naming_it() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute("CREATE SCHEMA lk; CREATE TABLE lk.t (id int); INSERT INTO lk.t VALUES (1);")
        .await
        .unwrap();
    // The pid first: pg_stat_activity shows a session's last statement, which must be the
    // migration's.
    let pid: i32 = admin
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);
    // A migration that took its lock and has not committed yet.
    admin
        .batch_execute("BEGIN; ALTER TABLE lk.t ADD COLUMN v int;")
        .await
        .unwrap();
    let started = Instant::now();
    let why = refusal(&import(&src.conninfo("postgres"), &["lk.t"]).await);
    let waited = started.elapsed();
    admin.batch_execute("ROLLBACK").await.unwrap();
    assert!(
        why.contains("waited 5 s (lock_timeout) for an ACCESS SHARE lock")
            && why.contains(&format!("session {pid} holds AccessExclusiveLock on lk.t"))
            && why.contains("ALTER TABLE lk.t ADD COLUMN v int")
            && why.contains(&format!("pg_terminate_backend({pid})")),
        "{why}"
    );
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(30),
        "{waited:?}"
    );
}

#[tokio::test]
async fn before_reading_it_says_what_it_holds_back_on_the_source() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA hb; CREATE TABLE hb.t (id int, pad text);
             INSERT INTO hb.t SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g;",
        )
        .await
        .unwrap();
    let events = import(&src.conninfo("postgres"), &["hb.t"]).await;
    let note = events
        .iter()
        .position(
            |e| matches!(e, ImportEvent::Note(n) if n.contains("holds a repeatable-read snapshot")),
        )
        .expect("the note is given");
    let first_copy = events
        .iter()
        .position(|e| matches!(e, ImportEvent::Phase(p) if p.starts_with("copying")))
        .expect("a copy phase");
    assert!(note < first_copy, "said before the rows are read");
    let ImportEvent::Note(n) = &events[note] else {
        unreachable!()
    };
    assert!(
        n.contains("ACCESS SHARE locks on hb.t") && n.contains("vacuum cannot remove"),
        "{n}"
    );
    let size: i64 = count(&admin, "SELECT pg_table_size('hb.t')").await;
    let said = pglab::measure::units::format_bytes(size as u64);
    assert!(n.contains(&format!("about {said}")), "{n} / {said}");
    assert_eq!(rows(&events), vec![("hb.t".to_string(), 2000)]);
}
