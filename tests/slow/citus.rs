//! Citus: a real 2-worker cluster started by pglab's own sandbox code (`--citus-workers 2`),
//! experiments on distributed tables, cleanup across nodes, and the refusal on a plain
//! server. One cluster for the whole file, in one test, so that a 2-core CI machine runs
//! three postmasters at a time, not six.

use crate::common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestLab, server_processes, skip_or_fail, temp_dir};
use pglab::server::CitusSandbox;
use pglab::server::cluster::citus_missing;
use pglab::server::pgbin;

/// pglab on the 2-worker Citus sandbox of `dir`.
fn pglab(dir: &std::path::Path, args: &[&str]) -> Output {
    let mut all = vec!["--citus-workers", "2"];
    all.extend_from_slice(args);
    plain(dir, &all)
}

/// pglab without --citus-workers, on the data directory of `dir`.
fn plain(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .args(args)
        .output()
        .expect("run pglab")
}

fn ok_text(o: &Output) -> String {
    assert!(
        o.status.success(),
        "pglab failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "pglab failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null)
}

/// Tables in the lab schema on every node, shards included (by a session on each node).
fn tables_on_nodes(cluster: &CitusSandbox) -> Vec<(String, i64)> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut out = Vec::new();
        for (name, node) in cluster.nodes() {
            let (_, port) = node.live_postmaster().expect("node runs");
            let t = pglab::server::Target::new(node.conn_params(port), true).unwrap();
            let c = t.connect().await.unwrap();
            let n: i64 = c
                .query_one(
                    "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = 'pglab' AND c.relkind = 'r' AND c.relname NOT LIKE 'ib\\_%'",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            out.push((name, n));
        }
        out
    })
}

