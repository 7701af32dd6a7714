//! Reads on a standby (`run query --on-standby 1`), on real clusters: with
//! hot_standby_feedback off and max_standby_streaming_delay at 10ms, a statement that holds
//! its snapshot for half a second on the standby while the primary churns and vacuums its
//! table is cancelled for a recovery conflict, and the trial counts it; with feedback on the
//! cancellations fall and the primary keeps the dead tuples instead; the standby's settings
//! are put back at the end, and after a kill -9 of pglab by the next start. Several clients
//! (and a script) read on the standby the same way: each cancel counted, the client going on
//! with its next transaction.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::standby::{lab, ok, pglab, schema_check, wait_streaming};

const SETUP: &str = "CREATE TABLE t AS SELECT g AS id, g AS v FROM generate_series(1, 20000) g";
/// Half a second with the statement's snapshot held, then a scan of the churned table.
const READ: &str = "SELECT count(*) FROM (SELECT pg_sleep(0.5)) s, t";

/// `run query` on standby 1 with the churn, `extra` flags after.
fn reads(data: &Path, extra: &[&str]) -> Output {
    pglab(data, &reads_args(extra))
}

fn reads_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "query",
        "--sql",
        READ,
        "--setup",
        SETUP,
        "--on-standby",
        "1",
        "--churn",
        "2000",
        "--churn-vacuum",
        "300ms",
        "--repeat",
        "1",
        "--no-history",
    ];
    args.extend_from_slice(extra);
    args
}

/// The sandbox started with one standby, streaming.
fn start_with_standby(data: &Path) {
    ok(&pglab(data, &["sandbox", "start", "--standbys", "1"]));
    assert!(
        wait_streaming(data).contains("replication: pglab_standby_1 streaming"),
        "the standby does not stream"
    );
}

/// 3 s trials on the standby with feedback off and on, replay cancelling after 10 ms, `extra`
/// flags after: the JSON report.
fn feedback_off_and_on(data: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "--duration",
        "3s",
        "--set",
        "hot_standby_feedback=off,on",
        "--set",
        "max_standby_streaming_delay=10ms",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let json = serde_json::from_str(&ok(&reads(data, &args))).expect("json");
    schema_check("query", &json);
    json
}

fn trial<'a>(json: &'a serde_json::Value, feedback: &str) -> &'a serde_json::Value {
    json["standby_reads"]
        .as_array()
        .expect("standby_reads")
        .iter()
        .find(|t| t["settings"]["hot_standby_feedback"] == feedback)
        .unwrap_or_else(|| panic!("no trial with feedback {feedback}: {json}"))
}

