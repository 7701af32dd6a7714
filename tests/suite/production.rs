//! `run query` on a server pglab did not start (issue 34), against real clusters the tests
//! start themselves (`common::source`): a setup with COMMIT refused before anything runs and
//! the rows of the server's table untouched; a setup that writes a table of the server's
//! rolled back before its transaction could commit, said so only as the server confirmed it;
//! a trailing comment that cannot swallow pglab's transaction control; a role with SELECT
//! only sweeping `work_mem` on a primary without a byte of WAL of its own and on a streaming
//! hot standby of it; the temp-file belt stopping a spill past `--max-temp`.

use crate::common;
use crate::common::source;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use source::SourceCluster;

/// Run pglab with a data directory of its own; (exit code, stdout, stderr).
fn pglab(data: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", data.join("data"))
        .env("PGLAB_CONFIG_DIR", data.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .env_remove("PGUSER")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn data_dir(tag: &str) -> PathBuf {
    common::temp_dir(tag)
}

async fn count(c: &tokio_postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

#[tokio::test]
async fn a_setup_with_commit_is_refused_before_anything_runs() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute(
            "CREATE SCHEMA q_commit; CREATE TABLE q_commit.t AS SELECT g AS id FROM generate_series(1, 100) g",
        )
        .await
        .unwrap();
    let rows = "SELECT count(*) FROM q_commit.t";
    let db = src.conninfo("postgres");
    let data = data_dir("q-commit");
    let base = [
        "--db",
        db.as_str(),
        "run",
        "query",
        "--sql",
        "SELECT count(*) FROM q_commit.t",
        "--repeat",
        "1",
        "--no-history",
    ];
    for extra in [&[][..], &["--writes", "rollback"][..]] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--setup", "COMMIT; DELETE FROM q_commit.t WHERE id < 50"]);
        args.extend_from_slice(extra);
        let (code, _, err) = pglab(&data, &args);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("setup: COMMIT ends or changes the transaction pglab runs the setup in"),
            "{err}"
        );
        assert!(!err.contains("rolled back"), "nothing ran: {err}");
        assert_eq!(count(&admin, rows).await, 100, "the rows are untouched");
    }

    // Past the grammar, a setup that deletes rows of the server's table: the server is asked
    // before the setup's transaction may commit; rolled back, and said so as it confirmed it.
    let mut args = base.to_vec();
    args.extend_from_slice(&[
        "--writes",
        "rollback",
        "--setup",
        "CREATE TEMP TABLE s AS SELECT 1 AS a; DELETE FROM q_commit.t WHERE id < 50",
    ]);
    let (code, _, err) = pglab(&data, &args);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("rows of q_commit.t"), "{err}");
    assert!(
        err.contains("rolled back (the server confirmed it)"),
        "{err}"
    );
    assert_eq!(count(&admin, rows).await, 100, "the DELETE was rolled back");

    // A setup of temporary tables runs on the measuring session; no lab schema is made.
    let (code, out, err) = pglab(
        &data,
        &[
            "--db",
            &db,
            "run",
            "query",
            "--writes",
            "rollback",
            "--setup",
            "CREATE TEMP TABLE s AS SELECT g FROM generate_series(1, 1000) g",
            "--sql",
            "SELECT count(*) FROM s WHERE g > 10",
            "--repeat",
            "2",
            "--no-history",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        format!("{out}{err}").contains("as temporary tables"),
        "{out}{err}"
    );
    assert_eq!(
        count(
            &admin,
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'pglab'"
        )
        .await,
        0,
        "no lab schema on a server pglab did not start"
    );
    // Without --writes rollback the same setup is refused: it writes.
    let mut args = base.to_vec();
    args.extend_from_slice(&["--setup", "CREATE TEMP TABLE s (a int)"]);
    let (code, _, err) = pglab(&data, &args);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("needs --writes rollback"), "{err}");
    let _ = std::fs::remove_dir_all(&data);
}

