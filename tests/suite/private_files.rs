//! Files pglab writes that hold SQL text or host names (the run history, the log, the TUI's
//! last parameters, the import cache, presets, the tune's state) are created 0600, and the
//! log's directory 0700; a history file an older pglab made 0644 is tightened when appended to.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use pglab::history;
use pglab::report::example;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_history_is_0600_and_an_old_0644_one_is_tightened() {
    let dir = common::temp_dir("private-history");
    let path = dir.join("history.jsonl");
    history::append(&path, &example::cybertec_10m("20260301T100000Z-aaaa")).unwrap();
    assert_eq!(mode(&path), 0o600);
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    history::append(&old, &example::cybertec_10m("20260301T100000Z-bbbb")).unwrap();
    assert_eq!(mode(&old), 0o600);
    let (runs, _) = history::read(&old);
    assert_eq!(runs.len(), 1, "and it is still appended to");
}

#[test]
fn the_log_is_0600_in_a_0700_directory() {
    let dir = common::temp_dir("private-log");
    let data = dir.join("data");
    let _ = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", &data)
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["history", "list"])
        .output()
        .unwrap();
    let logs = data.join("logs");
    assert_eq!(mode(&logs), 0o700);
    assert_eq!(mode(&logs.join("pglab.log")), 0o600);
    // Only the log's own directory: the data directory holds the sandbox, which the server's
    // unprivileged account must reach (a 0700 one moved the sandbox to /var/lib/pglab).
    assert_eq!(
        mode(&data) & 0o005,
        0o005,
        "the data directory stays traversable"
    );
}

#[test]
fn private_writes_are_0600_whatever_was_there() {
    let dir = common::temp_dir("private-write");
    let f = dir.join("tui-params.json");
    std::fs::write(&f, "{}").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    pglab::paths::write_private(&f, b"{\"sql\": \"SELECT 1\"}").unwrap();
    assert_eq!(mode(&f), 0o600);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "{\"sql\": \"SELECT 1\"}"
    );
}

#[test]
fn look_only_writes_no_log_or_anything_else_in_the_data_dir() {
    let dir = common::temp_dir("observe-writes-nothing");
    let data = dir.join("data");
    let out = std::process::Command::new(common::TestLab::bin())
        .env("PGLAB_DATA_DIR", &data)
        .env("PGLAB_CONFIG_DIR", dir.join("config"))
        .args(["--observe", "history", "list"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!data.exists(), "--observe made {}", data.display());
}
