//! index-build on an existing table, against real servers: on a server pglab did not start
//! it says what it will write (measured from the table, never "0 B") and refuses without
//! `--writes lab` or below the free space it needs; on the sandbox, the trial index it builds
//! on the user's own table is marked from its first moment, so after a `kill -9` of pglab
//! `pglab clean --dry-run` lists it and `pglab clean` drops it.

use crate::common;
use crate::common::source;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pglab::experiment::{self, ExperimentKind, ParamText, RunEvent, RunOptions};
use pglab::server::{Target, conninfo};

fn params(pairs: &[(&str, &str)]) -> ParamText {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `wr.customers` on the source cluster (60,000 rows, analyzed).
async fn customers() -> &'static source::SourceCluster {
    static SET: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    SET.get_or_init(|| async {
        source::shared()
            .admin()
            .await
            .batch_execute(
                "CREATE SCHEMA wr; CREATE TABLE wr.customers (id int PRIMARY KEY, email text, pad text);
                 INSERT INTO wr.customers SELECT g, md5(g::text), repeat('p', 100) FROM generate_series(1, 60000) g;
                 ANALYZE wr.customers;",
            )
            .await
            .unwrap();
    })
    .await;
    source::shared()
}

/// Run index-build on `target`; the notes and the error it failed with (None: finished).
async fn run(
    target: Arc<Target>,
    pairs: &[(&str, &str)],
    budget: Option<u64>,
) -> (Vec<String>, Option<String>) {
    let spec = ExperimentKind::IndexBuild
        .parse_spec(&params(pairs))
        .unwrap();
    let mut h = experiment::spawn(
        target,
        spec,
        RunOptions {
            schema: "wr_lab".into(),
            disk_budget: budget,
            ..RunOptions::default()
        },
    );
    loop {
        match tokio::time::timeout(Duration::from_secs(300), h.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            RunEvent::Finished(r) => return (r.notes, None),
            RunEvent::Failed { error, report } => return (report.notes, Some(error)),
            RunEvent::Cancelled(_) => panic!("cancelled"),
            _ => {}
        }
    }
}

/// The size in a "copies of about 3 MB" phrase, in bytes.
fn bytes_after(text: &str, lead: &str) -> u64 {
    let rest = &text[text.find(lead).unwrap_or_else(|| panic!("{lead}: {text}")) + lead.len()..];
    let mut words = rest.split_whitespace();
    let n: f64 = words.next().unwrap().parse().unwrap();
    let unit = words.next().unwrap().trim_end_matches([',', ';', '(']);
    let m = match unit {
        "B" => 1.0,
        "kB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        u => panic!("unit {u}"),
    };
    (n * m) as u64
}

#[tokio::test]
async fn on_another_server_it_says_what_it_writes_and_refuses_unless_allowed() {
    let src = customers().await;
    let admin = src.admin().await;
    let from = src.conninfo("postgres");
    // The command line: exit 2, one sentence, nothing written.
    let out = common::lab()
        .command()
        .args(["--db", &from, "run", "index-build", "--no-history"])
        .args([
            "--table",
            "wr.customers",
            "--column",
            "email",
            "--mwm",
            "1MB",
        ])
        .args(["--repeat", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "index-build on wr.customers writes on this server, which pglab did not start"
        ) && err.contains("pass --writes lab"),
        "{err}"
    );
    // The copy of the indexed column: 60,000 rows of a 33-byte md5 text, about 3.7 MB;
    // measured from the table, within a factor of two of what CREATE TABLE AS makes.
    admin
        .batch_execute("CREATE TEMP TABLE wr_probe AS SELECT email FROM wr.customers")
        .await
        .unwrap();
    let copy: i64 = admin
        .query_one("SELECT pg_relation_size('wr_probe')", &[])
        .await
        .unwrap()
        .get(0);
    let said = bytes_after(&err, "copies of about ");
    assert!(
        said as f64 > copy as f64 / 2.0 && (said as f64) < copy as f64 * 2.0,
        "said {said}, a copy is {copy}: {err}"
    );
    assert!(!err.contains("about 0 B"), "{err}");
    let schemas: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname IN ('pglab', 'wr_lab')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(schemas, 0, "a refused run writes nothing");
    let target = || {
        let p = conninfo::resolve(Some(&from), &conninfo::ProcessEnv).unwrap();
        Arc::new(Target::new(p, false).unwrap())
    };
    let pairs = [
        ("table", "wr.customers"),
        ("column", "email"),
        ("mwm", "1MB"),
        ("repeat", "2"),
        ("writes", "lab"),
    ];
    // Allowed, but below the free space it needs: refused before the copy.
    let (_, error) = run(target(), &pairs, Some(1 << 20)).await;
    let error = error.expect("refused");
    assert!(
        error.starts_with("not enough disk: the run needs about")
            && error.contains("only 1024 kB is free"),
        "{error}"
    );
    // Allowed: it says what it writes, then runs.
    let (notes, error) = run(target(), &pairs, None).await;
    assert_eq!(error, None);
    let note = notes
        .iter()
        .find(|n| n.contains("this run writes on") && n.contains("(--writes lab)"))
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert!(
        note.contains("built 2 times") && note.contains("of WAL"),
        "{note}"
    );
}

