//! `pglab sandbox import` against a second real cluster standing in for production: the round
//! trip is exact (every column's checksum), a sample is the size it should be and the same for
//! the same seed, keys, indexes and constraints come along, the source sees reads only, a
//! cancel leaves the sandbox as it was, and each refusal is one sentence with exit 2.

use crate::common;
use crate::common::source;

use std::sync::Arc;
use std::time::Duration;

use pglab::import::{self, ImportEvent, ImportOptions, ImportSpec, Sample, TableName};
use pglab::server::{Target, conninfo};
use source::SourceCluster;

/// The shared source cluster of this file.
fn source() -> &'static SourceCluster {
    source::shared()
}

fn source_target(conninfo: &str) -> Arc<Target> {
    let params = conninfo::resolve(Some(conninfo), &conninfo::ProcessEnv).unwrap();
    Arc::new(Target::new(params, false).unwrap())
}

fn spec(tables: &[&str], sample: Sample) -> ImportSpec {
    ImportSpec {
        tables: tables
            .iter()
            .map(|t| TableName::parse(t).unwrap())
            .collect(),
        sample,
        seed: 42,
        indexes: true,
    }
}

/// Run an import to its end; every event, the last one final.
async fn import(from: &str, spec: ImportSpec) -> Vec<ImportEvent> {
    let mut h = import::spawn(
        source_target(from),
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

fn finished(events: &[ImportEvent]) -> &import::ImportReport {
    match events.last() {
        Some(ImportEvent::Finished(r)) => r,
        other => panic!("not finished: {other:?}"),
    }
}

/// Per column of `table`: its name and an md5 of its values in primary-key order.
async fn checksums(c: &tokio_postgres::Client, table: &str) -> Vec<(String, String)> {
    c.batch_execute("SET TimeZone = 'UTC'").await.unwrap();
    let cols: Vec<String> = c
        .query(
            "SELECT attname::text FROM pg_attribute WHERE attrelid = $1::text::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            &[&table],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = Vec::new();
    for col in cols {
        let sum: Option<String> = c
            .query_one(
                &format!(
                    "SELECT md5(string_agg(coalesce(\"{col}\"::text, '<null>'), ',' ORDER BY id)) FROM {table}"
                ),
                &[],
            )
            .await
            .unwrap()
            .get(0);
        out.push((col, sum.unwrap_or_default()));
    }
    out
}

/// The first column of every row the query returns.
async fn strings(c: &tokio_postgres::Client, sql: &str) -> Vec<String> {
    let rows = c.query(sql, &[]).await.unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

/// A number the query returns.
async fn count(c: &tokio_postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

/// A table's constraints and indexes as their definitions.
async fn structure(c: &tokio_postgres::Client, table: &str) -> Vec<String> {
    let mut out: Vec<String> = c
        .query(
            "SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::text::regclass
             UNION ALL
             SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = $1::text::regclass
             ORDER BY 1",
            &[&table],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    out.sort();
    out
}

const SHOP: &str = "
    CREATE SCHEMA rt;
    CREATE TYPE rt.mood AS ENUM ('sad', 'ok', 'happy');
    CREATE DOMAIN rt.posint AS integer CHECK (VALUE > 0);
    CREATE TABLE rt.customers (
        id serial PRIMARY KEY, email text NOT NULL UNIQUE, m rt.mood DEFAULT 'ok', moods rt.mood[],
        doc jsonb, pic bytea, born date, score float8, created timestamptz DEFAULT now());
    CREATE TABLE rt.orders (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        customer_id int NOT NULL REFERENCES rt.customers (id) ON DELETE CASCADE,
        qty rt.posint NOT NULL, price numeric(10,2) CHECK (price >= 0), note text,
        total numeric GENERATED ALWAYS AS (qty * price) STORED,
        at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT orders_note_len CHECK (length(note) < 100));
    CREATE INDEX orders_customer ON rt.orders (customer_id);
    CREATE INDEX orders_note_lower ON rt.orders (lower(note)) WHERE note IS NOT NULL;
    INSERT INTO rt.customers (email, m, moods, doc, pic, born, score, created)
    SELECT 'c' || g || '@example.com', (ARRAY['sad','ok','happy'])[1 + g % 3]::rt.mood,
           CASE WHEN g % 4 = 0 THEN NULL ELSE ARRAY['ok', 'happy']::rt.mood[] END,
           jsonb_build_object('g', g, 'tags', jsonb_build_array('a', g % 7)),
           CASE WHEN g % 5 = 0 THEN NULL ELSE decode(md5(g::text), 'hex') END,
           date '1970-01-01' + g, g / 7.0, timestamptz '2020-01-01 00:00:00+00' + g * interval '1 minute'
      FROM generate_series(1, 2000) g;
    INSERT INTO rt.orders (customer_id, qty, price, note, at)
    SELECT 1 + g % 2000, 1 + g % 9, (g % 1000) / 7.0, CASE WHEN g % 6 = 0 THEN NULL ELSE 'note ' || g END,
           timestamptz '2021-01-01 00:00:00+00' + g * interval '1 second'
      FROM generate_series(1, 20000) g;
    ANALYZE rt.customers, rt.orders;
";

#[tokio::test]
async fn round_trip_keeps_every_value_key_index_and_constraint() {
    let src = source();
    let admin = src.admin().await;
    admin.batch_execute(SHOP).await.unwrap();
    // A password in the conninfo (trust ignores it) must never reach the sandbox.
    let from = format!("{} password=sekrit", src.conninfo("postgres"));
    let events = import(&from, spec(&["rt.orders", "rt.customers"], Sample::All)).await;
    let report = finished(&events);
    assert_eq!(report.records.len(), 2);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ImportEvent::Progress(p) if p.rows > 0)),
        "progress was reported"
    );
    let sb = common::lab().target().connect().await.unwrap();
    for t in ["rt.customers", "rt.orders"] {
        let want = checksums(&admin, t).await;
        assert_eq!(checksums(&sb, t).await, want, "{t}: every column equal");
        assert_eq!(structure(&sb, t).await, structure(&admin, t).await, "{t}");
    }
    // Row counts, the record the table carries, and where the sequences stand.
    let rec = import::record_of(&sb, &TableName::new("rt", "orders"))
        .await
        .unwrap()
        .expect("the record is in the comment");
    assert_eq!(rec.rows, 20000);
    assert_eq!(rec.format, "binary");
    assert!(rec.sample.is_none());
    let comments = strings(
        &sb,
        "SELECT coalesce(obj_description(oid, 'pg_class'), '') FROM pg_class",
    )
    .await;
    assert!(
        comments.iter().all(|c| !c.contains("sekrit")),
        "no password in the sandbox"
    );
    let customers = import::record_of(&sb, &TableName::new("rt", "customers"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        customers.format, "text",
        "an array of the source's enum goes as text"
    );
    let next = count(
        &sb,
        "SELECT nextval(pg_get_serial_sequence('rt.orders', 'id'))",
    )
    .await;
    assert_eq!(
        next, 20001,
        "the identity continues where the source's stands"
    );
    let next = count(&sb, "SELECT nextval('rt.customers_id_seq')").await;
    assert_eq!(next, 2001);
    // Nothing of the import's own is left.
    let staging = count(
        &sb,
        "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pglab_import_%'",
    )
    .await;
    assert_eq!(staging, 0);
    // The same import again replaces the tables whole.
    let again = import(
        &src.conninfo("postgres"),
        spec(&["rt.orders", "rt.customers"], Sample::All),
    )
    .await;
    finished(&again);
    assert_eq!(
        checksums(&sb, "rt.orders").await,
        checksums(&admin, "rt.orders").await
    );
}

/// `--indexes off`: the keys come along (a primary key is part of the table), the other
/// indexes do not.
#[tokio::test]
async fn indexes_off_keeps_the_keys_and_leaves_the_other_indexes() {
    let src = source();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA noidx;
             CREATE TABLE noidx.t (id int PRIMARY KEY, v text);
             CREATE INDEX t_v ON noidx.t (v);
             INSERT INTO noidx.t SELECT g, md5(g::text) FROM generate_series(1, 2000) g;
             ANALYZE noidx.t;",
        )
        .await
        .unwrap();
    let mut s = spec(&["noidx.t"], Sample::All);
    s.indexes = false;
    let events = import(&src.conninfo("postgres"), s).await;
    assert_eq!(finished(&events).records[0].rows, 2000);
    let sb = common::lab().target().connect().await.unwrap();
    let idx = strings(
        &sb,
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'noidx' AND tablename = 't' ORDER BY 1",
    )
    .await;
    assert_eq!(idx.len(), 1, "{idx:?}");
    assert!(
        idx[0].contains("UNIQUE") && idx[0].contains("(id)"),
        "{idx:?}"
    );
}

#[tokio::test]
async fn a_sample_is_the_size_it_should_be_and_repeatable() {
    let src = source();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA smp;
             CREATE TABLE smp.t (id int PRIMARY KEY, v text);
             INSERT INTO smp.t SELECT g, md5(g::text) FROM generate_series(1, 40000) g;
             ANALYZE smp.t;",
        )
        .await
        .unwrap();
    let sb = common::lab().target().connect().await.unwrap();
    let first = import(
        &src.conninfo("postgres"),
        spec(&["smp.t"], Sample::Percent(10.0)),
    )
    .await;
    let rows = finished(&first).records[0].rows;
    // Binomial(40000, 0.1): mean 4000, sd 60; ±5 sd.
    assert!((3700..=4300).contains(&rows), "{rows}");
    let loaded = count(&sb, "SELECT count(*) FROM smp.t").await;
    assert_eq!(loaded as u64, rows);
    let sums = checksums(&sb, "smp.t").await;
    // The physical order is kept: ids arrive ascending, as in the source's heap.
    let corr: f64 = sb
        .query_one(
            "SELECT correlation::float8 FROM pg_stats WHERE schemaname = 'smp' AND tablename = 't' AND attname = 'id'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(corr > 0.99, "{corr}");
    let again = import(
        &src.conninfo("postgres"),
        spec(&["smp.t"], Sample::Percent(10.0)),
    )
    .await;
    assert_eq!(
        finished(&again).records[0].rows,
        rows,
        "same seed, same rows"
    );
    assert_eq!(checksums(&sb, "smp.t").await, sums);
    let by_rows = import(
        &src.conninfo("postgres"),
        spec(&["smp.t"], Sample::Rows(1000)),
    )
    .await;
    let n = finished(&by_rows).records[0].rows;
    assert!((800..=1200).contains(&n), "--rows 1000 gave {n}");
    // A table never analyzed has no estimate: the import counts its rows for --rows.
    admin
        .batch_execute("CREATE TABLE smp.fresh AS SELECT g AS id FROM generate_series(1, 40000) g")
        .await
        .unwrap();
    let fresh = import(
        &src.conninfo("postgres"),
        spec(&["smp.fresh"], Sample::Rows(1000)),
    )
    .await;
    let n = finished(&fresh).records[0].rows;
    assert!(
        (800..=1200).contains(&n),
        "--rows 1000 of an unanalyzed table gave {n}"
    );
    let rec = import::record_of(&sb, &TableName::new("smp", "t"))
        .await
        .unwrap()
        .unwrap();
    let s = rec.sample.expect("a sample is recorded");
    assert_eq!((s.method.as_str(), s.seed), ("BERNOULLI", 42));
    assert!((s.percent - 2.5).abs() < 0.01, "{}", s.percent);
}

/// The source's catalogs, settings and statistics, to compare before and after.
async fn source_state(c: &tokio_postgres::Client) -> Vec<String> {
    c.batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .unwrap();
    let queries = [
        "SELECT oid::text || ' ' || relname || ' ' || relfilenode::text FROM pg_class ORDER BY oid",
        "SELECT oid::text || ' ' || nspname FROM pg_namespace ORDER BY oid",
        "SELECT oid::text || ' ' || typname FROM pg_type ORDER BY oid",
        "SELECT name || '=' || setting || ' ' || source FROM pg_settings ORDER BY name",
        "SELECT coalesce(array_to_string(setconfig, ','), '') FROM pg_db_role_setting ORDER BY 1",
        "SELECT relname || ' ins=' || n_tup_ins || ' upd=' || n_tup_upd || ' del=' || n_tup_del || ' hot=' || n_tup_hot_upd
                || ' live=' || n_live_tup || ' dead=' || n_dead_tup || ' vac=' || vacuum_count || ' an=' || analyze_count
           FROM pg_stat_user_tables ORDER BY relname",
        "SELECT 'db ins=' || tup_inserted || ' upd=' || tup_updated || ' del=' || tup_deleted || ' temp=' || temp_files
           FROM pg_stat_database WHERE datname = current_database()",
        "SELECT 'snapshots ' || count(*) FROM pg_ls_dir('pg_snapshots')",
        "SELECT 'prepared ' || count(*) FROM pg_prepared_xacts",
    ];
    let mut out = Vec::new();
    for q in queries {
        out.extend(strings(c, q).await);
    }
    out
}

#[tokio::test]
async fn the_source_sees_reads_only() {
    let src = source();
    let admin = src.admin().await;
    // A database of its own: no other test's setup moves its counters.
    admin
        .batch_execute("CREATE DATABASE untouched")
        .await
        .unwrap();
    let from = src
        .conninfo("postgres")
        .replace("dbname=postgres", "dbname=untouched");
    {
        let (c, conn) = tokio_postgres::connect(&from, tokio_postgres::NoTls)
            .await
            .unwrap();
        let h = tokio::spawn(conn);
        c.batch_execute(
            "CREATE SCHEMA ro; CREATE TYPE ro.kind AS ENUM ('a', 'b');
             CREATE TABLE ro.p (id serial PRIMARY KEY, k ro.kind, tags ro.kind[]);
             CREATE TABLE ro.c (id int PRIMARY KEY, p int REFERENCES ro.p, v text);
             CREATE INDEX c_v ON ro.c (v);
             INSERT INTO ro.p (k, tags) SELECT 'a', ARRAY['b']::ro.kind[] FROM generate_series(1, 500);
             INSERT INTO ro.c SELECT g, 1 + g % 500, md5(g::text) FROM generate_series(1, 5000) g;
             ANALYZE;",
        )
        .await
        .unwrap();
        drop(c);
        let _ = h.await; // the session's statistics are flushed when it ends
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (watch, conn) = tokio_postgres::connect(&from, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let before = source_state(&watch).await;
    let events = import(&from, spec(&["ro.c", "ro.p"], Sample::Percent(50.0))).await;
    finished(&events);
    let events = import(&from, spec(&["ro.c", "ro.p"], Sample::All)).await;
    finished(&events);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let after = source_state(&watch).await;
    let changed: Vec<_> = before.iter().zip(&after).filter(|(a, b)| a != b).collect();
    assert!(changed.is_empty(), "the source changed: {changed:?}");
    assert_eq!(before.len(), after.len());
    // The import's session is gone and left no transaction open.
    let open = count(&watch, "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'pglab%' AND state <> 'idle'").await;
    assert_eq!(open, 0);
}

#[tokio::test]
async fn a_cancelled_import_leaves_the_sandbox_as_it_was() {
    let src = source();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA cx; CREATE TYPE cx.k AS ENUM ('x', 'y');
             CREATE TABLE cx.big (id int PRIMARY KEY, k cx.k, pad text);
             INSERT INTO cx.big SELECT g, 'x', repeat(md5(g::text), 6) FROM generate_series(1, 400000) g;
             ANALYZE cx.big;",
        )
        .await
        .unwrap();
    let from = src.conninfo("postgres");
    let sb = common::lab().target().connect().await.unwrap();
    // A small sample first: the table a re-import would replace.
    let first = import(&from, spec(&["cx.big"], Sample::Percent(1.0))).await;
    let kept = finished(&first).records[0].rows;
    let sums = checksums(&sb, "cx.big").await;
    let mut h = import::spawn(
        source_target(&from),
        common::lab().target(),
        spec(&["cx.big"], Sample::All),
        ImportOptions::default(),
    );
    let end = loop {
        match tokio::time::timeout(Duration::from_secs(120), h.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            ImportEvent::Progress(p) if p.rows > 0 && p.rows < 400_000 => h.cancel.cancel(),
            e
            @ (ImportEvent::Finished(_) | ImportEvent::Failed { .. } | ImportEvent::Cancelled) => {
                break e;
            }
            _ => {}
        }
    };
    assert_eq!(end, ImportEvent::Cancelled);
    let rows = count(&sb, "SELECT count(*) FROM cx.big").await;
    assert_eq!(rows as u64, kept, "the earlier import stays whole");
    assert_eq!(checksums(&sb, "cx.big").await, sums);
    let rec = import::record_of(&sb, &TableName::new("cx", "big"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.rows, kept, "and so does its record");
    let staging = count(
        &sb,
        "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pglab_import_%'",
    )
    .await;
    assert_eq!(staging, 0, "no staging schema is left");
}

/// Run `pglab sandbox import` on the test lab's sandbox.
fn cli(from: &str, args: &[&str]) -> std::process::Output {
    common::lab()
        .command()
        // The test lab's sandbox stays up for the other tests.
        .args(["--keep-sandbox", "sandbox", "import", "--from", from])
        .args(args)
        .output()
        .unwrap()
}

/// Exit 2 and the last stderr line is one `pglab:` sentence holding `needle`.
fn refused(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.trim().lines().last().unwrap_or("");
    assert!(
        last.starts_with("pglab: ") && last.contains(needle),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

#[tokio::test]
async fn each_refusal_is_one_sentence_with_exit_2() {
    let src = source();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA cli; CREATE TABLE cli.secret (id int);
             CREATE TYPE cli.pair AS (a int, b int); CREATE TABLE cli.pairs (id int, p cli.pair);
             CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA cli TO reader;",
        )
        .await
        .unwrap();
    let from = src.conninfo("postgres");
    refused(
        &cli(&from, &["--table", "cli.secrets"]),
        "there is no table cli.secrets on the source",
    );
    refused(
        &cli(&src.conninfo("reader"), &["--table", "cli.secret"]),
        "no permission: the role reader may not read cli.secret",
    );
    refused(
        &cli(&from, &["--table", "cli.pairs"]),
        "has the composite type cli.pair, which pglab cannot recreate",
    );
    refused(
        &cli(&from, &["--table", "cli.secret", "--sample", "0"]),
        "--sample '0'",
    );
    let observe = common::lab()
        .command()
        .args([
            "--observe",
            "sandbox",
            "import",
            "--from",
            &from,
            "--table",
            "cli.secret",
        ])
        .output()
        .unwrap();
    refused(&observe, "look-only (--observe)");
    let sb = common::lab().target().connect().await.unwrap();
    let n = count(
        &sb,
        "SELECT count(*) FROM pg_namespace WHERE nspname = 'cli'",
    )
    .await;
    assert_eq!(n, 0, "nothing was written to the sandbox");
}

#[tokio::test]
async fn the_cli_imports_lists_and_clean_leaves_imports_alone() {
    let src = source();
    let admin = src.admin().await;
    // In a schema named like pglab's lab schema: still the user's data, never a leftover.
    admin
        .batch_execute(
            "CREATE SCHEMA pglab; CREATE TABLE pglab.kept (id int PRIMARY KEY, v text);
             INSERT INTO pglab.kept SELECT g, 'v' || g FROM generate_series(1, 3000) g; ANALYZE pglab.kept;",
        )
        .await
        .unwrap();
    let out = cli(&src.conninfo("postgres"), &["--table", "pglab.kept"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("imported pglab.kept: 3000 rows (all rows)"),
        "{text}"
    );
    let status = common::lab()
        .command()
        .args(["sandbox", "status"])
        .output()
        .unwrap();
    let st = String::from_utf8_lossy(&status.stdout);
    assert!(st.contains("imported tables"), "{st}");
    assert!(
        st.lines()
            .any(|l| l.contains("pglab.kept") && l.contains("from postgres@") && l.contains("ago")),
        "{st}"
    );
    let lab = common::lab();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let clean = lab
        .command()
        .args(["clean", "--dry-run", "--datasets", "--db", &db])
        .output()
        .unwrap();
    let ct = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success());
    assert!(
        !ct.contains("kept"),
        "an imported table is not a leftover: {ct}"
    );
}

#[test]
fn not_enough_disk_is_refused_before_anything_is_written() {
    let src = source();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        src.admin()
            .await
            .batch_execute(
                "CREATE SCHEMA disk; CREATE TABLE disk.wide (id int, pad text);
                 INSERT INTO disk.wide SELECT g, repeat('x', 500) FROM generate_series(1, 150000) g;
                 ANALYZE disk.wide;",
            )
            .await
            .unwrap();
    });
    let mnt = common::temp_dir("import-tmpfs");
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=80m,mode=0755", "tmpfs"])
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        common::skip_or_fail("import disk test: cannot mount a tmpfs here (needs root)");
        return;
    }
    let cmd = || {
        let mut c = std::process::Command::new(common::TestLab::bin());
        c.env("PGLAB_DATA_DIR", mnt.join("data"))
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE");
        c
    };
    let out = cmd()
        .args([
            "sandbox",
            "import",
            "--from",
            &src.conninfo("postgres"),
            "--table",
            "disk.wide",
        ])
        .output()
        .unwrap();
    let _ = cmd().args(["sandbox", "destroy"]).output();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    refused(&out, "not enough disk: the import needs about");
}

/// A query on imported tables names its data, and a join of a sample with a whole table is a
/// confounder of what was measured.
#[tokio::test]
async fn a_query_names_its_imported_data_and_warns_of_a_sample_joined_with_a_whole_table() {
    let src = source();
    src.admin()
        .await
        .batch_execute(
            "CREATE SCHEMA mix; CREATE TABLE mix.facts (id int, dim int);
             INSERT INTO mix.facts SELECT g, g % 100 FROM generate_series(1, 20000) g;
             CREATE TABLE mix.dims (id int PRIMARY KEY, label text);
             INSERT INTO mix.dims SELECT g, 'd' || g FROM generate_series(0, 99) g;
             ANALYZE mix.facts; ANALYZE mix.dims;",
        )
        .await
        .unwrap();
    let from = src.conninfo("postgres");
    for args in [
        &["--table", "mix.facts", "--sample", "20"][..],
        &["--table", "mix.dims"][..],
    ] {
        let out = cli(&from, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = common::lab()
        .command()
        .args([
            "--keep-sandbox",
            "run",
            "query",
            "--no-history",
            "--sql",
            "SELECT count(*) FROM mix.facts f JOIN mix.dims d ON d.id = f.dim",
            "--repeat",
            "3",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("data: mix.facts imported from") && text.contains("20% sample"),
        "{text}"
    );
    assert!(text.contains("data: mix.dims imported from"), "{text}");
    assert!(
        text.contains("joins mix.dims (all rows) with mix.facts (20% sample"),
        "{text}"
    );
}
