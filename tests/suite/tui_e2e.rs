//! The real binary in a real terminal: pglab's TUI under tmux, on its own sandbox in a temp
//! data dir. Skipped (with a message) when tmux is not installed.

use crate::common;
use crate::common::tmux;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use tmux::{Tmux, shell_quote, tmux_missing};

fn titles_shown(s: &str) -> bool {
    ["Target", "Host", "Parameters", "Run", "History"]
        .iter()
        .all(|t| s.contains(t))
}

/// A number followed by a unit or a percent somewhere on a line that starts with `label`.
fn live(s: &str, label: &str) -> bool {
    s.lines().any(|l| {
        l.find(label)
            .is_some_and(|i| l[i + label.len()..].chars().any(|c| c.is_ascii_digit()))
    })
}

/// pglab in a fresh tmux session on a sandbox of its own under `dir`; when it exits the pane
/// shows its exit code and the terminal's modes.
fn start(dir: &Path, tag: &str) -> Tmux {
    start_env(dir, tag, "")
}

/// As [`start`], with `env` (`NAME=value …`) in pglab's environment.
fn start_env(dir: &Path, tag: &str, env: &str) -> Tmux {
    let data = dir.join("data");
    let config = dir.join("config");
    let bin = env!("CARGO_BIN_EXE_pglab");
    let script = format!(
        "env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER -u PGSERVICE {env} PGLAB_DATA_DIR={} PGLAB_CONFIG_DIR={} {}; echo \"EXIT=$?\"; stty -a | tr '\\n' ' '; echo; sleep 600",
        shell_quote(&data),
        shell_quote(&config),
        shell_quote(Path::new(bin)),
    );
    Tmux::start(tag, 100, 30, &script)
}

/// After pglab exited: code 0, the terminal in cooked mode, no server of its data dir left.
fn assert_left_clean(tmux: &Tmux, dir: &Path) {
    assert_left_clean_with(tmux, dir, "EXIT=0");
}

/// After pglab exited with `exit` (`EXIT=N`): the terminal in cooked mode, no server left.
fn assert_left_clean_with(tmux: &Tmux, dir: &Path, exit: &str) {
    let s = tmux.wait_for("pglab to exit", Duration::from_secs(60), |s| {
        s.contains("EXIT=")
    });
    assert!(s.contains(exit), "{s}");
    // Cooked mode again: canonical input and echo on.
    let stty = tmux.wait_for("stty", Duration::from_secs(10), |s| s.contains("icanon"));
    let flags: Vec<&str> = stty.split_whitespace().collect();
    assert!(
        flags.contains(&"icanon") && flags.contains(&"echo"),
        "{stty}"
    );
    let data = dir.join("data");
    assert_eq!(
        common::server_processes(&data.display().to_string()),
        0,
        "a postgres of {} is still running",
        data.display()
    );
}

fn wait_ready(tmux: &Tmux) -> String {
    tmux.wait_for(
        "every pane with live values",
        Duration::from_secs(180),
        |s| {
            titles_shown(s)
                && s.contains("PostgreSQL")
                && live(s, "commits/s")
                && live(s, "cpu")
                && s.contains("load")
        },
    )
}

