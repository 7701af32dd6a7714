//! `pglab sandbox import --from CONNINFO --table SCHEMA.NAME …`: the DBA's own tables into
//! the sandbox. The import is the engine's session ([`crate::import::session`]), as in the
//! TUI; this shows it: progress on stderr (one live line on a terminal), what was imported on
//! stdout; Ctrl-C cancels and leaves the sandbox as it was.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::stderr_line::StderrLine;
use crate::cli::ImportArgs;
use crate::import::session::{self, Finish, Refused, Request, SourceError};
use crate::import::{ImportEvent, ImportReport, ImportSpec, Sample, TableName};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use crate::server::{self, Target, TargetOptions};
use crate::session::{Ctx, EXIT_CANCELLED, EXIT_FAILED, EXIT_USAGE, user_error};

/// What `sandbox import` refuses before reading anything, as the sentence to print.
fn refuse_early(ctx: &Ctx, opts: &TargetOptions) -> Option<&'static str> {
    if ctx.global.observe {
        return Some(
            "look-only (--observe): an import writes to the sandbox, so it does not run; drop --observe to import",
        );
    }
    if ctx.global.db.is_some() {
        return Some(
            "sandbox import always fills pglab's sandbox: name the server to read from with --from, not --db",
        );
    }
    if opts.citus_workers.is_some() {
        return Some(
            "sandbox import fills a single-server sandbox: drop --citus-workers (or set [sandbox] citus_workers = 0)",
        );
    }
    None
}

/// The spec from the flags; a bad one is a sentence and exit 2.
fn spec_of(a: &ImportArgs) -> Result<ImportSpec> {
    let mut tables = Vec::new();
    for t in &a.tables {
        tables.push(
            TableName::parse(t).map_err(|e| user_error(EXIT_USAGE, format!("--table: {e}")))?,
        );
    }
    let sample = Sample::parse(a.sample.as_deref(), a.rows.as_deref())
        .map_err(|e| user_error(EXIT_USAGE, e))?;
    Ok(ImportSpec {
        tables,
        sample,
        seed: a.seed,
        indexes: a.indexes == "on",
    })
}

/// A server of the DBA's named by `flag` (`--from`, `--db`) as a target, connected once
/// (asking for a password on a terminal); its sessions say `application` unless the
/// conninfo names one.
pub(super) async fn open_source(flag: &str, from: &str, application: &str) -> Result<Arc<Target>> {
    let ask: &server::connect::AskPassword = &server::connect::ask_password_on_tty;
    let interactive = std::io::stdin().is_terminal();
    match session::open_source(from, application, interactive.then_some(ask)).await {
        Ok((source, _)) => Ok(source),
        Err(SourceError::Conninfo(e)) => Err(user_error(EXIT_USAGE, format!("{flag}: {e}"))),
        Err(SourceError::Connect(e)) => Err(user_error(EXIT_FAILED, format!("the source: {e}"))),
    }
}

pub async fn run(ctx: &Ctx, a: ImportArgs) -> Result<i32> {
    let mut opts = ctx.target_options();
    if let Some(why) = refuse_early(ctx, &opts) {
        return Err(user_error(EXIT_USAGE, why));
    }
    let spec = spec_of(&a)?;
    let source = open_source("--from", &a.from, session::APPLICATION).await?;
    opts.force_sandbox = true;
    opts.db = None;
    let (opened, client) = server::open(&opts, &ctx.paths, None)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    drop(client);
    let req = Request {
        source,
        sandbox: opened.target.clone(),
        sandbox_dir: opened.sandbox.as_ref().map(|s| s.sandbox.root.clone()),
        spec,
    };
    let code = follow(req).await;
    opened.close().await;
    code
}

/// Run the import, printing its events as they come and its end; Ctrl-C cancels.
async fn follow(req: Request) -> Result<i32> {
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let import = session::run(req, tx, &cancel);
    tokio::pin!(import);
    let signal = crate::session::shutdown_signal();
    tokio::pin!(signal);
    let mut live = Live::new();
    let mut cancelled = false;
    let end = loop {
        tokio::select! {
            _ = &mut signal, if !cancelled => {
                cancelled = true;
                live.line("cancelling: the sandbox's transaction is rolled back…");
                cancel.cancel();
            }
            Some(ev) = rx.recv() => live.show(ev),
            end = &mut import => break end,
        }
    };
    // The session has ended: what it sent before its end comes first.
    while let Ok(ev) = rx.try_recv() {
        live.show(ev);
    }
    say_end(end, &mut live)
}

/// The import's end: what was imported on stdout, or the sentence and its exit code.
fn say_end(end: std::result::Result<Finish, Refused>, live: &mut Live) -> Result<i32> {
    match end {
        Ok(Finish::Done(r)) => {
            live.clear();
            print!("{}", summary(&r));
            Ok(0)
        }
        Ok(Finish::Cancelled) => {
            live.clear();
            eprintln!("pglab: import cancelled; the sandbox is as it was");
            Ok(EXIT_CANCELLED)
        }
        Err(Refused(error)) => {
            live.clear();
            Err(user_error(EXIT_USAGE, error))
        }
        Ok(Finish::Failed(error)) => {
            live.clear();
            Err(user_error(
                EXIT_FAILED,
                format!("import failed: {error}; the sandbox is as it was"),
            ))
        }
        Ok(Finish::Lost) => Err(user_error(
            EXIT_FAILED,
            "the import stopped without saying why (see the log)",
        )),
    }
}

/// What was imported, one line per table.
pub fn summary(r: &ImportReport) -> String {
    let mut out = String::new();
    for rec in &r.records {
        let rate = if rec.seconds > 0.0 {
            format!(
                ", {}/s",
                format_bytes((rec.stream_bytes as f64 / rec.seconds) as u64)
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "imported {}: {} rows ({}), table {} + indexes {}, copied in {}{rate}\n",
            rec.table,
            format_count(rec.rows as f64),
            rec.sample_text(),
            format_bytes(rec.table_bytes.max(0) as u64),
            format_bytes(rec.index_bytes.max(0) as u64),
            format_seconds(rec.seconds)
        ));
    }
    if let Some(first) = r.records.first() {
        out.push_str(&format!(
            "from {} (PostgreSQL {}), snapshot {}; {} in all\n",
            first.source.target,
            first.source.version,
            first.snapshot_at.format("%Y-%m-%d %H:%M:%S UTC"),
            format_seconds(r.seconds)
        ));
    }
    out
}

/// Progress on stderr: the live line on a terminal, a line every few seconds otherwise.
struct Live {
    out: StderrLine,
    last: Option<Instant>,
}

impl Live {
    fn new() -> Live {
        Live {
            out: StderrLine::new(),
            last: None,
        }
    }

    /// One event of the import as it goes (its end is the session's answer, never an event).
    fn show(&mut self, ev: ImportEvent) {
        match ev {
            ImportEvent::Phase(p) => self.line(&p),
            ImportEvent::Note(n) => self.line(&format!("note: {n}")),
            ImportEvent::Progress(p) => self.progress(&p.line()),
            ImportEvent::Finished(_) | ImportEvent::Cancelled | ImportEvent::Failed { .. } => {}
        }
    }

    fn clear(&mut self) {
        self.out.clear();
    }

    fn line(&mut self, s: &str) {
        self.out.line(s);
    }

    fn progress(&mut self, s: &str) {
        if self.out.tty {
            self.out.draw(s);
        } else if self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(5))
        {
            self.last = Some(Instant::now());
            eprintln!("{s}");
        }
    }
}
