//! Safe on a real server: knobs only per session, leftovers found and dropped only when
//! marked, a killed pglab leaves nothing it cannot clean, and the sandbox it left is adopted.

use crate::common;

use std::time::{Duration, Instant};

use pglab::experiment::{self, ExperimentKind, ParamText, RunEvent, RunOptions};

async fn settings_state(
    client: &tokio_postgres::Client,
) -> (Vec<(String, String, String)>, Vec<String>) {
    let s = client
        .query(
            "SELECT name, setting, source FROM pg_settings ORDER BY name",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let d = client
        .query("SELECT setdatabase::text || ':' || setrole::text || ':' || array_to_string(setconfig, ',') FROM pg_db_role_setting ORDER BY 1", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    (s, d)
}

/// Run index-build with these fields (defaults for the rest) on `target` in lab schema
/// `schema`, to its end; the report, or a panic with the run's error.
async fn run_index_build(
    target: std::sync::Arc<pglab::server::Target>,
    schema: &str,
    fields: &[(&str, &str)],
) -> Box<pglab::experiment::RunReport> {
    let p: ParamText = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = ExperimentKind::IndexBuild.parse_spec(&p).unwrap();
    let mut h = experiment::spawn(
        target,
        spec,
        RunOptions {
            schema: schema.into(),
            ..RunOptions::default()
        },
    );
    loop {
        match h.events.recv().await.unwrap() {
            RunEvent::Finished(r) => return r,
            RunEvent::Failed { error, .. } => panic!("{error}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn runs_change_no_server_or_role_setting() {
    let lab = common::lab();
    let target = lab.target();
    let watcher = target.connect().await.unwrap();
    let before = settings_state(&watcher).await;
    run_index_build(
        target.clone(),
        "safety_settings",
        &[
            ("rows", "20k"),
            ("mwm", "1MB,64MB"),
            ("workers", "0,2"),
            ("repeat", "1"),
        ],
    )
    .await;
    let after = settings_state(&watcher).await;
    assert_eq!(before.0, after.0, "pg_settings changed");
    assert_eq!(before.1, after.1, "pg_db_role_setting changed");
}

#[tokio::test]
async fn clean_drops_only_marked_leftovers_of_dead_runs() {
    let lab = common::lab();
    let c = lab.target().connect().await.unwrap();
    c.batch_execute(
        "CREATE SCHEMA safety_clean;
         CREATE TABLE safety_clean.users_own (x int);
         CREATE TABLE safety_clean.dead_run (x int); COMMENT ON TABLE safety_clean.dead_run IS 'pglab:run=dead-1 test';
         CREATE TABLE safety_clean.live_run (x int); COMMENT ON TABLE safety_clean.live_run IS 'pglab:run=live-1 test';
         CREATE TABLE safety_clean.ds (id int); COMMENT ON TABLE safety_clean.ds IS 'pglab:dataset index-build test';",
    )
    .await
    .unwrap();
    // A live run holds its advisory lock.
    let live = lab.target().connect().await.unwrap();
    pglab::experiment::lab::leftovers::hold_run_lock(&live, "live-1")
        .await
        .unwrap();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let out = lab
        .command()
        .args([
            "clean",
            "--dry-run",
            "--schema",
            "safety_clean",
            "--db",
            &db,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("would drop  safety_clean.dead_run"), "{text}");
    assert!(text.contains("keep  safety_clean.live_run"), "{text}");
    assert!(text.contains("keep  safety_clean.ds"), "{text}");
    assert!(
        !text.contains("users_own"),
        "unmarked tables are never listed: {text}"
    );
    let out = lab
        .command()
        .args(["clean", "--schema", "safety_clean", "--db", &db])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("dropped  safety_clean.dead_run"));
    let names: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'safety_clean' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(names, ["ds", "live_run", "users_own"]);
    drop(live);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let out = lab
        .command()
        .args([
            "clean",
            "--datasets",
            "--schema",
            "safety_clean",
            "--db",
            &db,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let names: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'safety_clean' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        names,
        ["users_own"],
        "the user's own table is never touched"
    );
}

/// The shared test sandbox runs other tests' builds at the same time, and an index on a pglab
/// dataset counts as in use while any pglab run holds its lock (clean cannot tell whose build
/// it is): wait, as the refusal tells a user to, for those runs to end.
fn until_no_run_is_live(run: impl Fn() -> std::process::Output) -> std::process::Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let out = run();
        let busy = String::from_utf8_lossy(&out.stderr).contains("is still using schema");
        if !busy || std::time::Instant::now() > deadline {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

#[tokio::test]
async fn drop_schema_drops_only_a_schema_of_pglabs_own_that_holds_nothing_else() {
    let lab = common::lab();
    let c = lab.target().connect().await.unwrap();
    c.batch_execute(
        "CREATE SCHEMA safety_drop; COMMENT ON SCHEMA safety_drop IS 'pglab: schema created by pglab';
         CREATE TABLE safety_drop.ds (id serial); COMMENT ON TABLE safety_drop.ds IS 'pglab:dataset index-build test';
         CREATE INDEX ON safety_drop.ds (id);
         CREATE TABLE safety_drop.dead_run (x int); COMMENT ON TABLE safety_drop.dead_run IS 'pglab:run=dead-2 test';
         CREATE VIEW safety_drop.users_view AS SELECT 1 AS one;
         CREATE SCHEMA safety_users;",
    )
    .await
    .unwrap();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let clean = |extra: &[&str], schema: &str| {
        until_no_run_is_live(|| {
            lab.command()
                .args(extra)
                .args(["--db", &db, "--schema", schema, "clean", "--drop-schema"])
                .output()
                .unwrap()
        })
    };
    let exists = |name: &'static str| {
        let c = &c;
        async move {
            c.query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&name])
                .await
                .unwrap()
                .is_some()
        }
    };
    // A foreign object keeps the schema, and the sentence names it.
    let out = clean(&[], "safety_drop");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("also holds an object that is not pglab's") && err.contains("users_view"),
        "{err}"
    );
    assert!(exists("safety_drop").await);
    c.batch_execute("DROP VIEW safety_drop.users_view")
        .await
        .unwrap();
    // Look-only and dry runs say what would go and drop nothing.
    for extra in [&["--observe"][..], &[]] {
        let out = if extra.is_empty() {
            until_no_run_is_live(|| {
                lab.command()
                    .args([
                        "--db",
                        &db,
                        "--schema",
                        "safety_drop",
                        "clean",
                        "--drop-schema",
                        "--dry-run",
                    ])
                    .output()
                    .unwrap()
            })
        } else {
            clean(extra, "safety_drop")
        };
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("would drop  safety_drop.ds"), "{text}");
        assert!(text.contains("would drop schema safety_drop"), "{text}");
        assert!(exists("safety_drop").await);
    }
    // Then it goes, datasets and the sequence a dataset owns included.
    let out = clean(&[], "safety_drop");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("dropped schema safety_drop"), "{text}");
    assert!(!exists("safety_drop").await);
    // A schema pglab did not create is never dropped.
    let out = clean(&[], "safety_users");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("was not created by pglab"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(exists("safety_users").await);
}

#[test]
fn sigkill_mid_run_then_clean_and_adopt_the_sandbox() {
    let dir = common::temp_dir("sigkill");
    let cmd = || {
        let mut c = std::process::Command::new(common::TestLab::bin());
        c.env("PGLAB_DATA_DIR", dir.join("data"))
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE");
        c
    };
    let mut child = cmd()
        .args([
            "run",
            "index-build",
            "--rows",
            "2M",
            "--key",
            "uuid",
            "--order",
            "random",
            "--repeat",
            "1",
            "--mwm",
            "1MB",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the dataset is being generated, then kill -9.
    let started = Instant::now();
    let history = dir.join("data").join("history.jsonl");
    loop {
        std::thread::sleep(Duration::from_millis(100));
        // A COPY backend of this test's own sandbox (other servers on the machine may be
        // copying too): its parent is this sandbox's postmaster.
        let postmaster: Option<String> =
            std::fs::read_to_string(dir.join("data/sandbox/data/postmaster.pid"))
                .ok()
                .and_then(|t| t.lines().next().map(|l| l.trim().to_string()));
        let sb = postmaster.is_some_and(|pm| {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                let copying = std::fs::read(e.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains("COPY"))
                    .unwrap_or(false);
                let parent = std::fs::read_to_string(e.path().join("stat"))
                    .ok()
                    .and_then(|st| {
                        st.rsplit_once(')')
                            .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(String::from))
                    });
                copying && parent.as_deref() == Some(pm.as_str())
            })
        });
        if sb || started.elapsed() > Duration::from_secs(30) {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        common::server_processes(&dir.to_string_lossy()) > 0,
        "the sandbox outlives a SIGKILLed pglab"
    );
    let out = cmd().args(["clean"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("dropped  pglab.ib_uuid_random_2000000_s42"),
        "{text}"
    );
    // The next pglab adopted the orphaned server and, as its last user, stopped it.
    for _ in 0..50 {
        if common::server_processes(&dir.to_string_lossy()) == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(common::server_processes(&dir.to_string_lossy()), 0);
    // History is readable (the killed run never wrote a half line).
    if let Ok(h) = std::fs::read_to_string(&history) {
        for line in h.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
    }
    let _ = cmd().args(["sandbox", "destroy"]).output();
}

#[tokio::test]
async fn index_build_uses_no_more_connections_than_it_declares() {
    let lab = common::lab();
    // Its own database, so other tests' sessions are not counted.
    lab.target()
        .connect()
        .await
        .unwrap()
        .batch_execute("CREATE DATABASE conns")
        .await
        .unwrap();
    let mut params = lab.sandbox.conn_params(lab.port);
    params.dbname = "conns".into();
    let target = std::sync::Arc::new(pglab::server::Target::new(params, true).unwrap());
    let watcher = target.connect().await.unwrap();
    let p: ParamText = [
        ("rows", "50k"),
        ("order", "sorted,random"),
        ("mwm", "1MB,64MB"),
        ("workers", "0,2"),
        ("repeat", "2"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let spec = ExperimentKind::IndexBuild.parse_spec(&p).unwrap();
    let declared = spec.estimate().connections as i64;
    let mut h = experiment::spawn(
        target.clone(),
        spec,
        RunOptions {
            schema: "safety_conns".into(),
            ..RunOptions::default()
        },
    );
    let mut peak = 0i64;
    loop {
        tokio::select! {
            ev = h.events.recv() => match ev.unwrap() {
                RunEvent::Finished(_) => break,
                RunEvent::Failed { error, .. } => panic!("{error}"),
                _ => {}
            },
            _ = tokio::time::sleep(Duration::from_millis(20)) => {
                let n: i64 = watcher
                    .query_one("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name = 'pglab' AND pid <> pg_backend_pid() AND datname = 'conns'", &[])
                    .await
                    .unwrap()
                    .get(0);
                peak = peak.max(n);
            }
        }
    }
    eprintln!("index-build peak connections: {peak} (declared {declared})");
    assert!(peak <= declared, "peak {peak} > declared {declared}");
}

/// Look-only writes nothing: the disk probes and experiments are refused with a sentence
/// that names --observe, before anything is written.
#[test]
fn observe_refuses_the_disk_probes_and_runs() {
    let lab = common::lab();
    let db = format!(
        "host={} port={} user=pglab dbname=pglab",
        lab.sandbox.root.display(),
        lab.port
    );
    let probe_dir = common::temp_dir("observe-probe");
    let out = lab
        .command()
        .args(["--observe", "--db", &db, "probe", "--disk", "--probe-dir"])
        .arg(&probe_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("look-only (--observe)"), "{err}");
    assert_eq!(
        std::fs::read_dir(&probe_dir).unwrap().count(),
        0,
        "nothing written"
    );
    let out = lab
        .command()
        .args([
            "--observe",
            "--db",
            &db,
            "run",
            "index-build",
            "--rows",
            "1k",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("look-only (--observe)"), "{err}");
}

/// Look-only means it for `clean` too: with --observe it lists what it would drop and drops
/// nothing, even with a real leftover of a dead run in the lab schema.
#[tokio::test]
async fn observe_clean_drops_nothing() {
    // A sandbox of its own: the table it marks is a dead run's leftover, which any writing
    // run of this file's other tests on a shared sandbox would rightly drop meanwhile.
    let lab = common::own_lab();
    let c = lab.target().connect().await.unwrap();
    c.batch_execute(
        "CREATE SCHEMA safety_observe;
         CREATE TABLE safety_observe.dead_run (x int); COMMENT ON TABLE safety_observe.dead_run IS 'pglab:run=dead-observe test';",
    )
    .await
    .unwrap();
    let db = lab.db();
    for extra in [&[][..], &["--dry-run"][..], &["--datasets"][..]] {
        let out = lab
            .command()
            .args([
                "--observe",
                "--db",
                &db,
                "clean",
                "--schema",
                "safety_observe",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {err}{text}");
        assert!(
            text.contains("would drop  safety_observe.dead_run"),
            "look-only lists what it would drop: {text}"
        );
        assert!(
            text.contains("look-only (--observe): nothing was dropped"),
            "{text}"
        );
    }
    let left: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'safety_observe' AND tablename = 'dead_run'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 1, "the leftover is still there");
    c.batch_execute("DROP SCHEMA safety_observe CASCADE")
        .await
        .unwrap();
}

/// A database of its own on the lab's sandbox, with `settings` (`ALTER DATABASE … SET`): a
/// session on the sandbox's own database and a target on the new one.
async fn own_database(
    name: &str,
    settings: &[&str],
) -> (
    tokio_postgres::Client,
    std::sync::Arc<pglab::server::Target>,
) {
    let lab = common::lab();
    let admin = lab.target().connect().await.unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    for set in settings {
        admin
            .batch_execute(&format!("ALTER DATABASE {name} SET {set}"))
            .await
            .unwrap();
    }
    let mut params = lab.sandbox.conn_params(lab.port);
    params.dbname = name.into();
    let target = std::sync::Arc::new(pglab::server::Target::new(params, true).unwrap());
    (admin, target)
}

/// The CVE-2018-1058 pattern: a function in `public` that matches pglab's call better than
/// the built-in one (here `obj_description(oid, text)` against the catalog's `(oid, name)`,
/// which an unknown literal resolves to) would run as pglab's role, often a superuser. Every
/// session pglab opens — experiment sessions and its own cleanup — resolves names in
/// pg_catalog and the lab schema only.
#[tokio::test]
async fn names_never_resolve_in_public() {
    let (admin, target) = own_database("hijack", &[]).await;
    let c = target.connect().await.unwrap();
    c.batch_execute(
        "CREATE TABLE public.hijacked (who text, what text);
         CREATE FUNCTION public.obj_description(oid, text) RETURNS text LANGUAGE sql AS
           $$ INSERT INTO public.hijacked VALUES (current_user, 'obj_description') RETURNING 'pglab:run=hijack' $$;
         CREATE FUNCTION public.hashtext(varchar) RETURNS int LANGUAGE sql AS
           $$ INSERT INTO public.hijacked VALUES (current_user, 'hashtext') RETURNING 1 $$;",
    )
    .await
    .unwrap();
    run_index_build(
        target.clone(),
        "safety_hijack",
        &[("rows", "2k"), ("mwm", "1MB"), ("repeat", "1")],
    )
    .await;
    // pglab's cleanup of leftovers goes through the same sessions.
    let objects = pglab::experiment::lab::leftovers::lab_objects(&c, "safety_hijack")
        .await
        .unwrap();
    assert!(
        objects.iter().all(|o| o.comment != "pglab:run=hijack"),
        "{objects:?}"
    );
    let calls: Vec<String> = c
        .query("SELECT what FROM public.hijacked", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(calls.is_empty(), "functions in public ran: {calls:?}");
    drop(c);
    admin
        .batch_execute("DROP DATABASE hijack WITH (FORCE)")
        .await
        .unwrap();
}

/// Values and names reach the server as parameters (`set_config`), never spliced into SQL:
/// a backslash survives a server with `standard_conforming_strings = off`, where a quoted
/// literal would read it as an escape.
#[tokio::test]
async fn a_backslash_in_a_setting_survives_a_legacy_server() {
    let (admin, target) = own_database(
        "legacy",
        &[
            "standard_conforming_strings = off",
            "escape_string_warning = off",
        ],
    )
    .await;
    let value = r"C:\temp\n'x";
    // The literal quoting pglab keeps for DDL that takes no parameters reads back the same.
    let c = target.connect().await.unwrap();
    let back: String = c
        .query_one(
            &format!("SELECT {}::text", pglab::sql::quote::literal(value)),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(back, value);
    let set = format!("application_name={value}");
    let report = run_index_build(
        target.clone(),
        "safety_legacy",
        &[
            ("rows", "2k"),
            ("mwm", "1MB"),
            ("repeat", "1"),
            ("set", &set),
        ],
    )
    .await;
    let json = serde_json::to_value(&report).unwrap();
    let trials = json["trials"].as_array().expect("trials");
    assert!(!trials.is_empty());
    for t in trials {
        assert_eq!(t["settings"]["application_name"], value, "{t}");
    }
    drop(c);
    admin
        .batch_execute("DROP DATABASE legacy WITH (FORCE)")
        .await
        .unwrap();
}
