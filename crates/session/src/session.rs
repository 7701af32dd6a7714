//! What both front ends share: the context every command gets, opening the target (and the
//! sandbox), exit codes, the user-error type, the shutdown signal, and running a front end
//! on the async runtime with logging set up. `commands/` and `tui/` both depend on this
//! module, never on each other; `main.rs` picks which one runs.

use std::future::Future;
use std::io::{IsTerminal, Write};

use color_eyre::eyre::Result;

use crate::cli::GlobalArgs;
use crate::paths::Paths;
use crate::server::{self, Opened, TargetOptions};

/// Exit codes: 0 done, 1 failed, 2 bad input, 130 cancelled.
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_CANCELLED: i32 = 130;

/// An error the user can act on: printed as one sentence, exit code attached.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct UserError {
    pub message: String,
    pub code: i32,
}

pub fn user_error(code: i32, message: impl Into<String>) -> color_eyre::eyre::Report {
    UserError {
        message: message.into(),
        code,
    }
    .into()
}

/// What every command gets.
pub struct Ctx {
    pub global: GlobalArgs,
    pub paths: Paths,
}

impl Ctx {
    pub fn target_options(&self) -> TargetOptions {
        let citus_workers = self
            .global
            .citus_workers
            .or_else(|| {
                configured_citus_workers(&self.paths.config_file())
                    .ok()
                    .flatten()
            })
            .filter(|n| *n > 0);
        TargetOptions {
            citus_workers,
            db: self.global.db.clone(),
            force_sandbox: self.global.sandbox,
            pg_bin: self.global.pg_bin.clone(),
            keep_sandbox: self.global.keep_sandbox,
            sandbox_port: self.global.sandbox_port,
        }
    }

    /// Open the target (starting the sandbox if it is the target), asking for a password on
    /// the terminal when the server wants one.
    pub async fn open_target(&self) -> Result<(Opened, tokio_postgres::Client)> {
        let opts = self.target_options();
        // The flag (not the config file's default) with another server named: say which wins.
        if self.global.citus_workers.is_some_and(|n| n > 0) && !opts.wants_sandbox() {
            return Err(user_error(
                EXIT_USAGE,
                "--citus-workers makes pglab's own sandbox a Citus cluster, but --db (or a PG* variable) names another server: drop --citus-workers to use that server as it is (a Citus coordinator is detected), or add --sandbox",
            ));
        }
        if opts.wants_sandbox()
            && opts.citus_workers.is_some()
            && let Ok(bin) = server::pgbin::find(opts.pg_bin.as_deref())
            && let Some(why) = server::cluster::citus_missing(&bin)
        {
            return Err(user_error(EXIT_USAGE, why));
        }
        let ask: &server::connect::AskPassword = &server::connect::ask_password_on_tty;
        let interactive = std::io::stdin().is_terminal();
        server::open(&opts, &self.paths, interactive.then_some(ask))
            .await
            .map_err(|e| {
                let code = match e {
                    server::TargetError::BadConninfo(_) => EXIT_USAGE,
                    _ => EXIT_FAILED,
                };
                user_error(code, e.to_string())
            })
    }

    /// Where the disk probes write (see [`crate::host::probe_site`]): `--probe-dir`, else the
    /// sandbox's directory, else pglab's data dir (created if need be); and whether that is
    /// on the server's device.
    pub fn probe_site(
        &self,
        opened: &Opened,
        server: Option<&server::ServerSnapshot>,
    ) -> crate::host::probe_site::ProbeSite {
        let sandbox = opened.sandbox.as_ref().map(|s| s.sandbox.root.clone());
        if self.global.probe_dir.is_none() && sandbox.is_none() {
            std::fs::create_dir_all(&self.paths.data_dir).ok();
        }
        let server_dir = server
            .filter(|_| opened.target.location.is_local())
            .and_then(|s| s.setting("data_directory"))
            .map(|v| std::path::PathBuf::from(&v.value));
        crate::host::probe_site::ProbeSite::choose(
            self.global.probe_dir.as_deref(),
            sandbox.as_deref(),
            &self.paths.data_dir,
            server_dir.as_deref(),
            opened.target.location.is_local(),
        )
    }

