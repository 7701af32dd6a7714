//! A run's context on someone else's server: everything pglab creates lives in its own
//! schema and carries a `COMMENT` marking it as pglab's; sessions set knobs with `SET` only;
//! long statements can be cancelled server-side. Also why a run stopped early.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::checkpoint::CheckpointPlan;
use super::event::Emitter;
use super::leftovers::drop_marked;
use super::whatif::{Applier, Entered};
use crate::host::HostSnapshot;
use crate::server::error::{describe_query_error, sqlstate};
use crate::server::{ServerSnapshot, Target};
use crate::sql::lab::MARK;
use crate::sql::quote::{ident, literal};
use crate::sql::settings::SessionSettings;

pub use super::run_error::RunError;

/// Options every run takes besides its experiment's parameters.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub schema: String,
    /// Per-statement limit for the experiment's own statements (None: no limit).
    pub statement_timeout: Option<Duration>,
    /// How long a statement may wait for a lock before giving up.
    pub lock_timeout: Duration,
    pub preset: Option<String>,
    /// The tune the run is a round of (recorded with it).
    pub tune: Option<super::record::TuneRef>,
    /// Where the finished report goes (the history file; None: not recorded, e.g. in some
    /// tests).
    pub recorder: Option<Arc<dyn super::record::Recorder>>,
    /// A local directory on the server's data filesystem, for free-space checks (read only:
    /// nothing is ever written there unless it is pglab's own).
    pub local_data_dir: Option<std::path::PathBuf>,
    /// A directory pglab owns on the server's device (the sandbox's, or pglab's data dir or
    /// `--probe-dir` when on the same device; see `host::probe_site`), where a run may write a
    /// small probe file of its own (ingest's fsync reference). None: the probe is skipped.
    pub probe_dir: Option<std::path::PathBuf>,
    /// Watch progress views while statements run (off only to measure the observer effect).
    pub poll_progress: bool,
    /// At most this much disk for the run, even when the filesystem has more free (None: what
    /// the filesystem says). Growth fills the steps that fit and projects the rest.
    pub disk_budget: Option<u64>,
    /// pglab's own sandbox when it is the target: server settings may be swept on it
    /// (reload, restart); None for any other server.
    pub sandbox: Option<crate::server::Sandbox>,
    /// The temporary files one trial may write (`--max-temp`); None: the default, 256 MB on
    /// a server pglab did not start ([`DEFAULT_MAX_TEMP`]) and no cap on the sandbox.
    pub max_temp: Option<u64>,
}

/// The temp-file cap of a trial on a server pglab did not start, unless `--max-temp` says.
pub(crate) const DEFAULT_MAX_TEMP: u64 = 256 * 1024 * 1024;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            schema: "pglab".into(),
            statement_timeout: None,
            lock_timeout: Duration::from_secs(5),
            preset: None,
            tune: None,
            recorder: None,
            local_data_dir: None,
            probe_dir: None,
            poll_progress: true,
            disk_budget: None,
            sandbox: None,
            max_temp: None,
        }
    }
}

/// Everything an experiment needs while it runs.
pub struct RunCtx {
    pub target: Arc<Target>,
    pub emit: Emitter,
    pub cancel: CancellationToken,
    pub run_id: String,
    pub opts: RunOptions,
    pub server: ServerSnapshot,
    pub host: HostSnapshot,
    /// The settings sweep and the combination in effect.
    pub whatif: Applier,
    /// Whether trials start with a CHECKPOINT, decided at the run's start (the `checkpoint`
    /// field, whose server it is, what the role may do).
    pub checkpoint: CheckpointPlan,
    notes: Mutex<Vec<String>>,
    /// This run created the lab schema (on a server pglab did not start it is dropped at
    /// the end, when the run's tables are gone).
    made_schema: std::sync::atomic::AtomicBool,
}

impl RunCtx {
    pub fn new(
        target: Arc<Target>,
        emit: Emitter,
        cancel: CancellationToken,
        run_id: String,
        opts: RunOptions,
        server: ServerSnapshot,
        host: HostSnapshot,
    ) -> RunCtx {
        RunCtx {
            target,
            emit,
            cancel,
            run_id,
            opts,
            server,
            host,
            whatif: Applier::none(),
            checkpoint: CheckpointPlan::decide(
                super::checkpoint::CheckpointMode::Auto,
                false,
                false,
            ),
            notes: Mutex::new(Vec::new()),
            made_schema: Default::default(),
        }
    }

    /// `"schema"."name"`.
    pub(crate) fn table(&self, name: &str) -> String {
        format!("{}.{}", ident(&self.opts.schema), ident(name))
    }

