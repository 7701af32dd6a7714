//! The binary's handling of targets and bad input: `probe --format json`, and each way of
//! pointing at a server wrongly gets one sentence and a non-zero exit, and leaves no server.

use crate::common;

use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn assert_sentence(o: &Output, needle: &str) {
    let e = stderr(o);
    assert!(!o.status.success(), "should fail: {e}");
    assert!(e.contains(needle), "expected '{needle}' in: {e}");
    assert!(
        !e.contains("panicked") && !e.contains("stack backtrace"),
        "{e}"
    );
    assert!(e.trim().lines().count() <= 3, "one clear message, got: {e}");
}

#[test]
fn probe_json_holds_server_and_host() {
    let lab = common::lab();
    let dir = lab.sandbox.root.to_string_lossy().to_string();
    let out = lab
        .command()
        .args([
            "probe",
            "--format",
            "json",
            "--db",
            &format!("host={dir} port={} user=pglab dbname=pglab", lab.port),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["server"];
    for k in [
        "version",
        "version_num",
        "location",
        "in_recovery",
        "database_bytes",
        "connections",
        "settings",
        "counters",
    ] {
        assert!(!s[k].is_null(), "server.{k} missing: {s}");
    }
    assert_eq!(s["location"]["kind"], "socket");
    for name in [
        "shared_buffers",
        "maintenance_work_mem",
        "max_parallel_maintenance_workers",
        "work_mem",
        "synchronous_commit",
        "fsync",
        "wal_level",
        "max_wal_size",
        "checkpoint_timeout",
    ] {
        assert!(
            s["settings"][name]["value"].is_string(),
            "setting {name}: {}",
            s["settings"]
        );
    }
    assert!(s["counters"]["wal_bytes"].is_i64());
    let h = &v["host"];
    for k in [
        "cpu_model",
        "logical_cores",
        "total_memory",
        "load",
        "os",
        "kernel",
    ] {
        assert!(!h[k].is_null(), "host.{k} missing: {h}");
    }
    assert_eq!(v["host_is_server"], true);
}

#[test]
fn probe_on_the_sandbox_starts_and_stops_it() {
    let dir = common::temp_dir("probe-sb");
    let out = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .args([
            "probe",
            "--format",
            "json",
            "--disk",
            "--disk-size",
            "1MB",
            "--fsync-time",
            "200ms",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["server"]["location"]["kind"], "sandbox");
    assert!(v["disk"]["seq_write"]["mb_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["disk"]["fsync"]["ops_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(
        common::server_processes(&dir.to_string_lossy()),
        0,
        "sandbox stopped on exit"
    );
    let _ = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .args(["sandbox", "destroy"])
        .output();
}

#[test]
fn bad_targets_are_sentences() {
    let lab = common::lab();
    let free_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--db".into(), "host='unclosed".into()],
            "bad connection string",
        ),
        (
            vec!["--db".into(), "sslmode=sometimes host=x".into()],
            "sslmode",
        ),
        (
            vec![
                "--db".into(),
                "postgresql://nosuchhost.invalid:5432/db?connect_timeout=3".into(),
            ],
            "unknown host",
        ),
        (
            vec![
                "--db".into(),
                format!("host=127.0.0.1 port={free_port} sslmode=disable"),
            ],
            "connection refused",
        ),
        (
            vec![
                "--db".into(),
                format!("host=/nonexistent-dir port={free_port}"),
            ],
            "no PostgreSQL socket",
        ),
        (
            vec![
                "--db".into(),
                format!(
                    "host={} port={} user=pglab dbname=nosuchdb",
                    lab.sandbox.root.display(),
                    lab.port
                ),
            ],
            "database \"nosuchdb\" does not exist",
        ),
        (
            vec![
                "--db".into(),
                format!(
                    "host=127.0.0.1 port={} user=pglab dbname=pglab sslmode=require",
                    lab.port
                ),
            ],
            "does not offer TLS",
        ),
    ];
    for (args, needle) in cases {
        let out = lab.command().arg("probe").args(&args).output().unwrap();
        assert_sentence(&out, needle);
    }
}

#[test]
fn a_conninfo_that_does_not_parse_is_bad_input_for_every_command() {
    let lab = common::lab();
    for (db, needle) in [
        ("garbage here", "is neither a URL"),
        ("host=/tmp port=abc", "port 'abc' is not a TCP port number"),
        ("host='unclosed", "is not closed"),
        ("postgresql://h:99999/db", "99999"),
    ] {
        for cmd in [
            &["probe"][..],
            &["run", "ingest", "--rows", "100"],
            &["clean"],
        ] {
            let out = lab.command().args(["--db", db]).args(cmd).output().unwrap();
            assert_sentence(&out, needle);
            assert_eq!(out.status.code(), Some(2), "{db} {cmd:?}: {}", stderr(&out));
        }
    }
    // A bare word is still a database name, as libpq has it.
    let out = lab
        .command()
        .args(["--db", "nosuchdb", "probe"])
        .env("PGHOST", lab.sandbox.root.display().to_string())
        .env("PGPORT", lab.port.to_string())
        .env("PGUSER", "pglab")
        .output()
        .unwrap();
    assert_sentence(&out, "database \"nosuchdb\" does not exist");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sandbox_bad_input_is_a_sentence() {
    let dir = common::temp_dir("sb-bad");
    let run = |args: &[&str]| {
        std::process::Command::new(common::TestLab::bin())
            .env("PGLAB_DATA_DIR", dir.join("data"))
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE")
            .args(args)
            .output()
            .unwrap()
    };
    assert_sentence(
        &run(&["--pg-bin", "/nonexistent", "probe"]),
        "does not hold initdb",
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    assert_sentence(&run(&["--sandbox-port", &port, "probe"]), "already taken");
    assert_eq!(common::server_processes(&dir.to_string_lossy()), 0);
    let out = std::process::Command::new(common::TestLab::bin())
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .args(["--data-dir", "/proc/pglab-cannot-write-here", "probe"])
        .output()
        .unwrap();
    assert_sentence(&out, "cannot create the sandbox directory");
    let _ = run(&["sandbox", "destroy"]);
}
