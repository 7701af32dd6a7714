//! `pglab sandbox import --from CONNINFO --table SCHEMA.NAME …`: the DBA's own tables into
//! the sandbox. Progress on stderr (one live line on a terminal), what was imported on
//! stdout; Ctrl-C cancels and leaves the sandbox as it was.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use super::stderr_line::StderrLine;
use crate::cli::ImportArgs;
use crate::import::{
    self, ImportEvent, ImportOptions, ImportReport, ImportSpec, Sample, TableName,
};
use crate::measure::units::{format_bytes, format_count, format_seconds};
use crate::server::{self, Target, TargetOptions, conninfo};
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
    let mut params = conninfo::resolve(Some(from), &conninfo::ProcessEnv)
        .map_err(|e| user_error(EXIT_USAGE, format!("{flag}: {e}")))?;
    if params.application_name == "pglab" {
        params.application_name = application.into();
    }
    let source = Arc::new(
        Target::new(params, false).map_err(|e| user_error(EXIT_USAGE, format!("{flag}: {e}")))?,
    );
    let ask: &server::connect::AskPassword = &server::connect::ask_password_on_tty;
    let interactive = std::io::stdin().is_terminal();
    source
        .connect_first(interactive.then_some(ask))
        .await
        .map_err(|e| user_error(EXIT_FAILED, format!("the source: {e}")))?;
    Ok(source)
}

pub async fn run(ctx: &Ctx, a: ImportArgs) -> Result<i32> {
    let mut opts = ctx.target_options();
    if let Some(why) = refuse_early(ctx, &opts) {
        return Err(user_error(EXIT_USAGE, why));
    }
    let spec = spec_of(&a)?;
    let source = open_source("--from", &a.from, "pglab import").await?;
    opts.force_sandbox = true;
    opts.db = None;
    let (opened, client) = server::open(&opts, &ctx.paths, None)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    drop(client);
    let root = opened.sandbox.as_ref().map(|s| s.sandbox.root.clone());
    let import_opts = ImportOptions {
        free_bytes: root.as_deref().and_then(crate::host::free_bytes),
        cache_file: root.map(|r| r.join("imports.json")),
    };
    let mut handle = import::spawn(source, opened.target.clone(), spec, import_opts);
    let code = follow(&mut handle).await;
    opened.close().await;
    code
}

/// Print the events until the end; Ctrl-C cancels.
async fn follow(handle: &mut import::ImportHandle) -> Result<i32> {
    let mut live = Live::new();
    let signal = crate::session::shutdown_signal();
    tokio::pin!(signal);
    let mut cancelled = false;
    loop {
        tokio::select! {
            _ = &mut signal, if !cancelled => {
                cancelled = true;
                live.line("cancelling: the sandbox's transaction is rolled back…");
                handle.cancel.cancel();
            }
            ev = handle.events.recv() => {
                let Some(ev) = ev else {
                    return Err(user_error(EXIT_FAILED, "the import stopped without saying why (see the log)"));
                };
                match ev {
                    ImportEvent::Phase(p) => live.line(&p),
                    ImportEvent::Note(n) => live.line(&format!("note: {n}")),
                    ImportEvent::Progress(p) => live.progress(&p.line()),
                    ImportEvent::Finished(r) => {
                        live.clear();
                        print!("{}", summary(&r));
                        return Ok(0);
                    }
                    ImportEvent::Cancelled => {
                        live.clear();
                        eprintln!("pglab: import cancelled; the sandbox is as it was");
                        return Ok(EXIT_CANCELLED);
                    }
                    ImportEvent::Failed { error, refused } => {
                        live.clear();
                        return Err(user_error(
                            if refused { EXIT_USAGE } else { EXIT_FAILED },
                            if refused { error } else { format!("import failed: {error}; the sandbox is as it was") },
                        ));
                    }
                }
            }
        }
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
