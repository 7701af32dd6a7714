//! Two pglab processes at once (issue 50, item 8): on one data directory the second is refused
//! with the first's pid and what it may still do; on two data directories and one server, two
//! runs that need the same generated dataset both finish (one waits for the other to make it,
//! then reuses it) instead of colliding on its name. Both front ends behave alike on a held
//! lock: they say who holds it and wait, and the wait can be stopped (Ctrl-C, Esc).

use crate::common;
use crate::common::tmux;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `pglab --db <lab> run index-build …` with `data` as its data directory.
fn run(data: &Path, rows: &str, mwm: &str, repeat: &str) -> Command {
    let lab = common::lab();
    let mut c = Command::new(common::TestLab::bin());
    c.env("PGLAB_DATA_DIR", data)
        .env("PGLAB_CONFIG_DIR", data.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .env_remove("PGUSER")
        .args([
            "--db",
            &lab.db(),
            "run",
            "index-build",
            "--rows",
            rows,
            "--writes",
            "lab",
        ])
        .args(["--order", "random", "--mwm", mwm, "--repeat", repeat])
        .args(["--no-history", "--yes"]);
    c
}

fn spawn(mut c: Command) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c.spawn().expect("pglab starts")
}

fn finish(c: Child) -> Output {
    c.wait_with_output().expect("pglab ends")
}

/// Wait until `child` holds the run lock of `data` (its pid on the lock file's first line).
fn wait_for_lock(data: &Path, child: &Child) {
    let file = data.join("run.lock");
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let pid = std::fs::read_to_string(&file).unwrap_or_default();
        if pid.lines().next() == Some(child.id().to_string().as_str()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the first pglab never took the lock");
}

#[test]
fn a_second_pglab_on_the_same_data_dir_is_told_who_runs_and_waits() {
    let data = common::temp_dir("lock-one");
    let first = spawn(run(&data, "400k", "1MB,64MB", "8"));
    wait_for_lock(&data, &first);
    let pid = first.id();
    let second = spawn(run(&data, "5k", "1MB", "1"));
    let first = finish(first);
    let second = finish(second);
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains(&format!("another pglab (pid {pid}"))
            && err.contains("pglab run index-build")
            && err.contains("meanwhile this pglab can still look")
            && err.contains("Waiting for it to end"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let first_err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{first_err}");
    // It ran once the first had ended: its trial comes after the wait.
    assert_eq!(second.status.code(), Some(0), "{err}");
    assert!(
        err.find("Waiting for it to end") < err.find("[1/1]"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn two_runs_needing_one_dataset_wait_for_each_other_and_both_finish() {
    let (a, b) = (common::temp_dir("lock-a"), common::temp_dir("lock-b"));
    // A row count no other test uses: the dataset is generated here, by one of the two.
    let rows = format!("{}", 200_000 + std::process::id() % 1000);
    let one = spawn(run(&a, &rows, "4MB", "1"));
    let two = spawn(run(&b, &rows, "4MB", "1"));
    for (name, out) in [("one", finish(one)), ("two", finish(two))] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert!(!err.contains("duplicate key"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// The TUI's road: a run started while another pglab holds the lock waits, as `pglab run`
/// does, saying who holds it in the same words, and Esc stops the wait (nothing ran).
#[test]
fn the_tui_waits_for_the_lock_in_the_same_words_and_esc_stops_waiting() {
    if tmux::tmux_missing() {
        return;
    }
    let lab = common::lab();
    let held = pglab::experiment::lab::data_dir_lock::acquire(
        &lab.paths.data_dir,
        "pglab run index-build",
    )
    .unwrap();
    let script = format!(
        "env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGSERVICE PGLAB_DATA_DIR={} PGLAB_CONFIG_DIR={} {} --keep-sandbox; echo \"EXIT=$?\"; sleep 600",
        tmux::shell_quote(&lab.paths.data_dir),
        tmux::shell_quote(&lab.paths.config_dir),
        tmux::shell_quote(&common::TestLab::bin()),
    );
    let t = tmux::Tmux::start("lock", 250, 50, &script);
    let wait = Duration::from_secs(60);
    t.wait_for("the target pane", wait, |s| s.contains("conns"));
    // One trial of the default experiment, not big: it goes straight to the lock.
    t.keys(&["r"]);
    let who = format!(
        "another pglab (pid {}, pglab run index-build",
        std::process::id()
    );
    let s = t.wait_for("the wait", wait, |s| s.contains(&who));
    assert!(!s.contains("not started"), "{s}");
    // Still waiting a moment later: it neither ran nor gave up.
    std::thread::sleep(Duration::from_secs(2));
    let s = t.screen();
    assert!(!s.contains("not started") && !s.contains("[1/"), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("the wait to stop", wait, |s| {
        s.contains("not started: stopped waiting for the other pglab's run")
    });
    t.keys(&["q"]);
    t.wait_for("pglab to exit", wait, |s| s.contains("EXIT=0"));
    drop(held);
    // The same words on the command line: the CLI test above asserts them for `pglab run`.
    let lock_error = pglab::experiment::lab::data_dir_lock::LockError::Held {
        dir: lab.paths.data_dir.clone(),
        holder: pglab::experiment::lab::data_dir_lock::Holder {
            pid: Some(1),
            what: "x".into(),
            since: "y".into(),
        },
    };
    assert!(
        lock_error
            .waiting("Esc")
            .contains("Waiting for it to end (Esc stops waiting)")
    );
}
