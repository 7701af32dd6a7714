//! The disk probes on a server pglab did not start: they write only where pglab owns the
//! directory (its data dir, or `--probe-dir`), never into the server's data directory; they
//! check the free space first; and a probe file left by a killed pglab is removed by the
//! next start. The report says which directory was measured and whether it is on the
//! server's device.

use crate::common;

use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// `probe --disk` with small probes on the sandbox of this file reached with --db (a server
/// pglab did not start, on this host), with `extra` arguments.
fn probe_disk(extra: &[&str]) -> Output {
    let lab = common::lab();
    lab.command()
        .args(["--db", &lab.db(), "probe", "--disk", "--disk-size"])
        .args(["4MB", "--fsync-time", "100ms"])
        .args(extra)
        .output()
        .unwrap()
}

fn probe_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".pglab-probe-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_real_servers_data_directory_is_never_probed() {
    let lab = common::lab();
    let out = probe_disk(&["--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = v["disk"]["dir"].as_str().unwrap();
    assert!(
        std::path::Path::new(dir).starts_with(&lab.paths.data_dir),
        "the probe ran in {dir}, not in pglab's data dir {}",
        lab.paths.data_dir.display()
    );
    assert!(
        !std::path::Path::new(dir).starts_with(lab.sandbox.data()),
        "the server's data directory was probed: {dir}"
    );
    // It says which device that is, and that the server's data directory is on the same
    // one here (both under the same temporary directory).
    assert!(
        v["disk"]["device"].as_str().is_some_and(|d| !d.is_empty()),
        "{v}"
    );
    assert_eq!(v["disk"]["server_device"], "same", "{}", v["disk"]);
    let out = probe_disk(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("pglab's directory") && text.contains("the server's device"),
        "the text says what was measured: {text}"
    );
    assert!(probe_files(&lab.sandbox.data()).is_empty());
}

#[test]
fn a_probe_dir_without_room_is_refused_before_anything_is_written() {
    let Some(mnt) = common::tmpfs("probe-room", "8m") else {
        return;
    };
    let out = probe_disk(&["--probe-dir", &mnt.to_string_lossy()]);
    let err = stderr(&out);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    std::fs::remove_dir(&mnt).ok();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("free") && err.contains("--probe-dir"), "{err}");
}

#[test]
fn a_killed_probes_file_is_removed_by_the_next_start() {
    let lab = common::lab();
    std::fs::create_dir_all(&lab.paths.data_dir).unwrap();
    // A pid no process can have: beyond the kernel's pid_max.
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4_194_304);
    let stale = lab
        .paths
        .data_dir
        .join(format!(".pglab-probe-{}-seq", pid_max + 1));
    std::fs::write(&stale, vec![0u8; 4096]).unwrap();
    let out = lab
        .command()
        .args(["--db", &lab.db(), "probe"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists(), "the killed probe's file is still there");
}