/// The longest transaction of pglab's sessions on the server now, in seconds.
async fn pglab_xact_age(c: &tokio_postgres::Client) -> f64 {
    c.query_one(
        "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0)::float8 FROM pg_stat_activity
          WHERE application_name LIKE 'pglab%' AND pid <> pg_backend_pid()",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn a_trailing_comment_cannot_swallow_pglabs_transaction_control() {
    let src = source::shared();
    let admin = src.admin().await;
    let db = src.conninfo("postgres");
    let data = data_dir("q-comment");
    let (code, _, err) = pglab(
        &data,
        &[
            "--db",
            &db,
            "run",
            "query",
            "--sql",
            "SELECT 1 /* x",
            "--no-history",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("unterminated /* comment"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");

    let (code, out, err) = pglab(
        &data,
        &[
            "--db",
            &db,
            "run",
            "query",
            "--sql",
            "SELECT 1 -- x",
            "--repeat",
            "5",
            "--no-history",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");

    // While a longer run goes on, no pglab transaction outlives its trial.
    let (db2, data2) = (db.clone(), data.clone());
    let run = std::thread::spawn(move || {
        let t0 = Instant::now();
        let r = pglab(
            &data2,
            &[
                "--db",
                &db2,
                "run",
                "query",
                "--sql",
                "SELECT pg_sleep(0.02) -- x",
                "--repeat",
                "40",
                "--no-history",
            ],
        );
        (r, t0.elapsed())
    });
    let mut oldest: f64 = 0.0;
    while !run.is_finished() {
        oldest = oldest.max(pglab_xact_age(&admin).await);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let ((code, out, err), took) = run.join().unwrap();
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(took > Duration::from_millis(900), "the run lasted {took:?}");
    assert!(
        oldest < 0.5,
        "a pglab transaction lived {oldest:.2} s in a run of {took:?}: the comment swallowed the COMMIT"
    );
    let idle = count(
        &admin,
        "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'",
    )
    .await;
    assert_eq!(idle, 0, "no session left idle in transaction");
    let _ = std::fs::remove_dir_all(&data);
}

/// What a run must not move on the primary: tuples written in the database, relations and
/// schemas in its catalog.
async fn footprint(c: &tokio_postgres::Client) -> (i64, i64, i64, i64, i64) {
    let r = c
        .query_one(
            "SELECT tup_inserted, tup_updated, tup_deleted,
                    (SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_namespace)
               FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))
}

/// WAL records since `from` that are not the server's own background bookkeeping (a running
/// transactions snapshot, a checkpoint): what pglab would have written.
async fn wal_written_since(c: &tokio_postgres::Client, from: &str) -> Vec<String> {
    let moved: bool = c
        .query_one(
            "SELECT pg_current_wal_flush_lsn() > $1::text::pg_lsn",
            &[&from],
        )
        .await
        .unwrap()
        .get(0);
    if !moved {
        return Vec::new();
    }
    c.query(
        "SELECT resource_manager || ' ' || record_type FROM pg_get_wal_records_info_till_end_of_wal($1::text::pg_lsn)
          WHERE resource_manager NOT IN ('Standby', 'XLOG')",
        &[&from],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

async fn wait_for_replay(standby: &SourceCluster) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = standby.admin().await;
        if let Ok(r) = c.query_one("SELECT count(*) FROM public.t", &[]).await
            && r.get::<_, i64>(0) == 20000
        {
            return;
        }
        assert!(Instant::now() < deadline, "the standby did not catch up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn sweep_as_reader(data: &std::path::Path, conninfo: &str) -> String {
    let (code, out, err) = pglab(
        data,
        &[
            "--db",
            conninfo,
            "run",
            "query",
            "--sql",
            "SELECT id FROM t ORDER BY pad LIMIT 5",
            "--set",
            "work_mem=1MB,64MB",
            "--repeat",
            "2",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    format!("{out}{err}")
}

#[tokio::test]
async fn a_select_only_role_sweeps_without_writing_on_the_primary_and_on_its_hot_standby() {
    let base = common::temp_dir("q-prod");
    let primary = SourceCluster::start(&base);
    let admin = primary.admin().await;
    admin
        .batch_execute(
            "CREATE ROLE reader LOGIN; GRANT pg_read_all_data TO reader;
             CREATE TABLE public.t AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, 20000) g;
             CREATE EXTENSION pg_walinspect",
        )
        .await
        .unwrap();
    for sql in [
        "CREATE DATABASE ro",
        "ALTER DATABASE ro SET default_transaction_read_only = on",
        // Dead catalog rows of the statements above would be pruned by any later reader
        // (PostgreSQL's own on-access pruning, WAL that is not the run's): vacuumed first.
        "VACUUM",
        "CHECKPOINT",
    ] {
        admin.batch_execute(sql).await.unwrap();
    }
    let standby = primary.standby(&base);
    wait_for_replay(&standby).await;
    let data = base.join("pglab");

    let lsn: String = admin
        .query_one("SELECT pg_current_wal_flush_lsn()::text", &[])
        .await
        .unwrap()
        .get(0);
    // The setup's own counters reach pg_stat_database first.
    admin
        .batch_execute("SELECT pg_stat_force_next_flush()")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let before = footprint(&admin).await;
    let said = sweep_as_reader(&data, &primary.conninfo("reader"));
    assert!(said.contains("work_mem=64MB"), "{said}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        footprint(&admin).await,
        before,
        "nothing written in the database"
    );
    let wal = wal_written_since(&admin, &lsn).await;
    assert!(wal.is_empty(), "the run wrote WAL: {wal:?}");
    // The results stay in pglab's own data directory.
    let history = std::fs::read_to_string(data.join("data").join("history.jsonl")).unwrap();
    assert!(
        history.contains("work_mem=1MB"),
        "the run is in the history"
    );

    // Look-only, the primary names its standby and the standby says how far it lags.
    let (code, out, err) = pglab(
        &data,
        &[
            "--observe",
            "--db",
            &primary.conninfo("reader"),
            "probe",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        j["server"]["replicas"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    let (code, out, err) = pglab(
        &data,
        &["--observe", "--db", &standby.conninfo("reader"), "probe"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("standby  replay "), "{out}");
    // The same sweep on the hot standby: it says it is one, and how far it lags.
    let said = sweep_as_reader(&data, &standby.conninfo("reader"));
    assert!(said.contains("hot standby"), "{said}");
    assert!(said.contains("behind"), "{said}");
    // What writes is refused there before anything runs, with the reason.
    let (code, _, err) = pglab(
        &data,
        &[
            "--db",
            &standby.conninfo("reader"),
            "run",
            "query",
            "--sql",
            "DELETE FROM t",
            "--writes",
            "rollback",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--writes rollback writes"), "{err}");
    assert!(err.contains("standby"), "{err}");

    // A database whose transactions default to read-only.
    let ro = primary
        .conninfo("reader")
        .replace("dbname=postgres", "dbname=ro");
    let (code, out, err) = pglab(
        &data,
        &[
            "--db",
            &ro,
            "run",
            "query",
            "--sql",
            "SELECT count(*) FROM pg_class",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    let wal = wal_written_since(&admin, &lsn).await;
    assert!(wal.is_empty(), "the runs wrote WAL: {wal:?}");
    drop(standby);
    drop(primary);
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test]
async fn a_spill_past_max_temp_stops_the_run_naming_the_setting() {
    let src = source::shared();
    let admin = src.admin().await;
    admin
        .batch_execute("DO $$BEGIN CREATE ROLE spill_reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$")
        .await
        .unwrap();
    let data = data_dir("q-temp");
    let sql = "SELECT g FROM generate_series(1, 300000) g ORDER BY g DESC OFFSET 299999";
    // A superuser: the server's own temp_file_limit stops it. A plain role: the spill the
    // untimed EXPLAIN ANALYZE reports stops the run before its timed trials.
    for (user, how) in [
        ("postgres", "temp_file_limit"),
        ("spill_reader", "EXPLAIN ANALYZE wrote"),
    ] {
        let (code, out, err) = pglab(
            &data,
            &[
                "--db",
                &src.conninfo(user),
                "run",
                "query",
                "--sql",
                sql,
                "--set",
                "work_mem=64kB",
                "--max-temp",
                "1MB",
                "--repeat",
                "1",
                "--no-history",
            ],
        );
        assert_eq!(code, Some(1), "{user}: {out}{err}");
        assert!(err.contains("--max-temp 1"), "{user}: {err}");
        assert!(err.contains("work_mem=64kB"), "{user}: {err}");
        assert!(err.contains(how), "{user}: {err}");
    }
    let _ = std::fs::remove_dir_all(&data);
}
