//! Test support: one real sandbox cluster per test file, started through pglab's own code
//! in a temporary data dir, stopped (and its directory removed) when the test binary exits.
//!
//! The integration tests are two binaries (`tests/suite/`, `tests/slow/`), one module per
//! file, so the crate is linked twice rather than once per file. A file still has a sandbox
//! (and a source cluster) of its own, as when each file was a binary: its tests may change
//! its settings or stop it without reaching into another file's.
#![allow(dead_code)]

mod per_file;
pub mod query;
pub mod source;
pub mod standby;
pub mod tmux;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use per_file::PerFile;

use pglab::paths::Paths;
use pglab::server::{Sandbox, Target};

pub struct TestLab {
    pub dir: PathBuf,
    pub paths: Paths,
    pub sandbox: Sandbox,
    pub port: u16,
}

static LABS: PerFile<TestLab> = PerFile::new();

extern "C" fn stop_labs() {
    for lab in LABS.all() {
        let _ = lab.sandbox.stop();
        let _ = std::fs::remove_dir_all(&lab.sandbox.root);
        let _ = std::fs::remove_dir_all(&lab.dir);
    }
}

/// A fresh temporary directory that the unprivileged server account can reach.
pub fn temp_dir(tag: &str) -> PathBuf {
    let base = std::env::temp_dir().join(format!(
        "pglab-test-{}-{tag}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&base).expect("temp dir");
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    base
}

fn rand_suffix() -> u32 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// The sandbox of the calling test file (created and started on first use).
#[track_caller]
pub fn lab() -> &'static TestLab {
    LABS.get(std::panic::Location::caller().file(), stop_labs, start_lab)
}

/// A sandbox of the calling test's own (keyed by its file and its test thread's name, which
/// libtest sets to the test's name): for tests that change their server's settings or restart
/// it, and would otherwise wait for one another on one sandbox. Call it on the test's own
/// thread (a current-thread runtime's `block_on` is; a spawned thread is not).
#[track_caller]
pub fn own_lab() -> &'static TestLab {
    let file = std::panic::Location::caller().file();
    let test = std::thread::current().name().unwrap_or("main").to_string();
    LABS.get(&format!("{file}#{test}"), stop_labs, start_lab)
}

fn start_lab() -> TestLab {
    let dir = temp_dir("lab");
    let paths = Paths {
        data_dir: dir.join("data"),
        config_dir: dir.join("config"),
    };
    let sandbox = Sandbox::locate(&paths, None, None)
        .expect("PostgreSQL server binaries (apt-get install postgresql)");
    let port = sandbox.start().expect("sandbox starts");
    TestLab {
        dir,
        paths,
        sandbox,
        port,
    }
}

impl TestLab {
    /// A target on the sandbox (connect within the calling test's runtime).
    pub fn target(&self) -> Arc<Target> {
        Arc::new(Target::new(self.sandbox.conn_params(self.port), true).expect("target"))
    }
    /// A `--db` conninfo for this lab's sandbox by its socket: to pglab, a server it did not
    /// start (on this host).
    pub fn db(&self) -> String {
        format!(
            "host={} port={} user=pglab dbname=pglab",
            self.sandbox.root.display(),
            self.port
        )
    }
    /// Let this account connect over the socket as `role` as well: the sandbox maps the OS
    /// accounts to its role `pglab` only (pg_ident.conf, map `pglab`). Read with a reload.
    pub async fn allow_role(&self, admin: &tokio_postgres::Client, role: &str) {
        use std::io::Write;
        let me = nix::unistd::User::from_uid(nix::unistd::Uid::effective())
            .unwrap()
            .unwrap()
            .name;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.sandbox.data().join("pg_ident.conf"))
            .unwrap();
        writeln!(f, "pglab  {me}  {role}").unwrap();
        admin
            .batch_execute("SELECT pg_reload_conf()")
            .await
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    /// `SHOW` of each name on a fresh session (starting the sandbox again if it is down).
    pub fn show(&self, names: &[&str]) -> Vec<String> {
        self.sandbox.start().expect("sandbox up");
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let c = self.target().connect().await.expect("connect");
            let mut out = Vec::new();
            for n in names {
                let r = c
                    .query_one("SELECT current_setting($1)", &[n])
                    .await
                    .unwrap();
                out.push(r.get(0));
            }
            out
        })
    }
    /// Path to the pglab binary built for this test run.
    pub fn bin() -> PathBuf {
        PathBuf::from(env!("CARGO_BIN_EXE_pglab"))
    }
    /// A `pglab` command pointed at this lab's sandbox and data dir.
    pub fn command(&self) -> std::process::Command {
        let mut c = std::process::Command::new(Self::bin());
        c.env("PGLAB_DATA_DIR", &self.paths.data_dir)
            .env("PGLAB_CONFIG_DIR", &self.paths.config_dir)
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE")
            .env_remove("PGUSER");
        c
    }
}

/// Count postgres server processes whose command line mentions `needle` (a data dir).
pub fn server_processes(needle: &str) -> usize {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return 0;
    };
    rd.flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("postgres") && c.contains(needle))
        .count()
}

/// A test that cannot run here says so and passes on a developer's machine; under CI
/// (`CI=true`), where `.ci/run` installed what it needs, the same absence is a failure.
pub fn skip_or_fail(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{why} (CI=true: .ci/run installs what this test needs, so this is a failure)");
    }
    eprintln!("SKIPPED: {why}");
}

/// None when the server can create extension `name`; otherwise the sentence that says it
/// cannot and how to install it (for `skip_or_fail`).
pub async fn extension_missing(c: &tokio_postgres::Client, name: &str) -> Option<String> {
    let available = c
        .query_opt(
            "SELECT 1 FROM pg_available_extensions WHERE name = $1",
            &[&name],
        )
        .await
        .expect("pg_available_extensions is readable")
        .is_some();
    (!available).then(|| {
        format!(
            "the extension {name} is not installed for this PostgreSQL (Debian: apt-get install postgresql-15-{name})"
        )
    })
}

/// Mount a tmpfs of `size` (e.g. "8m") on a fresh directory; None (and a skip, or a failure
/// under CI) when this machine does not allow it.
pub fn tmpfs(tag: &str, size: &str) -> Option<PathBuf> {
    let mnt = temp_dir(tag);
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}")])
        .arg("tmpfs")
        .arg(&mnt)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        skip_or_fail(&format!(
            "{tag}: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
        ));
        return None;
    }
    Some(mnt)
}