    /// A local directory on the server's data filesystem, when there is one.
    pub fn local_data_dir(
        opened: &Opened,
        server: Option<&server::ServerSnapshot>,
    ) -> Option<std::path::PathBuf> {
        if let Some(s) = &opened.sandbox {
            return Some(s.sandbox.root.clone());
        }
        if !opened.target.location.is_local() {
            return None;
        }
        let dir = server?.setting("data_directory")?.value.clone();
        let p = std::path::PathBuf::from(dir);
        p.exists().then_some(p)
    }
}

/// `[sandbox] citus_workers = N` in the config file (None: not set; 0 means one server).
pub(crate) fn configured_citus_workers(path: &std::path::Path) -> Result<Option<u32>, String> {
    #[derive(serde::Deserialize, Default)]
    struct File {
        #[serde(default)]
        sandbox: SandboxTable,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct SandboxTable {
        citus_workers: Option<u32>,
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let file: File = toml::from_str(&text).map_err(|e| {
        format!(
            "{}: {}",
            path.display(),
            e.message().trim().replace('\n', " ")
        )
    })?;
    match file.sandbox.citus_workers {
        Some(n) if n > crate::server::cluster::MAX_WORKERS => Err(format!(
            "{}: [sandbox] citus_workers = {n}: a sandbox cluster has 1 to {} workers (0: one server)",
            path.display(),
            crate::server::cluster::MAX_WORKERS
        )),
        n => Ok(n),
    }
}

/// Log to a file under the data dir (never to the screen the TUI owns). Returns the guard
/// that flushes the log on exit.
fn init_logging(paths: &Paths) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = paths.log_dir();
    // The log holds SQL text and host names: the directory 0700, the file 0600 (made here,
    // so the appender only opens it).
    crate::paths::private_dir(&dir).ok()?;
    crate::paths::open_private_append(&dir.join("pglab.log")).ok()?;
    let appender = tracing_appender::rolling::never(&dir, "pglab.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("PGLAB_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("info,tokio_postgres=warn,rustls=warn")
    });
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Resolves when the user asks to stop: Ctrl-C, SIGTERM, or SIGHUP (the SSH link dropped).
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
        _ = async { match hup.as_mut() { Some(s) => { s.recv().await; } None => std::future::pending().await } } => {}
    }
}

/// Run one front end: install the error hook, set up logging, check the global flags, start
/// the runtime, run `front`, and turn its result into the process exit code (a
/// [`UserError`] carries its own code; anything else is 1).
pub fn execute<F, Fut>(global: GlobalArgs, front: F) -> i32
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = Result<i32>>,
{
    let _ = color_eyre::config::HookBuilder::default()
        .display_env_section(false)
        .install();
    crate::closed_stdout::install_hook();
    crate::closed_stdout::guard(move || execute_with_hooks(global, front))
}

fn execute_with_hooks<F, Fut>(global: GlobalArgs, front: F) -> i32
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = Result<i32>>,
{
    let paths = Paths::resolve(global.data_dir.clone());
    // Look-only writes nothing anywhere, pglab's own log included.
    let _log = if global.observe {
        None
    } else {
        init_logging(&paths)
    };
    if let Err(e) = crate::sql::lab::check_schema_name(&global.schema) {
        eprintln!("pglab: --schema: {e}");
        return EXIT_USAGE;
    }
    // A --db that does not parse is bad input whatever the command: said before anything runs.
    if let Some(db) = &global.db
        && let Err(e) = server::conninfo::resolve(Some(db), &server::conninfo::ProcessEnv)
    {
        eprintln!("pglab: --db: {e}");
        return EXIT_USAGE;
    }
    if global.citus_workers.is_none()
        && let Err(e) = configured_citus_workers(&paths.config_file())
    {
        eprintln!("pglab: {e}");
        return EXIT_USAGE;
    }
    // A disk probe killed with -9 left its file where it wrote: pglab's own directories.
    for dir in [paths.data_dir.clone(), paths.data_dir.join("sandbox")] {
        crate::host::probe_site::remove_stale(&dir);
    }
    let ctx = Ctx { global, paths };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pglab: cannot start the async runtime: {e}");
            return EXIT_FAILED;
        }
    };
    let result: Result<i32> = rt.block_on(front(ctx));
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) => {
            let code = e
                .downcast_ref::<UserError>()
                .map(|u| u.code)
                .unwrap_or(EXIT_FAILED);
            // Never panic on a stderr that is gone (a dropped SSH session): the error is in
            // the log either way.
            let _ = writeln!(std::io::stderr(), "pglab: {e:#}");
            tracing::error!("exit {code}: {e:?}");
            code
        }
    }
}