#[test]
fn a_two_worker_citus_sandbox_runs_every_experiment_and_leaves_nothing() {
    let bin = pgbin::find(None).expect("PostgreSQL server programs");
    if let Some(why) = citus_missing(&bin) {
        skip_or_fail(&format!("Citus is not installed: {why}"));
        return;
    }
    let dir = temp_dir("citus");
    let paths = pglab::paths::Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let cluster = CitusSandbox::locate(&paths, None, None, 2).unwrap();
    let root = cluster.root.to_string_lossy().to_string();
    let guard = scopeguard(cluster.clone());

    // Starts, and probe lists two workers.
    ok(&pglab(&dir, &["sandbox", "start"]));
    let probe = ok(&pglab(&dir, &["probe", "--format", "json"]));
    let citus = &probe["server"]["citus"];
    assert!(citus["version"].as_str().unwrap().starts_with("Citus"));
    let workers = citus["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["group"].as_i64() != Some(0))
        .count();
    assert_eq!(workers, 2, "{citus}");
    assert_eq!(server_processes(&root), 3, "a coordinator and two workers");
    // Every node wants a password over TCP: another local account reaches none of them.
    if nix::unistd::Uid::effective().is_root() {
        for (name, node) in cluster.nodes() {
            let (_, port) = node.live_postmaster().expect("node runs");
            let out = Command::new("runuser")
                .args(["-u", "nobody", "--", "psql", "-w", "-X", "-h", "127.0.0.1"])
                .args([
                    "-p",
                    &port.to_string(),
                    "-U",
                    "pglab",
                    "-d",
                    "pglab",
                    "-c",
                    "SELECT 1",
                ])
                .current_dir("/")
                .output()
                .expect("runuser");
            assert!(
                !out.status.success(),
                "nobody reached the {name} over TCP without a password"
            );
        }
    }

    // index-build on a distributed dataset: the rows are checked shard by shard by the run.
    let ib = ok(&pglab(
        &dir,
        &[
            "run",
            "index-build",
            "--rows",
            "3000",
            "--order",
            "random",
            "--mwm",
            "1MB,64MB",
            "--repeat",
            "1",
            "--distribute",
            "id",
            "--shards",
            "4",
            "--format",
            "json",
        ],
    ));
    assert_eq!(ib["datasets"][0]["distribution"]["shards"], 4);
    assert_eq!(ib["datasets"][0]["distribution"]["nodes"], 3);
    assert_eq!(ib["trials"].as_array().unwrap().len(), 2);
    assert!(ib["trials"][0]["index_bytes"].as_i64().unwrap() > 0);
    assert_eq!(ib["server"]["cluster"]["workers"], 2);

    // ingest, every method, into a distributed table.
    let ing = ok(&pglab(
        &dir,
        &[
            "run",
            "ingest",
            "--method",
            "insert,insert-tx,values,copy",
            "--batch",
            "100",
            "--rows",
            "2000",
            // Every row in (the default stops a trial after 2 s; single inserts into a
            // distributed table are slow).
            "--duration",
            "off",
            "--repeat",
            "1",
            "--distribute",
            "id",
            "--format",
            "json",
        ],
    ));
    let trials = ing["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4);
    for t in trials {
        assert_eq!(t["rows"], 2000, "{t}");
        assert_eq!(t["rows_counted"], 2000, "{t}");
        assert_eq!(t["distribution"]["column"], "id");
    }

    // growth by version and by content: the shards hold every row each step made.
    let gr = ok(&pglab(
        &dir,
        &[
            "run",
            "growth",
            "--units",
            "200",
            "--steps",
            "0,5",
            "--design",
            "snapshot",
            "--distribute",
            "version,content",
            "--repeat",
            "3",
            "--format",
            "json",
        ],
    ));
    let steps = gr["steps"].as_array().unwrap();
    for d in ["snapshot-by-version", "snapshot-by-content"] {
        let s = steps
            .iter()
            .find(|s| s["design"] == d && s["versions"] == 5)
            .unwrap_or_else(|| panic!("{d} at 5 versions"));
        assert_eq!(s["rows"], 1000);
        assert_eq!(s["read_rows"], 200);
        assert_eq!(s["node_bytes"].as_array().unwrap().len(), 2, "{s}");
    }
    let notes = gr["notes"].to_string();
    assert!(notes.contains("size per node"), "{notes}");

    // A cancel mid-load leaves no table on any node.
    let mut child = long_load(&dir);
    let started = Instant::now();
    loop {
        let busy = tables_on_nodes(&cluster).iter().any(|(_, n)| *n > 0);
        if busy || started.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_millis(500));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    for (node, n) in tables_on_nodes(&cluster) {
        assert_eq!(n, 0, "{node} still holds lab tables after the cancel");
    }
    // A killed run (no cleanup of its own) leaves nothing on any node after the next clean.
    let mut child = long_load(&dir);
    let started = Instant::now();
    while !tables_on_nodes(&cluster).iter().any(|(_, n)| *n > 0) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run made no table"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(tables_on_nodes(&cluster).iter().any(|(_, n)| *n > 0));
    // The killed run's sessions end once the server notices (client_connection_check_interval).
    let started = Instant::now();
    loop {
        let clean = pglab(&dir, &["clean"]);
        assert!(
            clean.status.success(),
            "{}",
            String::from_utf8_lossy(&clean.stderr)
        );
        let left: Vec<_> = tables_on_nodes(&cluster)
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "left after clean: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // `pglab clean` removes Citus's deferred drops only when every pending one is pglab's:
    // a cleanup record of another operation (here a worker table outside the lab schema) is
    // left to Citus.
    foreign_cleanup_record_is_left_alone(&dir, &cluster);

    // `pglab sandbox stop` without --citus-workers stops whatever sandbox is up, the cluster
    // included, and the statuses say so before it does.
    let status = ok_text(&plain(&dir, &["sandbox", "status"]));
    assert!(
        status.contains("also up: the Citus sandbox with 2 workers")
            && status.contains("pglab sandbox stop stops it too"),
        "{status}"
    );
    let citus_status = ok_text(&pglab(&dir, &["sandbox", "status"]));
    assert!(
        citus_status.contains("kept up (pglab sandbox stop stops every node)"),
        "{citus_status}"
    );
    let stopped = ok_text(&plain(&dir, &["sandbox", "stop"]));
    assert!(
        stopped.contains("the Citus sandbox with 2 workers stopped (coordinator and every worker)"),
        "{stopped}"
    );
    assert_eq!(server_processes(&root), 0, "no postmaster left");
    let again = ok_text(&plain(&dir, &["sandbox", "stop"]));
    assert_eq!(again.trim(), "sandbox was not running");
    drop(guard);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn distribute_on_a_plain_server_is_refused_with_exit_2() {
    let lab = common::lab();
    let o = lab
        .command()
        .args([
            "run",
            "ingest",
            "--rows",
            "100",
            "--distribute",
            "id",
            "--no-history",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("needs a Citus coordinator"), "{err}");
}

/// Stops the cluster however the test ends.
struct Guard(CitusSandbox);
impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.stop();
    }
}
fn scopeguard(c: CitusSandbox) -> Guard {
    Guard(c)
}

/// A load into a distributed table long enough to be interrupted (1M single-row inserts).
fn long_load(dir: &std::path::Path) -> std::process::Child {
    Command::new(TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args([
            "--citus-workers",
            "2",
            "run",
            "ingest",
            "--method",
            "insert",
            "--rows",
            "1M",
            "--distribute",
            "id",
            "--no-history",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A cleanup record in `pg_dist_cleanup` that is not pglab's (a table in `public` on a worker,
/// as an interrupted shard move of the DBA's would leave) survives `pglab clean`, which still
/// drops pglab's own leftover.
fn foreign_cleanup_record_is_left_alone(dir: &std::path::Path, cluster: &CitusSandbox) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let connect = |node: &pglab::server::Sandbox| {
        let (_, port) = node.live_postmaster().expect("node runs");
        let t = pglab::server::Target::new(node.conn_params(port), true).unwrap();
        async move { t.connect().await.unwrap() }
    };
    rt.block_on(async {
        let coord = connect(&cluster.coordinator).await;
        // Citus's own background cleanup would race the check: off for this part.
        for sql in [
            "ALTER SYSTEM SET citus.defer_shard_delete_interval = -1",
            "SELECT pg_reload_conf()",
        ] {
            coord.batch_execute(sql).await.unwrap();
        }
        let worker = connect(&cluster.workers[0]).await;
        worker
            .batch_execute("CREATE TABLE public.not_pglab_102030 (x int)")
            .await
            .unwrap();
        let group: i32 = worker
            .query_one("SELECT groupid FROM pg_dist_local_group", &[])
            .await
            .unwrap()
            .get(0);
        coord
            .execute(
                "INSERT INTO pg_catalog.pg_dist_cleanup VALUES (nextval('pg_catalog.pg_dist_cleanup_recordid_seq'), nextval('pg_catalog.pg_dist_operationid_seq'), 1, 'public.not_pglab_102030', $1, 0)",
                &[&group],
            )
            .await
            .unwrap();
        coord
            .batch_execute(
                "CREATE TABLE pglab.dead_citus_leftover (x int); COMMENT ON TABLE pglab.dead_citus_leftover IS 'pglab:run=dead-citus test';",
            )
            .await
            .unwrap();
    });
    let clean = pglab(dir, &["clean"]);
    let text = String::from_utf8_lossy(&clean.stdout).into_owned();
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(
        text.contains("dropped  pglab.dead_citus_leftover"),
        "{text}"
    );
    assert!(
        text.contains("pg_dist_cleanup"),
        "clean says what it left: {text}"
    );
    rt.block_on(async {
        let worker = connect(&cluster.workers[0]).await;
        let still: i64 = worker
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE tablename = 'not_pglab_102030'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(still, 1, "pglab clean dropped a table that is not pglab's");
        worker
            .batch_execute("DROP TABLE public.not_pglab_102030")
            .await
            .unwrap();
        let coord = connect(&cluster.coordinator).await;
        let records: i64 = coord
            .query_one(
                "SELECT count(*) FROM pg_dist_cleanup WHERE object_name = 'public.not_pglab_102030'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(records, 1, "the foreign cleanup record is left");
        for sql in [
            "DELETE FROM pg_dist_cleanup WHERE object_name = 'public.not_pglab_102030'",
            "ALTER SYSTEM RESET citus.defer_shard_delete_interval",
            "SELECT pg_reload_conf()",
        ] {
            coord.batch_execute(sql).await.unwrap();
        }
    });
}