#[test]
fn feedback_off_gets_reads_cancelled_and_on_keeps_dead_tuples_instead() {
    let (data, sb, standby, _cleanup) = lab("reads");
    // Without a standby: refused with a sentence, nothing run.
    ok(&pglab(&data, &["sandbox", "start"]));
    let out = reads(&data, &["--duration", "1s"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("no standby running"), "{said}");
    let out = pglab(&data, &["run", "query", "--sql", READ, "--on-standby", "0"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the standby's number, 1 to 4"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A standby fault beside the reads is refused by a sentence with a way on, before anything
    // runs (it used to be left out silently).
    let out = reads(
        &data,
        &[
            "--clients",
            "2",
            "--duration",
            "3s",
            "--sync-commit",
            "local,on",
            "--standby-fault",
            "stop-at=1s,for=1s",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("a standby fault is not run beside reads on a standby")
            && said.contains("in a run without --on-standby"),
        "{said}"
    );

    start_with_standby(&data);
    let own = standby.node.changed_settings();
    let json = feedback_off_and_on(&data, &[]);
    let off = trial(&json, "off");
    let on = trial(&json, "on");
    let n = |t: &serde_json::Value, k: &str| t[k].as_i64().unwrap_or(0);
    // Off: the primary's VACUUM removes versions the sleeping statement's snapshot needs, and
    // the standby cancels it 10 ms into the replay that conflicts.
    assert!(n(off, "cancelled") >= 1, "{off}");
    assert!(
        off["conflicts"]["snapshot"].as_i64().unwrap_or(0) >= 1,
        "{off}"
    );
    assert!(off.get("xmin_age_max").is_none(), "{off}");
    // On: the standby's xmin holds the primary's VACUUM back: fewer cancellations, more dead
    // tuples left on the primary.
    assert!(
        n(on, "cancelled") < n(off, "cancelled"),
        "on {on}\noff {off}"
    );
    assert!(on["xmin_age_max"].as_i64().is_some(), "{on}");
    assert!(
        n(on, "dead_after") > n(off, "dead_after"),
        "on {on}\noff {off}"
    );
    assert!(n(on, "churned_rows") > 0 && n(on, "vacuums") >= 2, "{on}");
    let findings = json["summary"]["findings"].to_string();
    assert!(
        findings.contains("hot_standby_feedback=on vs off (max_standby_streaming_delay=10ms)"),
        "{findings}"
    );
    // Both settings lived on the standby only, and are back.
    assert_eq!(standby.node.changed_settings(), own);
    assert!(!standby.node.whatif_pending());
    assert!(
        sb.changed_settings().is_empty(),
        "{:?}",
        sb.changed_settings()
    );
}

#[test]
fn a_kill_9_mid_run_leaves_the_standby_settings_to_the_next_start() {
    let (data, _sb, standby, _cleanup) = lab("reads-kill");
    start_with_standby(&data);
    let own = standby.node.changed_settings();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pglab"))
        .arg("--data-dir")
        .arg(&data)
        .args(reads_args(&[
            "--duration",
            "30s",
            "--set",
            "hot_standby_feedback=on",
        ]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while !standby
        .node
        .changed_settings()
        .iter()
        .any(|(n, _)| n == "hot_standby_feedback")
    {
        assert!(
            Instant::now() < end,
            "the run never set the standby's feedback"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(standby.node.whatif_pending());
    ok(&pglab(&data, &["sandbox", "start"]));
    assert_eq!(standby.node.changed_settings(), own);
    assert!(!standby.node.whatif_pending());
}

/// A trial's number field (0 when absent).
fn num(t: &serde_json::Value, k: &str) -> f64 {
    t[k].as_f64().unwrap_or(0.0)
}

#[test]
fn two_clients_on_the_standby_count_each_cancel_and_go_on() {
    let (data, _sb, standby, _cleanup) = lab("reads-clients");
    start_with_standby(&data);
    let own = standby.node.changed_settings();
    let json = feedback_off_and_on(&data, &["--clients", "2"]);
    let (off, on) = (trial(&json, "off"), trial(&json, "on"));
    for t in [off, on] {
        assert_eq!(t["clients"], 2, "{t}");
    }
    // Off: cancels counted, more than one per client, so a client went on after its first
    // (a client that ended at one would have failed the trial); the standby counted them by
    // kind.
    assert!(num(off, "cancelled") > 2.0, "{off}");
    assert!(
        off["conflicts"]["snapshot"].as_i64().unwrap_or(0) >= 1,
        "{off}"
    );
    // On: reads that returned, at a rate, with latency; fewer cancels; the primary kept the
    // dead tuples and its xmin was held.
    assert!(num(on, "executions") >= 2.0 && num(on, "tps") > 0.0, "{on}");
    assert!(
        on["latency_ms"]["p50"].as_f64().unwrap_or(0.0) >= 500.0,
        "{on}"
    );
    assert!(
        num(on, "cancelled") < num(off, "cancelled"),
        "on {on}\noff {off}"
    );
    assert!(on["xmin_age_max"].as_i64().is_some(), "{on}");
    assert!(
        num(on, "dead_after") > num(off, "dead_after"),
        "on {on}\noff {off}"
    );
    // The verdicts compare the clients' throughput trials, named as on the target.
    let trials = json["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2, "{json}");
    assert!(
        trials
            .iter()
            .all(|t| t["name"] == "2 clients" && t["load"].is_object())
    );
    // Feedback off usually has every read cancelled (0 tps): the Summary then says so, worst
    // of all, instead of calling it undecided.
    let findings = json["summary"]["findings"].to_string();
    let all_cancelled = "2 clients: at hot_standby_feedback=off max_standby_streaming_delay=10ms every read was cancelled by conflicts with recovery";
    assert_eq!(
        findings.contains(all_cancelled),
        num(off, "executions") == 0.0,
        "{findings}\n{off}"
    );
    assert_eq!(standby.node.changed_settings(), own);

    // A script (one client) reads there too: a cancel inside its BEGIN … END is rolled back
    // and the client goes on (else "current transaction is aborted" would end the trial).
    let script = data.join("read.sql");
    std::fs::write(
        &script,
        "BEGIN;\nSELECT count(*) FROM (SELECT pg_sleep(0.2)) s, t;\nSELECT count(*) FROM t WHERE id < 100;\nEND;\n",
    )
    .unwrap();
    let mut args = reads_args(&[
        "--script",
        script.to_str().unwrap(),
        "--duration",
        "3s",
        "--set",
        "hot_standby_feedback=off",
        "--set",
        "max_standby_streaming_delay=10ms",
        "--format",
        "json",
    ]);
    let sql = args.iter().position(|a| *a == "--sql").unwrap();
    args.drain(sql..sql + 2);
    let json: serde_json::Value = serde_json::from_str(&ok(&pglab(&data, &args))).expect("json");
    schema_check("query", &json);
    let t = &json["standby_reads"][0];
    assert_eq!(t["clients"], 1, "{t}");
    assert!(num(t, "cancelled") >= 2.0, "{t}");
    assert!(num(t, "executions") >= 1.0 && num(t, "tps") > 0.0, "{t}");
}

/// A session the standby's server ends mid-trial (here `pg_terminate_backend`, as a conflict's
/// FATAL would) is counted, and its client opens a new one on the side and goes on while the
/// other client keeps reading: the trial ends with reads after the cut and both counted.
#[test]
fn a_client_whose_session_ends_opens_a_new_one_and_goes_on() {
    let (data, _sb, standby, _cleanup) = lab("reads-reconnect");
    start_with_standby(&data);
    let (_, port) = standby.node.live_postmaster().expect("the standby runs");
    let target = pglab::server::Target::new(standby.node.conn_params(port), true).unwrap();
    let conninfo = target.libpq_conninfo();
    let run = std::thread::spawn({
        let data = data.clone();
        move || {
            reads(
                &data,
                &[
                    "--clients",
                    "2",
                    "--duration",
                    "4s",
                    "--set",
                    "hot_standby_feedback=on",
                    "--format",
                    "json",
                ],
            )
        }
    });
    // Once both clients read, end one of their sessions.
    let mut watcher = pglab::server::libpq::PqConn::connect(&conninfo).unwrap();
    let started = Instant::now();
    let reading = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(0.5)%' AND backend_type = 'client backend' AND pid <> pg_backend_pid()";
    while watcher.exec(reading).unwrap().as_deref() != Some("2") {
        assert!(started.elapsed() < Duration::from_secs(60), "never read");
        std::thread::sleep(Duration::from_millis(50));
    }
    let ended = watcher
        .exec("SELECT pg_terminate_backend(min(pid)) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(0.5)%' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
        .unwrap();
    assert_eq!(ended.as_deref(), Some("t"));
    drop(watcher);
    let json: serde_json::Value = serde_json::from_str(&ok(&run.join().unwrap())).expect("json");
    let t = &json["standby_reads"][0];
    assert_eq!(num(t, "terminated"), 1.0, "{t}");
    assert!(num(t, "cancelled") >= 1.0, "{t}");
    // 2 clients for 4 s at 0.5 s a read, one of them cut once and back.
    assert!(num(t, "executions") >= 8.0, "{t}");
}

/// Clients read on the standby, so the free connections that count are the standby's: with
/// its slots nearly all taken (here by sessions of the test's own; the primary has plenty),
/// 4 clients are refused before any connects, by a sentence naming the standby, and the
/// standby's settings are put back.
#[test]
fn clients_the_standby_has_no_slots_for_are_refused_naming_it() {
    let (data, _sb, standby, _cleanup) = lab("reads-slots");
    start_with_standby(&data);
    let own = standby.node.changed_settings();
    let (_, port) = standby.node.live_postmaster().expect("the standby runs");
    let target = pglab::server::Target::new(standby.node.conn_params(port), true).unwrap();
    let conninfo = target.libpq_conninfo();
    let mut first = pglab::server::libpq::PqConn::connect(&conninfo).unwrap();
    let free: i64 = first
        .exec("SELECT current_setting('max_connections')::int8 - current_setting('superuser_reserved_connections')::int8 - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')")
        .unwrap()
        .expect("a count")
        .parse()
        .unwrap();
    // Three left: the run's own sessions on the standby fit, its 4 clients do not.
    let held: Vec<_> = (0..free - 3)
        .map(|_| pglab::server::libpq::PqConn::connect(&conninfo).unwrap())
        .collect();
    let out = reads(
        &data,
        &[
            "--clients",
            "4",
            "--duration",
            "1s",
            "--set",
            "hot_standby_feedback=on",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("4 clients need 4 connections on pglab_standby_1, the standby they read on, but it has only"),
        "{said}"
    );
    drop(held);
    drop(first);
    assert_eq!(standby.node.changed_settings(), own);
    assert!(!standby.node.whatif_pending());
}