#[test]
fn the_tui_runs_in_a_real_terminal_and_leaves_it_clean() {
    if tmux_missing() {
        return;
    }
    let dir = common::temp_dir("tui");
    let tmux = start(&dir, "q");
    // All panes, with live values: a server version, readings that have numbers.
    let s = wait_ready(&tmux);
    println!("the screen at 100×30:\n{s}");
    assert!(s.contains("mwm"), "{s}");
    assert!(s.contains("q quit"), "{s}");

    tmux.keys(&["?"]);
    tmux.wait_for("the help overlay", Duration::from_secs(10), |s| {
        s.contains("Help") && s.contains("run the full sweep")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the help to close", Duration::from_secs(10), |s| {
        !s.contains("run the full sweep")
    });

    // The preset picker reads the shipped presets; the history overlay the (empty) history.
    tmux.keys(&["p"]);
    tmux.wait_for("the preset picker", Duration::from_secs(10), |s| {
        s.contains("Presets") && s.contains("cybertec-10m") && s.contains("shipped")
    });
    tmux.keys(&["Escape"]);
    // Wait for Esc to land: a key right behind it reads as Alt-key to the terminal.
    tmux.wait_for("the preset picker to close", Duration::from_secs(10), |s| {
        !s.contains("Enter load")
    });
    tmux.keys(&["h"]);
    tmux.wait_for("the history overlay", Duration::from_secs(10), |s| {
        s.contains("History · all experiments") && s.contains("no runs yet")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for(
        "the history overlay to close",
        Duration::from_secs(10),
        |s| !s.contains("History · all experiments"),
    );

    tmux.cmd(&["resize-window", "-t", "e2e", "-x", "80", "-y", "24"]);
    let s = tmux.wait_for("every title at 80×24", Duration::from_secs(10), |s| {
        titles_shown(s) && s.lines().count() <= 24 && s.lines().all(|l| l.chars().count() <= 80)
    });
    println!("the screen at 80×24:\n{s}");

    tmux.keys(&["q"]);
    assert_left_clean(&tmux, &dir);
    drop(tmux);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The pid of pglab in the pane (the shell's child).
fn pglab_pid(tmux: &Tmux) -> i32 {
    let out = tmux.cmd(&["display-message", "-p", "-t", "e2e", "#{pane_pid}"]);
    let shell: i32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("pane pid");
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid: i32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == shell && head.ends_with("(pglab") {
            return head
                .split_whitespace()
                .next()
                .and_then(|p| p.parse().ok())
                .expect("pid");
        }
    }
    panic!("no pglab process under the pane's shell {shell}");
}

#[test]
fn sigterm_leaves_cleanly_too() {
    if tmux_missing() {
        return;
    }
    let dir = common::temp_dir("tuiterm");
    let tmux = start(&dir, "term");
    wait_ready(&tmux);
    let pid = pglab_pid(&tmux);
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    assert_left_clean(&tmux, &dir);
    drop(tmux);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A panic on the UI's thread (planted: `PGLAB_FAULT=tui-key` panics at the first key, in
/// test builds only) restores the terminal before anything is printed, leaves one sentence
/// and no backtrace on the screen (the backtrace goes to the log), and the sandbox is stopped
/// on the way out.
#[test]
fn a_panic_restores_the_terminal_says_one_sentence_and_stops_the_sandbox() {
    if tmux_missing() {
        return;
    }
    let dir = common::temp_dir("tuipanic");
    let tmux = start_env(&dir, "panic", "PGLAB_FAULT=tui-key");
    wait_ready(&tmux);
    tmux.keys(&["?"]);
    tmux.wait_for("pglab to exit", Duration::from_secs(60), |s| {
        s.contains("EXIT=")
    });
    // Wrapped lines joined: the sentence is longer than the pane is wide.
    let joined =
        String::from_utf8_lossy(&tmux.cmd(&["capture-pane", "-p", "-J", "-t", "e2e"]).stdout)
            .into_owned();
    assert!(
        joined.contains("pglab stopped on an internal error at ")
            && joined.contains(
                "(a bug: please report it); the terminal is restored and the details are in "
            ),
        "{joined}"
    );
    assert!(
        !joined.contains("panicked at") && !joined.contains("stack backtrace"),
        "{joined}"
    );
    assert_left_clean_with(&tmux, &dir, "EXIT=101");
    drop(tmux);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The position indicator of a scrolled table, e.g. " 1–6/50": (first row, rows in all).
fn scroll_position(s: &str) -> Option<(usize, usize)> {
    s.lines().find_map(|l| {
        let (_, tail) = l.rsplit_once('–')?;
        let (_, before) = l.rsplit_once('–')?.0.rsplit_once(' ')?;
        let first: usize = before.trim().parse().ok()?;
        let total: usize = tail
            .split('/')
            .nth(1)?
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .ok()?;
        Some((first, total))
    })
}

/// At 80×24 over a real sweep: the run pane scrolls with the keys and switches to the chart.
#[test]
fn at_80x24_the_run_pane_scrolls_and_shows_the_chart() {
    if tmux_missing() {
        return;
    }
    let dir = common::temp_dir("tuiscroll");
    let tmux = start(&dir, "scroll");
    wait_ready(&tmux);
    tmux.cmd(&["resize-window", "-t", "e2e", "-x", "80", "-y", "24"]);
    // A small sweep: 20k rows, two memory settings, four builds each, one order.
    // rows, key, order, then table, column, sample and writes (left as they are), mwm,
    // workers, set, repeat.
    for (field_down, value) in [(0, "20k"), (2, "random"), (5, "16MB,64MB"), (3, "4")] {
        for _ in 0..field_down {
            tmux.keys(&["Down"]);
        }
        tmux.keys(&["Enter", "C-u"]);
        tmux.keys(&["-l", value]);
        tmux.keys(&["Enter"]);
    }
    tmux.wait_for("the small sweep's cost", Duration::from_secs(10), |s| {
        s.contains("8 trials")
    });
    tmux.keys(&["s"]);
    let s = tmux.wait_for("the sweep to finish", Duration::from_secs(120), |s| {
        s.contains("finished in")
    });
    println!("after the sweep at 80×24:\n{s}");
    // v: summary → trials; the table of 8 trials does not fit and scrolls with the keys.
    tmux.keys(&["v"]);
    let s = tmux.wait_for("the trials view", Duration::from_secs(10), |s| {
        s.contains("trials") && scroll_position(s).is_some()
    });
    let (first, total) = scroll_position(&s).unwrap();
    assert_eq!(total, 8, "{s}");
    tmux.keys(&["Home"]);
    let top = tmux.wait_for("the top of the table", Duration::from_secs(10), |s| {
        scroll_position(s).is_some_and(|(f, _)| f == 1)
    });
    tmux.keys(&["j"]);
    tmux.wait_for("one row down", Duration::from_secs(10), |s| {
        scroll_position(s).is_some_and(|(f, _)| f == 2)
    });
    tmux.keys(&["End"]);
    tmux.wait_for("the end of the table", Duration::from_secs(10), |s| {
        scroll_position(s).is_some_and(|(f, _)| f >= first.max(2))
    });
    // k scrolls back up and does not leave the pane.
    tmux.keys(&["k"]);
    let s = tmux.wait_for("one row up", Duration::from_secs(10), |s| {
        scroll_position(s).is_some()
    });
    assert!(s.contains("trials"), "{s}\n(top was)\n{top}");
    // v again: the chart, with its axis.
    tmux.keys(&["v"]);
    let s = tmux.wait_for("the chart view", Duration::from_secs(10), |s| {
        s.contains("chart") && s.contains("MB")
    });
    println!("the chart at 80×24:\n{s}");
    assert!(s.lines().count() <= 24 && s.lines().all(|l| l.chars().count() <= 80));
    tmux.keys(&["q"]);
    assert_left_clean(&tmux, &dir);
    drop(tmux);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The terminal vanishes (an SSH session dropped, tmux killed): pglab leaves as on SIGHUP,
/// without aborting on the dead stderr, and stops its sandbox — no server is left behind.
#[test]
fn a_vanished_terminal_leaves_no_server_behind() {
    if tmux_missing() {
        return;
    }
    let dir = common::temp_dir("tuigone");
    let tmux = start(&dir, "gone");
    wait_ready(&tmux);
    let data = dir.join("data").display().to_string();
    assert!(common::server_processes(&data) > 0, "the sandbox runs");
    tmux.cmd(&["kill-server"]);
    let start = Instant::now();
    while common::server_processes(&data) > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "a postgres of {data} is still running after the terminal went away"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    drop(tmux);
    let _ = std::fs::remove_dir_all(&dir);
}