    /// Record a note in the report and show it live.
    /// Add a note to the run (said live once: a note that repeats, like the cold cache after
    /// each restart, is not printed again).
    pub(crate) async fn note(&self, s: impl Into<String>) {
        let s = s.into();
        let new = match self.notes.lock() {
            Ok(n) if n.contains(&s) => false,
            Ok(mut n) => {
                n.push(s.clone());
                true
            }
            Err(_) => true,
        };
        if new {
            self.emit.note(s).await;
        }
    }

    pub(crate) fn take_notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// A new session set up for experiments: names resolved in `pg_catalog`, then the lab
    /// schema (never `public`), the configured timeouts, nothing changed beyond this session.
    pub(crate) async fn session(&self) -> Result<Client, RunError> {
        let client = self
            .target
            .connect()
            .await
            .map_err(|e| RunError::Failed(e.to_string()))?;
        self.session_settings()
            .apply(&client)
            .await
            .map_err(|e| self.error(e))?;
        Ok(client)
    }

    /// The settings that make a fresh connection an experiment session (what `session`
    /// applies), for sessions opened where the context cannot go, e.g. on a client's own
    /// thread.
    pub(crate) fn session_settings(&self) -> SessionSettings {
        let mut s = SessionSettings::new();
        s.set("search_path", self.search_path()).set(
            "lock_timeout",
            format!("{}ms", self.opts.lock_timeout.as_millis()),
        );
        s.extend(&self.extra_settings());
        s
    }

    /// `pg_catalog, "lab"`: the built-in names first, so nothing in the lab schema (or
    /// anywhere else) can stand in for them; `public` not at all.
    pub(crate) fn search_path(&self) -> String {
        format!("pg_catalog, {}", ident(&self.opts.schema))
    }

    /// Settings every experiment session gets besides the search path: the statement
    /// timeout, (PostgreSQL 14+) a check that the client is still there, so a pglab that
    /// dies mid-statement does not leave the server building an index for nobody, and the
    /// swept session settings of the combination in effect.
    pub(crate) fn extra_settings(&self) -> SessionSettings {
        let mut s = SessionSettings::new();
        if let Some(t) = self.opts.statement_timeout {
            s.set("statement_timeout", format!("{}ms", t.as_millis()));
        }
        if self.server.version_num >= 140000 {
            s.set("client_connection_check_interval", "1s");
        }
        s.extend(&self.whatif.session_settings());
        s
    }

    /// Make settings combination `i` the one in effect (see [`Applier::enter`]); a restart
    /// or reload is said in a note, with its time (never part of a trial's).
    pub(crate) async fn enter_combo(&self, i: usize) -> Result<Entered, RunError> {
        self.check()?;
        let entered = self
            .whatif
            .enter(&self.target, &self.run_id, i)
            .await
            .map_err(RunError::Failed)?;
        let label = super::whatif::combo_label(&self.whatif.plan.server_part(i));
        match entered {
            Entered::Restarted { seconds } => {
                self.emit
                    .phase(None, format!("restarted the sandbox with {label}"))
                    .await;
                tracing::info!("restarted the sandbox with {label} in {seconds:.2} s");
                self.note(
                    "each restart of the sandbox leaves its caches cold: the trials right after one read from disk (ask for a warm-up where the experiment has one); restarts are never part of a trial's time",
                )
                .await
            }
            Entered::Reloaded => {
                self.emit
                    .phase(None, format!("reloaded the sandbox with {label}"))
                    .await
            }
            Entered::Same => {}
        }
        if entered != Entered::Same {
            crate::fault::point("after-whatif-change");
        }
        Ok(entered)
    }

    /// The swept settings as `SHOW` reports them in `client`'s session (empty when nothing is
    /// swept): what every trial records.
    pub(crate) async fn shown_settings(
        &self,
        client: &Client,
    ) -> Result<std::collections::BTreeMap<String, String>, RunError> {
        super::whatif::apply::shown(client, &self.whatif.names())
            .await
            .map_err(|e| self.error(e))
    }

    /// Map a query error: a cancel we asked for is `Cancelled`, the rest a sentence.
    pub(crate) fn error(&self, e: tokio_postgres::Error) -> RunError {
        if self.cancel.is_cancelled() {
            return RunError::Cancelled;
        }
        if sqlstate(&e) == Some("57014") {
            let msg = e
                .as_db_error()
                .map(|d| d.message().to_string())
                .unwrap_or_default();
            if msg.contains("statement timeout") {
                return RunError::Timeout {
                    limit: self
                        .opts
                        .statement_timeout
                        .map(|d| format!("{} s", d.as_secs()))
                        .unwrap_or_else(|| "server setting".into()),
                };
            }
        }
        match sqlstate(&e) {
            Some(code) => RunError::Server {
                sqlstate: code.to_string(),
                sentence: describe_query_error(&e),
            },
            None => RunError::Failed(describe_query_error(&e)),
        }
    }

