//! The sandbox accepts only pglab's account: another local account (`nobody`) can reach it
//! neither by its unix socket nor over TCP on 127.0.0.1, while pglab, its tests and the
//! `connect:` lines that `pglab sandbox start` and `pglab sandbox status` print work as given
//! for the account running pglab. A sandbox made by an older pglab (trust for everyone) is
//! locked down by the next start.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{TestLab, temp_dir};

fn pglab(dir: &Path, args: &[&str]) -> Output {
    Command::new(TestLab::bin())
        .env("PGLAB_DATA_DIR", dir.join("data"))
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .env_remove("PGUSER")
        .env_remove("PGPASSFILE")
        .args(args)
        .output()
        .expect("run pglab")
}

fn text(o: &Output) -> String {
    assert!(
        o.status.success(),
        "pglab failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The shell commands after `connect:` / `over TCP:` in pglab's output.
fn connect_lines(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("connect:")
                .or_else(|| l.strip_prefix("over TCP:"))
                .map(|c| c.trim().to_string())
        })
        .collect()
}

/// Run `line` (a psql command as pglab printed it) with a query appended, as `user` (None:
/// this account). Ok(output of the query) or Err(psql's complaint).
fn run_line(line: &str, user: Option<&str>) -> Result<String, String> {
    let cmd = format!("{line} -w -X -A -t -c 'SELECT current_user'");
    let out = match user {
        None => Command::new("sh").args(["-c", &cmd]).output(),
        Some(u) => Command::new("runuser")
            .args(["-u", u, "--", "sh", "-c", &cmd])
            .current_dir("/")
            .output(),
    }
    .expect("sh runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn can_switch_to_nobody() -> bool {
    nix::unistd::Uid::effective().is_root()
        && Command::new("runuser")
            .args(["-u", "nobody", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
}

/// `nobody` tries the sandbox by its socket directory and by TCP, with every way pglab would
/// tell its own account to connect (the password file included).
fn assert_nobody_is_refused(lines: &[String], port: u16, socket_dir: &Path) {
    for line in lines {
        let r = run_line(line, Some("nobody"));
        assert!(r.is_err(), "nobody connected with `{line}`: {r:?}");
    }
    let by_socket = format!(
        "psql -h {} -p {port} -U pglab -d pglab",
        socket_dir.display()
    );
    let r = run_line(&by_socket, Some("nobody"));
    assert!(r.is_err(), "nobody connected by the socket: {r:?}");
    let by_tcp = format!("psql -h 127.0.0.1 -p {port} -U pglab -d pglab");
    let e = run_line(&by_tcp, Some("nobody")).expect_err("nobody connected over TCP");
    assert!(
        e.contains("password") || e.contains("authentication"),
        "TCP must want a password: {e}"
    );
}

#[test]
fn only_pglabs_account_reaches_the_sandbox() {
    if !can_switch_to_nobody() {
        common::skip_or_fail("sandbox access test: needs root and runuser to act as nobody");
        return;
    }
    let dir = temp_dir("access");
    let started = text(&pglab(&dir, &["sandbox", "start"]));
    let lines = connect_lines(&started);
    assert!(
        lines.len() >= 2,
        "sandbox start prints how to connect by socket and over TCP: {started}"
    );
    for line in &lines {
        assert_eq!(
            run_line(line, None).as_deref(),
            Ok("pglab"),
            "`{line}` works as given for pglab's account"
        );
    }
    let status = text(&pglab(&dir, &["sandbox", "status"]));
    let status_lines = connect_lines(&status);
    assert_eq!(
        status_lines, lines,
        "sandbox status prints the same connect lines: {status}"
    );
    let paths = pglab::paths::Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sb = pglab::server::Sandbox::locate(&paths, None, None).unwrap();
    let (_, port) = sb.live_postmaster().expect("running");
    assert_nobody_is_refused(&lines, port, &sb.root);
    // Written once: later starts find pglab's rules in place and leave them (and the server).
    let ino = |f: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(sb.data().join(f)).unwrap().ino()
    };
    let rules = (ino("pg_hba.conf"), ino("pg_ident.conf"));
    // pglab itself still runs experiments there.
    let out = pglab(
        &dir,
        &[
            "run",
            "index-build",
            "--rows",
            "2k",
            "--mwm",
            "1MB",
            "--repeat",
            "1",
            "--no-history",
        ],
    );
    text(&out);
    assert_eq!(
        (ino("pg_hba.conf"), ino("pg_ident.conf")),
        rules,
        "the access rules were written again"
    );
    text(&pglab(&dir, &["sandbox", "destroy"]));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_sandbox_made_with_trust_is_locked_down_by_the_next_start() {
    if !can_switch_to_nobody() {
        common::skip_or_fail("sandbox access test: needs root and runuser to act as nobody");
        return;
    }
    let dir = temp_dir("migrate");
    text(&pglab(&dir, &["sandbox", "start"]));
    let paths = pglab::paths::Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sb = pglab::server::Sandbox::locate(&paths, None, None).unwrap();
    // What an older pglab left: initdb -A trust, a socket directory anyone may enter, no
    // password, and it may still be running.
    let hba = sb.data().join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n",
    )
    .unwrap();
    if let Some((uid, gid, _)) = &sb.run_as {
        nix::unistd::chown(&hba, Some(*uid), Some(*gid)).unwrap();
    }
    for f in ["pgpass", "access"] {
        std::fs::remove_file(sb.root.join(f)).ok();
    }
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sb.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (pid, port) = sb.live_postmaster().expect("running");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let tcp = format!("psql -h 127.0.0.1 -p {port} -U pglab -d pglab");
    assert_eq!(
        run_line(&tcp, Some("nobody")).as_deref(),
        Ok("pglab"),
        "the old sandbox really was open"
    );
    // The next pglab that opens the running sandbox locks it down.
    let status = text(&pglab(&dir, &["probe"]));
    assert!(status.contains("sandbox"), "{status}");
    let lines = connect_lines(&text(&pglab(&dir, &["sandbox", "status"])));
    assert_nobody_is_refused(&lines, port, &sb.root);
    for line in &lines {
        assert_eq!(run_line(line, None).as_deref(), Ok("pglab"), "`{line}`");
    }
    // And a stopped old sandbox likewise, at its next start.
    text(&pglab(&dir, &["sandbox", "stop"]));
    std::fs::write(
        &hba,
        "local all all trust\nhost all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    if let Some((uid, gid, _)) = &sb.run_as {
        nix::unistd::chown(&hba, Some(*uid), Some(*gid)).unwrap();
    }
    for f in ["pgpass", "access"] {
        std::fs::remove_file(sb.root.join(f)).ok();
    }
    let started = text(&pglab(&dir, &["sandbox", "start"]));
    let lines = connect_lines(&started);
    let (_, port) = sb.live_postmaster().expect("running");
    assert_nobody_is_refused(&lines, port, &sb.root);
    for line in &lines {
        assert_eq!(run_line(line, None).as_deref(), Ok("pglab"), "`{line}`");
    }
    text(&pglab(&dir, &["sandbox", "destroy"]));
    std::fs::remove_dir_all(&dir).ok();
}
