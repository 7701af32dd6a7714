//! What a standby costs on `run query` (writing statements, throughput mode) and `run
//! growth`, through the `pglab` binary on a real sandbox with one streaming standby:
//! `--sync-commit` sweeps the levels (the standby named synchronous for the waiting ones),
//! `--standby-rtt` moves the standby for the run, each trial records the statement latency
//! percentiles, the per-second series and the standby's row of `pg_stat_replication`, and
//! everything is back afterwards. `--sync-commit` with `--set synchronous_commit` is refused.
//! A growth run records each version write's COMMIT (at `on` at least the round trip), says
//! each level's cost in the findings, and under `--standby-fault` how long commits waited.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::standby::{
    Cleanup, interrupt, lab, ok, pglab, schema_check, spawn, wait_streaming,
};
use pglab::server::{Sandbox, Standby};

/// `run query` of single-row INSERTs into a table `table` its setup makes, with `flags`.
fn inserts(data: &Path, table: &str, flags: &str) -> serde_json::Value {
    let setup = format!("CREATE TABLE {table} (id int)");
    let sql = format!("INSERT INTO {table} VALUES (1)");
    run_json(data, "query", &["--setup", &setup, "--sql", &sql], flags)
}

/// `pglab run KIND` with `args` and the `flags` (words without spaces), one trial of each,
/// as JSON, which follows the kind's schema.
fn run_json(data: &Path, kind: &str, args: &[&str], flags: &str) -> serde_json::Value {
    let mut all = vec!["run", kind];
    all.extend_from_slice(args);
    all.extend(flags.split_whitespace());
    all.extend(["--repeat", "1", "--format", "json", "--no-history"]);
    let json = serde_json::from_str(&ok(&pglab(data, &all))).expect("json");
    schema_check(kind, &json);
    json
}

/// A sandbox with one standby streaming at its own distance (none).
fn started(tag: &str) -> (PathBuf, Sandbox, Standby, Cleanup) {
    let lab = lab(tag);
    ok(&pglab(&lab.0, &["sandbox", "start", "--standbys", "1"]));
    assert!(streaming(&lab.0), "the standby does not stream");
    lab
}

fn streaming(data: &Path) -> bool {
    wait_streaming(data).contains("replication: pglab_standby_1 streaming")
}

/// The standby and the primary as they were before the run: no setting left changed
/// (`synchronous_standby_names` back), the standby at its own distance and streaming.
fn all_back(data: &Path, sb: &Sandbox, standby: &Standby) {
    assert!(
        sb.changed_settings().is_empty(),
        "{:?}",
        sb.changed_settings()
    );
    assert!(standby.relay().running().is_none());
    assert_eq!(standby.rtt(), None);
    assert!(streaming(data));
}

fn standby_row<'a>(replicas: &'a serde_json::Value, what: &str) -> &'a serde_json::Value {
    replicas
        .as_array()
        .and_then(|r| {
            r.iter()
                .find(|r| r["application_name"] == "pglab_standby_1")
        })
        .unwrap_or_else(|| panic!("{what}: no standby recorded in {replicas}"))
}

