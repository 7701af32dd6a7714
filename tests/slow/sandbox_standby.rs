//! The sandbox's standbys through the `pglab` binary, on real clusters: `sandbox start
//! --standbys 1` streams (status shows it), a kill -9 of the standby's postmaster or of its
//! relay is repaired by the next start, `sandbox stop` leaves no process; and at an emulated
//! 2 ms round trip, `synchronous_commit = on` at one client is bounded below by the RTT while
//! `local` is faster by more than half of it; a standby fault hangs the commits that wait for it and everything is put
//! back; the RTT swept as a setting, also with a fault, whose stopped standby comes back at the
//! trial's distance.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::standby::{interrupt, lab, ok, pglab, schema_check, spawn, wait_streaming};
use pglab::server::{Standby, Target, sandbox_pid};

/// Processes whose command line names `needle` (postgres or pglab's relay).
fn processes(needle: &str) -> usize {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return 0;
    };
    rd.flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .count()
}

fn kill9(pid: i32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    for _ in 0..100 {
        if !sandbox_pid::process_alive(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("pid {pid} did not die");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_standby_streams_is_stopped_and_recovers_from_kill_9() {
    let (data, sb, standby, _cleanup) = lab("standby");
    let said = ok(&pglab(&data, &["sandbox", "start", "--standbys", "1"]));
    assert!(said.contains("standby pglab_standby_1 streaming"), "{said}");
    let status = wait_streaming(&data);
    assert!(
        status.contains("replication: pglab_standby_1 streaming (async)"),
        "{status}"
    );
    // A row written on the primary is read on the standby.
    let (_, port) = sb.live_postmaster().unwrap();
    let primary = Target::new(sb.conn_params(port), true).unwrap();
    let c = primary.connect().await.unwrap();
    c.batch_execute("CREATE TABLE public.seen (x int); INSERT INTO public.seen VALUES (7)")
        .await
        .unwrap();
    let (_, sport) = standby.node.live_postmaster().unwrap();
    let on_standby = Target::new(standby.node.conn_params(sport), true).unwrap();
    let s = on_standby.connect().await.unwrap();
    let mut x = None;
    for _ in 0..100 {
        if let Ok(r) = s.query_one("SELECT x FROM public.seen", &[]).await {
            x = Some(r.get::<_, i32>(0));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(x, Some(7));
    let in_recovery: bool = s
        .query_one("SELECT pg_is_in_recovery()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(in_recovery);
    drop((c, s));

    // kill -9 of the standby's postmaster: the next start brings it back, streaming.
    let (pid, _) = standby.node.live_postmaster().unwrap();
    kill9(pid);
    ok(&pglab(&data, &["sandbox", "start"]));
    let status = wait_streaming(&data);
    assert!(status.contains("pglab_standby_1 streaming"), "{status}");

    let stopped = ok(&pglab(&data, &["sandbox", "stop"]));
    assert!(stopped.contains("standbys stopped"), "{stopped}");
    assert_eq!(processes(&standby.node.root.to_string_lossy()), 0);
    assert_eq!(processes(&sb.root.to_string_lossy()), 0);
    ok(&pglab(&data, &["sandbox", "destroy"]));
    assert!(!standby.node.root.exists());
}

/// One client, one row per commit: the median commit latency of each level.
fn p50_by_level(json: &serde_json::Value) -> Vec<(String, f64)> {
    json["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .map(|t| {
            (
                t["synchronous_commit"].as_str().unwrap().to_string(),
                t["latency_ms"]["p50"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn at_2ms_rtt_sync_commit_on_waits_a_round_trip_and_local_does_not() {
    let (data, sb, standby, _cleanup) = lab("rtt");
    let said = ok(&pglab(
        &data,
        &[
            "sandbox",
            "start",
            "--standbys",
            "1",
            "--standby-rtt",
            "2ms",
        ],
    ));
    assert!(said.contains("emulated 2 ms round trip"), "{said}");
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    let relay = standby.relay().running().expect("a relay runs");

    let out = ok(&pglab(
        &data,
        &[
            "run",
            "ingest",
            "--method",
            "insert",
            "--rows",
            "200",
            "--clients",
            "1",
            "--sync-commit",
            "local,on",
            "--repeat",
            "1",
            "--duration",
            "off",
            "--format",
            "json",
            "--no-history",
        ],
    ));
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    schema_check("ingest", &json);
    let p50 = p50_by_level(&json);
    let of = |level: &str| p50.iter().find(|(l, _)| l == level).unwrap().1;
    // `on` waits for the standby: the relay holds each way 1 ms, and a loaded machine only
    // adds to that, so the floor holds however busy it is.
    assert!(of("on") >= 1.9, "on: {p50:?}");
    // `local` does not wait: not a ceiling of its own (the commit's flush and a busy machine
    // can take 2 ms), but `on` less what it waits for. Both levels run the same commits one
    // after the other, so the machine's load adds to both; half the round trip is the margin
    // left for a load that differs between the two.
    assert!(of("on") - of("local") >= 1.0, "on less local: {p50:?}");
    let trial = &json["trials"][0];
    assert!(trial["replicas"].is_array(), "{trial}");
    // The run put the primary's settings back.
    assert!(
        sb.changed_settings().is_empty(),
        "{:?}",
        sb.changed_settings()
    );

    // kill -9 of the relay: the next start starts it again and the standby streams.
    kill9(relay.pid);
    ok(&pglab(&data, &["sandbox", "start"]));
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    let relay = standby.relay().running().expect("the relay is back");
    ok(&pglab(&data, &["sandbox", "stop"]));
    assert!(!sandbox_pid::process_alive(relay.pid));
    assert_eq!(processes(&standby.node.root.to_string_lossy()), 0);
    ok(&pglab(&data, &["sandbox", "destroy"]));
}

/// `run ingest` of single-row commits by one client on the lab's sandbox, with `args`.
fn ingest(data: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "ingest", "--method", "insert", "--clients", "1"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--repeat", "1", "--no-history"]);
    pglab(data, &all)
}

/// The JSON of such a run, which follows the ingest schema (standby fields included).
fn ingest_json(data: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    let json = serde_json::from_str(&ok(&ingest(data, &all))).expect("json");
    schema_check("ingest", &json);
    json
}

/// Trials of `duration` at the `sync` levels with the standby `fault`.
fn faulted(data: &Path, duration: &str, sync: &str, fault: &str) -> serde_json::Value {
    let args = [
        "--rows",
        "1M",
        "--duration",
        duration,
        "--sync-commit",
        sync,
    ];
    ingest_json(data, &[&args[..], &["--standby-fault", fault]].concat())
}

/// The trial at `level` and the run's findings that name the fault.
fn trial_at<'a>(json: &'a serde_json::Value, level: &str) -> &'a serde_json::Value {
    json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["synchronous_commit"] == level)
        .unwrap_or_else(|| panic!("no {level} trial: {json}"))
}

fn fault_findings(json: &serde_json::Value) -> Vec<String> {
    json["summary"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .filter(|f| f.contains("under standby fault"))
        .map(str::to_string)
        .collect()
}

async fn replay_pause_state(standby: &Standby) -> String {
    let (_, port) = standby.node.live_postmaster().expect("the standby runs");
    let t = Target::new(standby.node.conn_params(port), true).unwrap();
    let c = t.connect().await.unwrap();
    c.query_one("SELECT pg_get_wal_replay_pause_state()", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_standby_fault_hangs_the_commits_that_wait_for_it_and_everything_is_put_back() {
    let (data, sb, standby, _cleanup) = lab("fault");
    // Without a standby running there is nothing to stop: refused with a sentence.
    ok(&pglab(&data, &["sandbox", "start"]));
    let out = ingest(
        &data,
        &[
            "--rows",
            "100",
            "--duration",
            "2s",
            "--standby-fault",
            "stop-at=1s",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("no standby running"), "{said}");

    ok(&pglab(&data, &["sandbox", "start", "--standbys", "1"]));
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    let json = faulted(&data, "5s", "local,on", "stop-at=1s,for=2s");
    let on = trial_at(&json, "on");
    let local = trial_at(&json, "local");
    for t in [on, local] {
        assert!(t["fault"]["from_s"].as_f64().is_some(), "{t}");
        assert!(t["fault"]["to_s"].as_f64().unwrap() >= 2.0, "{t}");
    }
    // `on` waits for the only synchronous standby while it is stopped: at least a second
    // without a commit, and a commit that waited at least a second; `local` never does.
    assert!(on["stall_seconds"].as_u64().unwrap() >= 1, "{on}");
    assert!(on["latency_ms"]["max"].as_f64().unwrap() >= 1000.0, "{on}");
    let gone_ms = 1000.0
        * (local["fault"]["to_s"].as_f64().unwrap() - local["fault"]["from_s"].as_f64().unwrap());
    assert!(
        local["latency_ms"]["max"].as_f64().unwrap() < gone_ms,
        "{local}"
    );
    let said = fault_findings(&json);
    assert!(
        said.iter()
            .any(|f| f.contains(" on under") && f.contains("commits HUNG")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|f| f.contains(" local under") && f.contains("no commit hung")),
        "{said:?}"
    );
    // Put back: running and streaming again after the run.
    assert!(standby.running());
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));

    // Paused replay holds remote_apply; resumed after the run.
    let json = faulted(&data, "4s", "remote_apply", "pause-replay-at=1s,for=2s");
    let ra = trial_at(&json, "remote_apply");
    assert!(ra["latency_ms"]["max"].as_f64().unwrap() >= 1000.0, "{ra}");
    assert_eq!(replay_pause_state(&standby).await, "not paused");

    // Ctrl-C while `on` commits hang on the stopped standby: the run ends as cancelled, the
    // standby is started again and streams, the primary's settings are back.
    let args = ["run", "ingest", "--method", "insert", "--rows", "1M"];
    let more = ["--duration", "60s", "--sync-commit", "on", "--repeat", "1"];
    let fault = ["--standby-fault", "stop-at=1s", "--no-history"];
    let run = spawn(&data, &[&args[..], &more, &fault].concat());
    let end = Instant::now() + Duration::from_secs(60);
    while standby.running() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!standby.running(), "the fault never stopped the standby");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(interrupt(run), Some(130));
    assert!(standby.running());
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    assert!(
        sb.changed_settings().is_empty(),
        "{:?}",
        sb.changed_settings()
    );

    // A replay left paused (a pglab killed mid-fault) is resumed by the next start.
    standby.pause_replay().unwrap();
    assert_ne!(replay_pause_state(&standby).await, "not paused");
    ok(&pglab(&data, &["sandbox", "start"]));
    assert_eq!(replay_pause_state(&standby).await, "not paused");
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
}

/// The trial at the swept distance `rtt`.
fn trial_at_rtt<'a>(json: &'a serde_json::Value, rtt: &str) -> &'a serde_json::Value {
    json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["settings"]["pglab.standby_rtt"] == rtt)
        .unwrap_or_else(|| panic!("no trial at {rtt}: {json}"))
}

#[test]
fn the_standby_rtt_is_swept_like_a_setting_and_put_back_after_the_run() {
    let (data, _sb, standby, _cleanup) = lab("rttaxis");
    ok(&pglab(&data, &["sandbox", "start", "--standbys", "1"]));
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    let json = ingest_json(
        &data,
        &["--rows", "200", "--duration", "off", "--sync-commit", "on"]
            .iter()
            .chain(&["--standby-rtt", "0ms,4ms"])
            .copied()
            .collect::<Vec<_>>(),
    );
    let at = |rtt: &str| trial_at_rtt(&json, rtt);
    // Each value is a combination of its own; `on` waits at least the round trip at 4 ms.
    assert_eq!(json["trials"].as_array().unwrap().len(), 2, "{json}");
    assert!(at("0ms")["latency_ms"]["p50"].as_f64().is_some());
    let far = at("4ms")["latency_ms"]["p50"].as_f64().unwrap();
    assert!(far >= 3.8, "on at 4 ms: p50 {far} ms");
    // The distance the standby was started with (none) is back: no relay, streaming.
    assert!(standby.relay().running().is_none());
    assert_eq!(standby.rtt(), None);
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
}

/// Whether the primary sees `pglab_standby_1` streaming from 127.0.0.1 (through a relay; on
/// the socket `client_addr` is NULL).
async fn streams_from_relay(primary: &tokio_postgres::Client) -> bool {
    let sql = "SELECT host(client_addr) FROM pg_stat_replication \
               WHERE application_name = 'pglab_standby_1' AND state = 'streaming'";
    let row = primary.query_opt(sql, &[]).await.ok().flatten();
    row.and_then(|r| r.get::<_, Option<String>>(0)).as_deref() == Some("127.0.0.1")
}

/// Wait (while `run` goes on) until `until` holds; false when the run ended first.
fn while_running(run: &mut std::process::Child, until: impl Fn() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(120);
    while !until() {
        if run.try_wait().unwrap().is_some() || Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// After the fault stopped the standby and it came back, before the run ends: it streams
/// through a relay holding `one_way` each way.
async fn back_through_relay(
    run: &mut std::process::Child,
    standby: &Standby,
    primary: &tokio_postgres::Client,
    one_way: Duration,
) -> bool {
    assert!(while_running(run, || !standby.running()), "never stopped");
    assert!(while_running(run, || standby.running()), "never back");
    while run.try_wait().unwrap().is_none() {
        let relay = standby.relay().running().map(|r| r.spec.one_way);
        if relay == Some(one_way) && streams_from_relay(primary).await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fault_at_a_swept_distance_puts_the_standby_back_at_the_trials_distance() {
    let (data, sb, standby, _cleanup) = lab("rttfault");
    ok(&pglab(&data, &["sandbox", "start", "--standbys", "1"]));
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    let (_, port) = sb.live_postmaster().unwrap();
    let primary = Target::new(sb.conn_params(port), true).unwrap();
    let primary = primary.connect().await.unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_pglab"))
        .arg("--data-dir")
        .arg(&data)
        .args(["run", "ingest", "--method", "insert", "--clients", "1"])
        .args(["--rows", "1M", "--duration", "4s", "--sync-commit", "on"])
        .args([
            "--standby-fault",
            "stop-at=1s,for=1s",
            "--standby-rtt",
            "4ms",
        ])
        .args(["--repeat", "1", "--format", "json", "--no-history"])
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Put back at the trial's 4 ms (a relay holding 2 ms each way), not at the standby's own
    // distance (none: the primary's socket).
    let relayed = back_through_relay(&mut run, &standby, &primary, Duration::from_millis(2)).await;
    let out = run.wait_with_output().unwrap();
    let json: serde_json::Value = serde_json::from_str(&ok(&out)).expect("json");
    schema_check("ingest", &json);
    assert!(
        relayed,
        "after its return the standby did not stream through the relay"
    );
    let far = trial_at_rtt(&json, "4ms");
    let w = &far["fault"];
    let (from, back) = (w["from_s"].as_f64(), w["to_s"].as_f64());
    assert!(from.zip(back).is_some_and(|(f, b)| f < b), "{far}");
    assert!(w["problems"].is_null(), "{far}");
    // `on` waited for the stopped standby, and every commit for the round trip.
    assert!(far["latency_ms"]["max"].as_f64().unwrap() >= 900.0, "{far}");
    let p50 = far["latency_ms"]["p50"].as_f64().unwrap();
    assert!(p50 >= 3.8, "on at 4 ms: p50 {p50} ms");
    // Everything back: the standby's own distance (none, never saved), no relay, streaming,
    // the primary's settings.
    assert_eq!(standby.rtt(), None);
    assert!(standby.relay().running().is_none());
    assert!(wait_streaming(&data).contains("pglab_standby_1 streaming"));
    assert!(
        sb.changed_settings().is_empty(),
        "{:?}",
        sb.changed_settings()
    );
}