    /// Run a statement on `client` so that cancelling the run cancels it on the server
    /// (within milliseconds) rather than just dropping the future, which would leave the
    /// backend working and the session blocked.
    pub(crate) async fn cancellable<T>(
        &self,
        client: &Client,
        fut: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, RunError> {
        if self.cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        let token = client.cancel_token();
        tokio::pin!(fut);
        tokio::select! {
            r = &mut fut => r.map_err(|e| self.error(e)),
            _ = self.cancel.cancelled() => {
                self.target.cancel_query(&token).await;
                // Wait for the server to abort the statement so the session is clean.
                match tokio::time::timeout(Duration::from_secs(10), &mut fut).await {
                    Ok(Ok(_)) | Ok(Err(_)) => Err(RunError::Cancelled),
                    Err(_) => Err(RunError::Failed("the server did not acknowledge the cancel within 10 s".into())),
                }
            }
        }
    }

    /// Check for cancellation between steps.
    pub(crate) fn check(&self) -> Result<(), RunError> {
        if self.cancel.is_cancelled() {
            Err(RunError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Create the lab schema if missing (and mark it), on a given session.
    pub async fn ensure_schema(&self, client: &Client) -> Result<(), RunError> {
        let exists = client
            .query_opt(
                "SELECT 1 FROM pg_namespace WHERE nspname = $1",
                &[&self.opts.schema],
            )
            .await
            .map_err(|e| self.error(e))?
            .is_some();
        if !exists {
            let r = client
                .batch_execute(&format!(
                    "CREATE SCHEMA IF NOT EXISTS {s}; COMMENT ON SCHEMA {s} IS {c}",
                    s = ident(&self.opts.schema),
                    c = literal(&format!(
                        "{MARK}schema created by pglab; pglab clean removes its marked tables"
                    ))
                ))
                .await;
            // Two runs starting at once on a fresh server race on the catalog: the loser's
            // unique violation (23505) means the schema is there, which is all we need.
            match r {
                Err(e) if sqlstate(&e) != Some("23505") => return Err(self.error(e)),
                Err(_) => {}
                Ok(()) => self
                    .made_schema
                    .store(true, std::sync::atomic::Ordering::SeqCst),
            }
        }
        Ok(())
    }

    /// Whether pglab started the server the run is on (its sandbox, where it may write
    /// freely and keep datasets for reuse).
    pub(crate) fn on_pglab_server(&self) -> bool {
        self.target.is_sandbox()
    }

    /// On a server pglab did not start, the lab schema this run created goes at the end once
    /// it is empty (the run's tables dropped): Some(sentence) when it went, Err when it could
    /// not.
    pub(crate) async fn drop_made_schema(&self) -> Result<Option<String>, String> {
        if self.on_pglab_server() || !self.made_schema.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(None);
        }
        let client = self.target.connect().await.map_err(|e| e.to_string())?;
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {}",
                ident(&self.opts.schema)
            ))
            .await
            .map_err(|e| describe_query_error(&e))?;
        Ok(Some(format!(
            "dropped schema {}, which this run created",
            self.opts.schema
        )))
    }

    /// Mark a table as this run's (dropped by cleanup and by `pglab clean`).
    pub(crate) async fn mark_run_table(
        &self,
        client: &Client,
        table: &str,
        what: &str,
    ) -> Result<(), RunError> {
        let c = format!("{MARK}run={} {what}", self.run_id);
        client
            .batch_execute(&format!(
                "COMMENT ON TABLE {} IS {}",
                self.table(table),
                literal(&c)
            ))
            .await
            .map_err(|e| self.error(e))
    }

    /// Run `create` (a `CREATE TABLE` of `table`) and mark the table as this run's in one
    /// message, so one implicit transaction: a pglab killed in between leaves neither, never an
    /// unmarked table no sweep would find.
    pub(crate) async fn create_marked(
        &self,
        client: &Client,
        table: &str,
        create: &str,
        what: &str,
    ) -> Result<(), RunError> {
        let c = format!("{MARK}run={} {what}", self.run_id);
        client
            .batch_execute(&format!(
                "{create}; COMMENT ON TABLE {} IS {}",
                self.table(table),
                literal(&c)
            ))
            .await
            .map_err(|e| self.error(e))
    }

    /// Drop every table in the lab schema marked with this run's id, on a fresh session
    /// (the experiment's own may be gone). Returns the tables dropped.
    pub(crate) async fn drop_run_tables(&self) -> Result<Vec<String>, String> {
        let client = self.target.connect().await.map_err(|e| e.to_string())?;
        let pattern = format!("{MARK}run={} %", self.run_id);
        drop_marked(&client, &self.opts.schema, &pattern).await
    }
}
