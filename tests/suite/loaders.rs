//! The two loaders behind `run ingest`: libpq (the default for insert, insert-tx and values)
//! and tokio-postgres (copy, and everything with `PGLAB_LOADER=tokio`, which the benchmark
//! uses to measure both side by side). Both must load exactly the rows asked for; a wrong
//! choice is one sentence before anything is created.

use crate::common;

use serde_json::Value;

fn ingest(loader: &str, args: &[&str]) -> std::process::Output {
    let lab = common::lab();
    lab.command()
        .env("PGLAB_LOADER", loader)
        .args(["run", "ingest"])
        .args(args)
        .args([
            "--repeat",
            "1",
            "--sync-commit",
            "off",
            "--format",
            "json",
            "--no-history",
            "--yes",
        ])
        .output()
        .expect("pglab runs")
}

fn trials(out: &std::process::Output) -> Vec<Value> {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    v["trials"].as_array().expect("trials").clone()
}

/// Every one of `n` trials loaded exactly `rows` rows; the trials back.
fn assert_exact(trials: Vec<Value>, n: usize, rows: u64) -> Vec<Value> {
    assert_eq!(trials.len(), n);
    for t in &trials {
        let what = format!(
            "{} ×{} pipeline {}",
            t["method"], t["clients"], t["pipeline"]
        );
        assert_eq!(t["rows"], rows, "{what}");
        assert_eq!(t["rows_counted"], rows, "{what}: count(*) of the table");
    }
    trials
}

#[test]
fn both_loaders_load_exactly_the_rows_by_every_statement_method() {
    for loader in ["libpq", "tokio"] {
        let out = ingest(
            loader,
            &[
                "--method",
                "insert,insert-tx,values",
                "--rows",
                "1001",
                "--batch",
                "64",
                "--clients",
                "1,3",
            ],
        );
        assert_exact(trials(&out), 6, 1001);
        // Pipelined, with a last batch shorter than the others.
        let out = ingest(
            loader,
            &[
                "--method",
                "insert-tx",
                "--pipeline",
                "on",
                "--rows",
                "1001",
                "--batch",
                "100",
                "--clients",
                "2",
            ],
        );
        let t = assert_exact(trials(&out), 1, 1001);
        assert_eq!(t[0]["commits"], 11, "{loader}: one commit per batch");
    }
}

/// A `values` statement of 2 MB fills the socket's send buffer many times over: the client
/// waits for room without blocking its thread (the other client shares it) and loads it all.
#[test]
fn a_statement_larger_than_the_socket_buffer_is_sent_in_pieces() {
    let out = ingest(
        "libpq",
        &[
            "--method",
            "values",
            "--batch",
            "2000",
            "--payload",
            "1kB",
            "--rows",
            "6000",
            "--clients",
            "2",
        ],
    );
    let t = assert_exact(trials(&out), 1, 6000);
    assert_eq!(t[0]["commits"], 4, "3000 rows per client: 2000 + 1000");
}

#[test]
fn an_unknown_loader_is_one_sentence_before_anything_runs() {
    let out = ingest("odbc", &["--method", "insert", "--rows", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("PGLAB_LOADER is 'odbc': it must be libpq (the default) or tokio"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
