//! A run with `--writes lab` on a server pglab did not start, killed with SIGKILL mid-run,
//! leaves its table in the lab schema; the next pglab run there finds it (its run's lock is
//! free): a read-only run says what is left and the statement that drops it, writing nothing;
//! a run that writes there itself drops it, and at its end nothing of pglab's is left on the
//! server, in the lab schema or outside it.

use crate::common;
use crate::common::source;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `pglab --db <source> run KIND --no-history ARGS`, with a data directory of its own.
fn pglab(c: &source::SourceCluster, kind: &str, args: &[&str]) -> Command {
    let dir = common::temp_dir("kill9");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pglab"));
    cmd.env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .env_remove("PGUSER")
        .args(["--db", &c.conninfo("postgres"), "run", kind, "--no-history"])
        .args(args);
    cmd
}

fn output(mut cmd: Command) -> (Output, String) {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

/// Every relation carrying a pglab mark, anywhere, and whether schema `pglab` is there.
async fn pglabs(a: &tokio_postgres::Client) -> (Vec<String>, bool) {
    let marked = a
        .query(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE obj_description(c.oid, 'pg_class') LIKE 'pglab:%' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let schema = a
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = 'pglab'", &[])
        .await
        .unwrap()
        .is_some();
    (marked, schema)
}

/// Wait until no session other than `a`'s holds an advisory lock (a killed pglab's sessions
/// end when the server sees their sockets close).
async fn locks_free(a: &tokio_postgres::Client) {
    let started = Instant::now();
    loop {
        let n: i64 = a
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if n == 0 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the killed run's lock is still held"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Start an ingest with `--writes lab` and kill it with SIGKILL once its first trial table
/// is there; the table's name.
async fn killed_mid_run(c: &source::SourceCluster, a: &tokio_postgres::Client) -> String {
    let mut child: Child = pglab(
        c,
        "ingest",
        &["--rows", "200k", "--repeat", "20", "--writes", "lab"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let started = Instant::now();
    let table = loop {
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no table seen"
        );
        let (marked, _) = pglabs(a).await;
        if let Some(t) = marked.into_iter().find(|t| t.starts_with("pglab.ingest_")) {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    locks_free(a).await;
    table
}

#[tokio::test]
async fn after_a_kill_9_the_next_run_finds_the_leftovers_and_a_writing_run_drops_them() {
    let c = source::shared();
    let a = c.admin().await;
    let table = killed_mid_run(c, &a).await;
    let (left, schema) = pglabs(&a).await;
    assert!(left.contains(&table) && schema, "{left:?}");
    let name = table.strip_prefix("pglab.").unwrap();

    // A run that only reads names what is left and the statement, and writes nothing.
    let before: String = a
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .unwrap()
        .get(0);
    let (out, err) = output(pglab(c, "query", &["--sql", "SELECT 1", "--repeat", "1"]));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("left by runs that were killed: ")
            && err.contains(&format!("{table} ("))
            && err.contains("this run only reads, so it leaves them")
            && err.contains(&format!("DROP TABLE \"pglab\".\"{name}\";")),
        "{err}"
    );
    let after: String = a
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(before, after, "the read-only run wrote WAL\n{err}");
    assert_eq!(pglabs(&a).await, (left, true), "{err}");

    // A run that writes there itself drops it, and leaves nothing behind at its end.
    let (out, err) = output(pglab(
        c,
        "ingest",
        &["--rows", "1000", "--repeat", "1", "--writes", "lab"],
    ));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "dropped what runs that were killed had left (their process gone, their lock free): "
        ) && err.contains(&format!("{table} (")),
        "{err}"
    );
    assert_eq!(pglabs(&a).await, (Vec::new(), false), "{err}");
}
