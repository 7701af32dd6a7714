//! The sandbox with a standby, through the `pglab` binary: what the standby tests share.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pglab::paths::Paths;
use pglab::server::{Sandbox, Standby};

/// `pglab --data-dir DATA ARGS…`, with no libpq environment pointing elsewhere.
fn command(data: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pglab"));
    c.arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE");
    c
}

/// Run pglab to its end.
pub fn pglab(data: &Path, args: &[&str]) -> Output {
    command(data, args).output().expect("pglab runs")
}

/// Start pglab in the background, its output dropped.
pub fn spawn(data: &Path, args: &[&str]) -> Child {
    command(data, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pglab starts")
}

/// Ctrl-C to a pglab started by [`spawn`]: its exit code.
pub fn interrupt(mut run: Child) -> Option<i32> {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    run.wait().expect("pglab ends").code()
}

/// The run's stdout, asserting that it succeeded.
pub fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "pglab failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `sandbox status` until it shows the standby streaming (the walreceiver connects a moment
/// after the standby accepts connections).
pub fn wait_streaming(data: &Path) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let text = ok(&pglab(data, &["sandbox", "status"]));
        if text.contains("replication: pglab_standby_1 streaming") || Instant::now() > end {
            return text;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Destroys the sandbox and its standbys when the test ends, passed or not: a failed
/// assertion must not leave servers and relays running.
pub struct Cleanup(pub PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = pglab(&self.0, &["sandbox", "destroy"]);
    }
}

/// A sandbox (not started yet) and its first standby, in a temporary data dir.
pub fn lab(tag: &str) -> (PathBuf, Sandbox, Standby, Cleanup) {
    let dir = super::temp_dir(tag);
    let data = dir.join("data");
    let paths = Paths {
        data_dir: data.clone(),
        config_dir: dir.join("config"),
    };
    let sb = Sandbox::locate(&paths, None, None).unwrap();
    let standby = Standby::of(&sb, 1).unwrap();
    (data.clone(), sb, standby, Cleanup(data))
}

/// The record follows `assets/schema/KIND.schema.json`: the standby and sweep fields too.
pub fn schema_check(kind: &str, json: &serde_json::Value) {
    let schema = match kind {
        "growth" => include_str!("../../assets/schema/growth.schema.json"),
        "query" => include_str!("../../assets/schema/query.schema.json"),
        "ingest" => include_str!("../../assets/schema/ingest.schema.json"),
        other => panic!("no schema for {other}"),
    };
    let schema: serde_json::Value = serde_json::from_str(schema).expect("schema is JSON");
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(json)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{kind} schema violations: {errors:#?}");
}
