//! Test support for the sandbox's standbys through the `pglab` binary: a sandbox of the
//! test's own (in a temporary data dir, destroyed with its standbys when the test ends,
//! passed or not), pglab run on it, its output checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pglab::paths::Paths;
use pglab::server::{Sandbox, Standby};

/// `pglab --data-dir DATA ARGS…`, without the environment's server.
pub fn pglab(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pglab"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("PGHOST")
        .env_remove("PGPORT")
        .env_remove("PGDATABASE")
        .output()
        .expect("pglab runs")
}

/// Its stdout, once it succeeded.
pub fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "pglab failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Destroys the sandbox and its standbys when the test ends, passed or not: a failed
/// assertion must not leave servers and relays running.
pub struct Cleanup(pub PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = pglab(&self.0, &["sandbox", "destroy"]);
    }
}

/// A data dir of the test's own, its sandbox and first standby (nothing started yet).
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