#[test]
fn query_writes_at_on_wait_the_round_trip_and_local_does_not() {
    let (data, sb, standby, _cleanup) = started("kinds-query");
    let json = inserts(
        &data,
        "kinds_t",
        "--clients 1 --duration 1s --sync-commit local,on --standby-rtt 4ms",
    );
    let trials = json["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2, "{json}");
    let at = |level: &str| {
        trials
            .iter()
            .find(|t| t["settings"]["synchronous_commit"] == level)
            .unwrap_or_else(|| panic!("no trial at {level}: {json}"))
    };
    for level in ["local", "on"] {
        let t = at(level);
        assert_eq!(t["settings"]["pglab.standby_rtt"], "4ms", "{t}");
        let load = &t["load"];
        for p in ["p50", "p99", "p999", "max"] {
            assert!(
                load["statement_ms"][p].as_f64().is_some(),
                "{level} {p}: {t}"
            );
        }
        assert!(
            load["series"].as_array().is_some_and(|s| !s.is_empty()),
            "{t}"
        );
        assert!(load["stall_seconds"].as_u64().is_some(), "{t}");
        standby_row(&load["replicas"], level);
    }
    // `on` waits for the standby 4 ms away: every commit at least the round trip; `local`
    // never waits for it.
    let p50 = |level: &str| at(level)["load"]["statement_ms"]["p50"].as_f64().unwrap();
    assert!(p50("on") >= 3.8, "on at 4 ms: p50 {} ms", p50("on"));
    // (Below `on`'s rather than below the RTT: a busy host slows every commit, the standby's
    // round trip is what only `on` pays.)
    assert!(
        p50("local") < p50("on"),
        "local at 4 ms: p50 {} ms, on {} ms",
        p50("local"),
        p50("on")
    );
    // The standby was the synchronous one for the run.
    assert_eq!(
        standby_row(&at("on")["load"]["replicas"], "on")["sync_state"],
        "sync"
    );
    let findings: Vec<&str> = json["summary"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(
        findings
            .iter()
            .any(|f| f.contains("statement latency by synchronous_commit")
                && f.contains("pglab.standby_rtt=4ms")),
        "{findings:#?}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("what each level buys")),
        "{findings:#?}"
    );
    all_back(&data, &sb, &standby);
}

#[test]
fn growth_steps_record_the_standby_and_put_everything_back() {
    let (data, sb, standby, _cleanup) = started("kinds-growth");
    let json = run_json(
        &data,
        "growth",
        &[],
        "--units 50 --steps 0,4 --design snapshot --indexes pk --churn 0 --sync-commit on --standby-rtt 4ms",
    );
    let steps: Vec<&serde_json::Value> = json["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter(|s| s["projected"] == false)
        .collect();
    assert_eq!(steps.len(), 2, "{json}");
    for s in steps {
        assert_eq!(s["settings"]["pglab.standby_rtt"], "4ms", "{s}");
        assert_eq!(s["settings"]["synchronous_commit"], "on", "{s}");
        let row = standby_row(&s["replicas"], "growth step");
        assert_eq!(row["sync_state"], "sync", "{s}");
        assert_eq!(row["state"], "streaming", "{s}");
    }
    all_back(&data, &sb, &standby);
}

/// The query trial at `level`.
fn trial_at<'a>(json: &'a serde_json::Value, level: &str) -> &'a serde_json::Value {
    json["trials"]
        .as_array()
        .and_then(|ts| {
            ts.iter()
                .find(|t| t["settings"]["synchronous_commit"] == level)
        })
        .unwrap_or_else(|| panic!("no trial at {level}: {json}"))
}

#[test]
fn a_standby_stopped_under_query_writes_hangs_on_and_not_local() {
    let (data, sb, standby, _cleanup) = started("kinds-fault");
    let json = inserts(
        &data,
        "kinds_f",
        "--clients 1 --duration 3s --sync-commit local,on --standby-fault stop-at=500ms,for=2s",
    );
    let (on, local) = (
        &trial_at(&json, "on")["load"],
        &trial_at(&json, "local")["load"],
    );
    // While the only synchronous standby is stopped, no `on` commit returns: whole seconds
    // without one, and a statement that waited for its return.
    assert!(on["stall_seconds"].as_u64().unwrap() >= 1, "{on}");
    assert!(
        on["statement_ms"]["max"].as_f64().unwrap() >= 1000.0,
        "{on}"
    );
    assert!(on["fault"]["from_s"].as_f64().is_some(), "{on}");
    assert_eq!(local["stall_seconds"], 0, "{local}");
    let findings = json["summary"]["findings"].to_string();
    assert!(
        findings.contains("on under standby fault stop-at=500ms,for=2s")
            && findings.contains("commits HUNG while pglab_standby_1 was gone"),
        "{findings}"
    );
    assert!(
        findings.contains("no commit hung: local does not wait for pglab_standby_1"),
        "{findings}"
    );
    all_back(&data, &sb, &standby);
    assert!(standby.running());
}

#[test]
fn a_query_fault_at_a_swept_distance_puts_the_standby_back_at_that_distance() {
    let (data, sb, standby, _cleanup) = started("kinds-rttfault");
    let json = inserts(
        &data,
        "kinds_r",
        "--clients 1 --duration 3s --sync-commit on --standby-rtt 4ms --standby-fault stop-at=500ms,for=1s",
    );
    let load = &trial_at(&json, "on")["load"];
    let w = &load["fault"];
    let (from, back) = (w["from_s"].as_f64(), w["to_s"].as_f64());
    assert!(from.zip(back).is_some_and(|(f, b)| f < b), "{load}");
    // Most commits come after the standby's return: back on the primary's socket they would
    // be fast and pull the median under the round trip; back at 4 ms they keep it above.
    let p50 = load["statement_ms"]["p50"].as_f64().unwrap();
    assert!(
        p50 >= 3.8,
        "on at 4 ms with the fault: p50 {p50} ms ({load})"
    );
    all_back(&data, &sb, &standby);
}

#[test]
fn ctrl_c_mid_query_puts_the_standby_and_the_settings_back() {
    let (data, sb, standby, _cleanup) = started("kinds-cancel");
    let args = ["run", "query", "--setup", "CREATE TABLE kinds_c (id int)"];
    let sql = ["--sql", "INSERT INTO kinds_c VALUES (1)", "--clients", "1"];
    let more = [
        "--duration",
        "60s",
        "--sync-commit",
        "on",
        "--standby-rtt",
        "4ms",
    ];
    let run = spawn(&data, &[&args[..], &sql, &more, &["--no-history"]].concat());
    // Interrupted once the standby is at the run's distance, while the clients write.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while standby.relay().running().is_none() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        standby.relay().running().is_some(),
        "the run never moved the standby"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(interrupt(run), Some(130));
    all_back(&data, &sb, &standby);
}

#[test]
fn sync_commit_with_set_synchronous_commit_is_refused_with_a_sentence() {
    let dir = common::temp_dir("kinds-refuse");
    for kind in [
        &["run", "query", "--sql", "SELECT 1", "--clients", "1"][..],
        &["run", "growth"][..],
    ] {
        let args: Vec<&str> = kind
            .iter()
            .copied()
            .chain([
                "--sync-commit",
                "local,on",
                "--set",
                "synchronous_commit=off",
            ])
            .collect();
        let out = pglab(&dir.join("data"), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran");
        assert!(
            err.contains("--sync-commit and --set synchronous_commit=… both set synchronous_commit: give one of them"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `synchronous_standby_names` in its two forms, `FIRST 1 (…)` and `ANY 1 (…)`, swept with
/// `--set` in single quotes: each is a combination of its own, the standby is `sync` under the
/// first and `quorum` under the second (what `pg_stat_replication` calls them), and the
/// setting is back afterwards.
#[test]
fn first_and_any_are_swept_in_quotes_and_the_standby_is_sync_then_quorum() {
    let (data, sb, standby, _cleanup) = started("kinds-first-any");
    let json = run_json(
        &data,
        "query",
        &[
            "--setup",
            "CREATE TABLE kinds_fa (id int)",
            "--sql",
            "INSERT INTO kinds_fa VALUES (1)",
            "--set",
            "synchronous_standby_names='FIRST 1 (pglab_standby_1)','ANY 1 (pglab_standby_1)'",
        ],
        "--clients 1 --duration 1s --sync-commit on",
    );
    let trials = json["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2, "{json}");
    for (names, state) in [
        ("FIRST 1 (pglab_standby_1)", "sync"),
        ("ANY 1 (pglab_standby_1)", "quorum"),
    ] {
        let t = trials
            .iter()
            .find(|t| t["settings"]["synchronous_standby_names"] == names)
            .unwrap_or_else(|| panic!("no trial with {names}: {json}"));
        let row = standby_row(&t["load"]["replicas"], names);
        assert_eq!(row["sync_state"], state, "{t}");
    }
    all_back(&data, &sb, &standby);
}

/// The growth run's combination at `level` over every step (`summary.commits`).
fn growth_level<'a>(json: &'a serde_json::Value, level: &str) -> &'a serde_json::Value {
    json["summary"]["commits"]
        .as_array()
        .and_then(|cs| {
            cs.iter().find(|c| {
                c["label"]
                    .as_str()
                    .is_some_and(|l| l.contains(&format!("synchronous_commit={level}")))
            })
        })
        .unwrap_or_else(|| panic!("no growth commits at {level}: {json}"))
}

#[test]
fn growth_commits_at_on_wait_the_round_trip_and_local_does_not() {
    let (data, sb, standby, _cleanup) = started("kinds-gcommit");
    let json = run_json(
        &data,
        "growth",
        &[],
        "--units 200 --steps 0,2,4 --indexes pk --churn 5% --sync-commit local,on --standby-rtt 2ms",
    );
    let (on, local) = (growth_level(&json, "on"), growth_level(&json, "local"));
    // Three steps, two designs, one round: six version writes at each level.
    assert_eq!(on["commits"], 6, "{on}");
    assert_eq!(local["commits"], 6, "{local}");
    let p50 = |c: &serde_json::Value| c["commit_ms"]["p50"].as_f64().unwrap();
    // An `on` COMMIT waits at least the round trip to the standby; a local one does not.
    assert!(
        p50(on) >= 1.9,
        "on at 2 ms: commit p50 {} ms ({on})",
        p50(on)
    );
    assert!(p50(local) < p50(on), "local {local} against on {on}");
    // Each step of each level keeps its own writes, with the commit inside each write's time.
    let steps = json["commits"].as_array().expect("commits per step");
    assert_eq!(steps.len(), 6, "{json}");
    for s in steps {
        for w in s["writes"].as_array().unwrap() {
            let (all, commit) = (w["seconds"].as_f64(), w["commit_seconds"].as_f64());
            assert!(
                all.zip(commit).is_some_and(|(a, c)| 0.0 < c && c <= a),
                "{w}"
            );
        }
        assert_eq!(
            standby_row(&s["replicas"], "growth step")["sync_state"],
            "sync"
        );
    }
    let findings = json["summary"]["findings"].to_string();
    assert!(
        findings
            .contains("COMMIT latency by synchronous_commit (p50 median [interval] of the steps")
            && findings.contains("local p50 ")
            && findings.contains("; on p50 ")
            && findings.contains("what each level buys"),
        "{findings}"
    );
    all_back(&data, &sb, &standby);
}

#[test]
fn a_standby_stopped_under_growth_writes_holds_on_commits_and_not_local() {
    let (data, sb, standby, _cleanup) = started("kinds-gfault");
    let json = run_json(
        &data,
        "growth",
        &[],
        "--units 500 --steps 0 --design snapshot --indexes pk --churn 0 --sync-commit local,on --standby-fault stop-at=0s,for=2s",
    );
    let at = |level: &str| {
        json["commits"]
            .as_array()
            .and_then(|cs| {
                cs.iter()
                    .find(|c| c["settings"]["synchronous_commit"] == level)
            })
            .map(|c| &c["fault"])
            .unwrap_or_else(|| panic!("no fault at {level}: {json}"))
    };
    let (on, local) = (at("on"), at("local"));
    // Stopped before the first write, back 2 s later: the `on` COMMIT waits for its return.
    assert!(on["window"]["from_s"].as_f64().is_some(), "{on}");
    assert!(on["commits_waited_s"].as_f64().unwrap() >= 1.5, "{on}");
    assert!(on["longest_commit_ms"].as_f64().unwrap() >= 1500.0, "{on}");
    assert!(local["window"]["from_s"].as_f64().is_some(), "{local}");
    assert!(local["commits_waited_s"].as_f64().unwrap() < 0.5, "{local}");
    let findings = json["summary"]["findings"].to_string();
    assert!(
        findings.contains("on under standby fault stop-at=0s,for=2s")
            && findings.contains("while the standby was stopped")
            && findings.contains("commits HUNG while pglab_standby_1 was gone"),
        "{findings}"
    );
    assert!(
        findings.contains("no commit hung: local does not wait for pglab_standby_1"),
        "{findings}"
    );
    // Back and streaming, by one postmaster: the stopped one was started again, not doubled.
    all_back(&data, &sb, &standby);
    assert!(standby.running());
    assert_eq!(postmasters(&standby.node.root.join("data")), 1);
}

/// Processes running a postgres server on the data directory `dir`.
fn postmasters(dir: &Path) -> usize {
    let arg = format!("-D {}", dir.display());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("bin/postgres ") && c.contains(&arg))
        .count()
}

#[test]
fn ctrl_c_while_a_growth_commit_waits_for_a_stopped_standby_puts_it_back() {
    let (data, sb, standby, _cleanup) = started("kinds-gcancel");
    let args = [
        "run", "growth", "--units", "500", "--steps", "0", "--design", "snapshot",
    ];
    let more = ["--indexes", "pk", "--churn", "0", "--sync-commit", "on"];
    let fault = ["--standby-fault", "stop-at=0s,for=60s", "--no-history"];
    let run = spawn(&data, &[&args[..], &more, &fault].concat());
    // Interrupted once the fault has stopped the standby, while the version's COMMIT waits.
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while standby.running() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!standby.running(), "the run never stopped the standby");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(interrupt(run), Some(130));
    all_back(&data, &sb, &standby);
    assert!(standby.running());
    assert_eq!(postmasters(&standby.node.root.join("data")), 1);
}
