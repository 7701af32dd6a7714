//! The sandbox through pglab's own code: create, start, connect, snapshot, stop, reuse,
//! destroy; as root; stale pid recovery; and the ways it can fail, each a sentence and no
//! orphaned server.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use pglab::paths::Paths;
use pglab::server::{Sandbox, SandboxStatus, Target, sandbox_pid, snapshot};

fn paths(tag: &str) -> Paths {
    let dir = common::temp_dir(tag);
    Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    }
}

#[tokio::test]
async fn lifecycle_create_start_snapshot_stop_reuse_destroy() {
    let p = paths("life");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    assert_eq!(sb.status(), SandboxStatus::NotCreated);
    let port = sb.start().unwrap();
    assert!(matches!(sb.status(), SandboxStatus::Running { .. }));
    let target = Target::new(sb.conn_params(port), true).unwrap();
    let client = target.connect().await.unwrap();
    let snap = snapshot::read(&client, &target).await.unwrap();
    assert!(snap.version.starts_with(|c: char| c.is_ascii_digit()));
    assert!(!snap.in_recovery && snap.superuser && snap.can_checkpoint);
    assert!(snap.setting("maintenance_work_mem").is_some());
    assert!(snap.counters.wal_bytes.is_some());
    let app: String = client
        .query_one(
            "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(app, "pglab");
    client
        .batch_execute("CREATE TABLE public.keepme (x int); INSERT INTO public.keepme VALUES (42)")
        .await
        .unwrap();
    drop(client);
    assert!(sb.stop().unwrap());
    assert_eq!(sb.status(), SandboxStatus::Stopped);
    assert_eq!(common::server_processes(&sb.root.to_string_lossy()), 0);
    // Restart reuses the cluster: the table is still there.
    let port = sb.start().unwrap();
    let target = Target::new(sb.conn_params(port), true).unwrap();
    let client = target.connect().await.unwrap();
    let x: i32 = client
        .query_one("SELECT x FROM public.keepme", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(x, 42);
    drop(client);
    sb.destroy().unwrap();
    assert!(!sb.root.exists());
    assert_eq!(common::server_processes(&sb.root.to_string_lossy()), 0);
}

#[test]
fn runs_the_server_unprivileged_when_root() {
    let p = paths("root");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    if !nix::unistd::Uid::effective().is_root() {
        assert!(sb.run_as.is_none());
        return;
    }
    let (uid, _, name) = sb.run_as.clone().expect("a server account when root");
    assert_ne!(uid.as_raw(), 0);
    sb.start().unwrap();
    let (pid, _) = sb.live_postmaster().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let real_uid = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(real_uid, uid.as_raw().to_string(), "server runs as {name}");
    sb.destroy().unwrap();
}

#[test]
fn root_data_dir_out_of_reach_moves_the_cluster() {
    if !nix::unistd::Uid::effective().is_root() {
        return;
    }
    let dir = common::temp_dir("private");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let p = Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sb = Sandbox::locate(&p, None, None).unwrap();
    assert!(
        sb.root.starts_with("/var/lib/pglab"),
        "{}",
        sb.root.display()
    );
    let port = sb.start().unwrap();
    assert!(port > 0);
    sb.destroy().unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn recovers_from_a_stale_postmaster_pid() {
    let p = paths("stale");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    sb.start().unwrap();
    let (pid, _) = sb.live_postmaster().unwrap();
    // A crash: the postmaster dies without removing its pid file.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // Dead once the postmaster is gone or a zombie (its cmdline empties a moment earlier,
    // while the kernel still tears it down: then PostgreSQL's kill(pid, 0) on its socket lock
    // file still succeeds, and a start in that moment fails — seen once under CI load).
    for _ in 0..100 {
        if common::server_processes(&sb.root.to_string_lossy()) == 0
            && sb.live_postmaster().is_none()
            && !sandbox_pid::process_alive(pid)
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(sb.data().join("postmaster.pid").exists());
    let st = sb.status();
    let procs = std::process::Command::new("ps")
        .args(["-eo", "pid,ppid,stat,args"])
        .output()
        .unwrap();
    assert_eq!(
        st,
        SandboxStatus::Stopped,
        "{}",
        String::from_utf8_lossy(&procs.stdout)
            .lines()
            .filter(|l| l.contains("postgres"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let port = sb.start().expect("start recovers from the stale pid file");
    let target = Target::new(sb.conn_params(port), true).unwrap();
    target.connect().await.unwrap();
    sb.destroy().unwrap();
}

#[test]
fn half_created_cluster_is_recreated() {
    let p = paths("half");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    std::fs::create_dir_all(sb.data()).unwrap();
    std::fs::write(sb.data().join("junk"), b"x").unwrap();
    assert!(matches!(sb.status(), SandboxStatus::Broken { .. }));
    sb.start().expect("a broken sandbox is recreated");
    assert!(matches!(sb.status(), SandboxStatus::Running { .. }));
    sb.destroy().unwrap();
}

#[test]
fn failing_initdb_is_a_sentence_and_leaves_nothing_running() {
    let p = paths("initdbfail");
    let real = Sandbox::locate(&p, None, None).unwrap().bin.dir;
    let fake = common::temp_dir("fakebin");
    for t in ["pg_ctl", "postgres", "psql"] {
        std::os::unix::fs::symlink(real.join(t), fake.join(t)).unwrap();
    }
    std::fs::write(
        fake.join("initdb"),
        "#!/bin/sh\necho 'initdb: error: disk on fire' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(fake.join("initdb"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sb = Sandbox::locate(&p, Some(&fake), None).unwrap();
    let e = sb.start().unwrap_err().to_string();
    assert!(
        e.contains("initdb failed") && e.contains("disk on fire"),
        "{e}"
    );
    assert_eq!(common::server_processes(&sb.root.to_string_lossy()), 0);
}

#[test]
fn taken_port_is_a_sentence() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = paths("port");
    let sb = Sandbox::locate(&p, None, Some(port)).unwrap();
    let e = sb.start().unwrap_err().to_string();
    assert!(e.contains(&format!("port {port} is already taken")), "{e}");
    assert_eq!(common::server_processes(&sb.root.to_string_lossy()), 0);
    // Without a fixed port a free one is picked.
    let sb = Sandbox::locate(&p, None, None).unwrap();
    assert_ne!(sb.start().unwrap(), port);
    sb.destroy().unwrap();
}

#[test]
fn missing_binaries_say_how_to_install() {
    let p = paths("nobin");
    let empty = common::temp_dir("emptybin");
    let e = Sandbox::locate(&p, Some(&empty), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--pg-bin"), "{e}");
}

#[test]
fn leases_keep_the_server_for_the_last_user() {
    let p = paths("lease");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    let (_, a) = sb.open().unwrap();
    let (_, b) = sb.open().unwrap();
    assert!(
        !sb.close(a, false).unwrap(),
        "another user still holds a lease"
    );
    assert!(sb.live_postmaster().is_some());
    assert!(sb.close(b, false).unwrap(), "the last user stops it");
    assert!(sb.live_postmaster().is_none());
    sb.destroy().unwrap();
}

/// A `postmaster.pid` naming a live process that is not this sandbox's postmaster (after a
/// host crash its PID may belong to anything, e.g. another cluster's `postgres` process):
/// stop and restart refuse with a sentence naming the PID and signal nothing.
#[test]
fn stop_and_restart_signal_only_the_sandboxs_own_postmaster() {
    let p = paths("foreignpid");
    let sb = Sandbox::locate(&p, None, None).unwrap();
    sb.start().unwrap();
    assert!(sb.stop().unwrap());
    // A process named `postgres` that is not a postmaster of this data directory.
    let fake_dir = common::temp_dir("fakepostgres");
    let fake = fake_dir.join("postgres");
    std::fs::copy("/bin/sleep", &fake).unwrap();
    let mut other = std::process::Command::new(&fake)
        .arg("300")
        .spawn()
        .unwrap();
    let pid = other.id() as i32;
    std::fs::write(
        sb.data().join("postmaster.pid"),
        format!(
            "{pid}\n{}\n1700000000\n5432\n{}\n127.0.0.1\n  5432001  1\nready   \n",
            sb.data().display(),
            sb.root.display()
        ),
    )
    .unwrap();
    assert_ne!(
        sb.status(),
        SandboxStatus::Running { pid, port: 5432 },
        "a foreign process is not the sandbox running"
    );
    let e = sb.stop().expect_err("stop refuses").to_string();
    assert!(e.contains(&pid.to_string()), "{e}");
    let e = sb.restart().expect_err("restart refuses").to_string();
    assert!(e.contains(&pid.to_string()), "{e}");
    assert!(
        other.try_wait().unwrap().is_none(),
        "the foreign process was signalled"
    );
    other.kill().ok();
    other.wait().ok();
    // The sandbox itself still starts (the stale file is its own) and stops.
    sb.start().expect("start after a foreign pid file");
    assert!(sb.stop().unwrap());
    sb.destroy().unwrap();
}