/// The marked trial index on `kill9.t`, when there is one now.
async fn marked_index(c: &tokio_postgres::Client) -> Option<String> {
    c.query_opt(
        "SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
          WHERE x.indrelid = 'kill9.t'::regclass AND obj_description(i.oid, 'pg_class') LIKE 'pglab:run=%'",
        &[],
    )
    .await
    .unwrap()
    .map(|r| r.get(0))
}

/// Whether, within 2 s, no other session is running a statement on `kill9` (checked twice,
/// 50 ms apart, so a statement still in the socket is read and seen).
async fn settled(c: &tokio_postgres::Client) -> bool {
    let started = Instant::now();
    let mut quiet = 0;
    while started.elapsed() < Duration::from_secs(2) {
        let busy: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity
                  WHERE pid <> pg_backend_pid() AND state <> 'idle' AND query ILIKE '%kill9%'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        quiet = if busy == 0 { quiet + 1 } else { 0 };
        if quiet == 2 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn signal(pid: u32, sig: i32) {
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

#[tokio::test]
async fn after_a_kill_9_clean_finds_and_drops_the_index_left_on_the_users_table() {
    let lab = common::lab();
    let sb = lab.target().connect().await.unwrap();
    sb.batch_execute(
        "CREATE SCHEMA kill9; CREATE TABLE kill9.t AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 40000) g;
         ANALYZE kill9.t;",
    )
    .await
    .unwrap();
    let mut child = lab
        .command()
        .args([
            "--keep-sandbox",
            "run",
            "index-build",
            "--no-history",
            "--table",
            "kill9.t",
            "--column",
            "v",
        ])
        .args(["--mwm", "1MB,64MB", "--repeat", "20"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Stop pglab the moment a built index is there (between two builds), check it is still
    // there, then kill it outright.
    let started = Instant::now();
    let left = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no index seen"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        if marked_index(&sb).await.is_some() {
            signal(pid, libc::SIGSTOP);
            // A statement pglab sent before it stopped still runs to its end on the server
            // (its DROP INDEX among them): look once none is running.
            if settled(&sb).await
                && let Some(name) = marked_index(&sb).await
            {
                signal(pid, libc::SIGKILL);
                break name;
            }
            signal(pid, libc::SIGCONT);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    child.wait().unwrap();
    // The killed pglab's sessions end; its advisory lock goes with them.
    let wait = Instant::now();
    loop {
        let n: i64 = sb
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if n == 0 || wait.elapsed() > Duration::from_secs(10) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(marked_index(&sb).await.as_deref(), Some(left.as_str()));
    let dry = lab
        .command()
        // The test lab's sandbox stays up for the other tests.
        .args(["--keep-sandbox", "clean", "--dry-run"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("would drop  kill9.{left}"))
                && l.contains("index-build trial index on")),
        "{text}"
    );
    assert_eq!(
        marked_index(&sb).await.as_deref(),
        Some(left.as_str()),
        "a dry run drops nothing"
    );
    let clean = lab
        .command()
        .args(["--keep-sandbox", "clean"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&clean.stdout);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(text.contains(&format!("dropped  kill9.{left}")), "{text}");
    assert_eq!(marked_index(&sb).await, None);
    let kept: i64 = sb
        .query_one("SELECT count(*) FROM kill9.t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 40000, "the user's table stays");
}
