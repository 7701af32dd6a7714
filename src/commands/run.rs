//! `pglab run`: an experiment headless. Progress goes to stderr (one live line on a terminal,
//! plain lines otherwise), results to stdout in the chosen format. Ctrl-C cancels the run on
//! the server and still prints and records what finished.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use crate::cli::{OutputFormat, RunArgs};
use crate::experiment::{
    self, ExperimentKind, ExperimentSpec, ParamText, RunEvent, RunOptions,
    lab::{gate, preflight},
};
use crate::measure::units::{format_seconds, parse_duration};
use crate::server::snapshot;
use crate::session::{Ctx, EXIT_CANCELLED, EXIT_FAILED, EXIT_USAGE, user_error};

/// The experiment and parameters a `run` asks for: preset values overlaid by flags.
pub fn resolve_spec(ctx: &Ctx, args: &RunArgs) -> Result<(ExperimentSpec, Option<String>)> {
    let (kind, mut params, preset_name) = match &args.preset {
        Some(name) => {
            let preset = crate::preset::load(&ctx.paths, name)
                .map_err(|e| user_error(EXIT_USAGE, e.to_string()))?;
            if let Some(k) = args.experiment
                && k != preset.experiment
            {
                return Err(user_error(
                    EXIT_USAGE,
                    format!(
                        "preset '{name}' is a {} preset, not {k}: drop the experiment name or pick another preset",
                        preset.experiment
                    ),
                ));
            }
            (
                preset.experiment,
                preset.params.clone(),
                Some(preset.name.clone()),
            )
        }
        None => match args.experiment {
            Some(k) => (k, ParamText::new(), None),
            None => {
                return Err(user_error(
                    EXIT_USAGE,
                    "name an experiment (index-build, ingest, growth, query) or a --preset; see pglab run --help",
                ));
            }
        },
    };
    params.extend(args.params.iter().map(|(k, v)| (k.clone(), v.clone())));
    let spec = kind.parse_spec(&params).map_err(|errors| {
        // One problem is one sentence; several are listed under one line.
        let msg = match errors.as_slice() {
            [(k, e)] => format!("bad parameter for {kind}: --{k}: {e}"),
            _ => {
                let lines: Vec<String> = errors
                    .iter()
                    .map(|(k, e)| format!("  --{k}: {e}"))
                    .collect();
                format!("bad parameters for {kind}:\n{}", lines.join("\n"))
            }
        };
        user_error(EXIT_USAGE, msg)
    })?;
    Ok((spec, preset_name))
}

fn ask_yes(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

pub async fn run(ctx: &Ctx, args: RunArgs) -> Result<i32> {
    let (spec, preset) = resolve_spec(ctx, &args)?;
    if ctx.global.observe {
        return Err(user_error(
            EXIT_USAGE,
            "look-only (--observe): experiments write to the server, so none runs; drop --observe to run one",
        ));
    }
    let flags = RunFlags::parse(&args)?;

    let (opened, client) = ctx.open_target().await?;
    let server = snapshot::read(&client, &opened.target)
        .await
        .map_err(|e| user_error(EXIT_FAILED, e.to_string()))?;
    let opened = through_gate(ctx, opened, &client, &server, &spec).await?;
    drop(client);
    let local = Ctx::local_data_dir(&opened, Some(&server));
    let probe_dir = ctx.probe_site(&opened, Some(&server)).on_server_device();
    let free = preflight::free_space(local.as_deref(), None);
    confirm_preflight(&spec, free, &server, args.yes)?;

    let opts = RunOptions {
        schema: ctx.global.schema.clone(),
        statement_timeout: flags.statement_timeout,
        lock_timeout: flags.lock_timeout,
        preset,
        recorder: (!args.no_history).then(|| crate::history::recorder(ctx.paths.history_file())),
        local_data_dir: local,
        probe_dir,
        poll_progress: !args.no_progress_poll,
        disk_budget: None,
        sandbox: opened.sandbox.as_ref().map(|s| s.sandbox.clone()),
        max_temp: flags.max_temp,
        tune: None,
    };
    let kind = spec.kind();
    let expected = announce_estimate(ctx, &spec, free);
    let live = experiment::lab::live_eta::LiveEta::of(spec.estimate().trials, &spec);
    // One run at a time per data directory (its sandbox, its datasets), held to the end: a
    // second waits, and says for whom.
    let (dir, what) = (ctx.paths.data_dir.clone(), format!("pglab run {kind}"));
    let locked = tokio::task::spawn_blocking(move || {
        crate::experiment::lab::data_dir_lock::acquire_waiting(&dir, &what, |e| {
            eprintln!("pglab: {}", e.waiting("Ctrl-C"))
        })
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r.map_err(|e| e.to_string()));
    let _lock = match locked {
        Ok(l) => l,
        Err(e) => {
            opened.close().await;
            return Err(user_error(EXIT_FAILED, e));
        }
    };
    let handle = experiment::spawn(opened.target.clone(), spec, opts);
    let printer = ProgressPrinter::new(kind, expected, live);
    let code = follow(handle, printer, flags.format).await;
    opened.close().await;
    Ok(code)
}

/// The one gate both front ends pass (what it refuses, the TUI refuses in the same words):
/// its notes on stderr and the target back, or its refusal as the error, the target closed.
async fn through_gate(
    ctx: &Ctx,
    opened: crate::server::Opened,
    client: &tokio_postgres::Client,
    server: &crate::server::ServerSnapshot,
    spec: &ExperimentSpec,
) -> Result<crate::server::Opened> {
    let sandbox = opened.sandbox.as_ref().map(|s| &s.sandbox);
    let said = gate::prepare(
        client,
        &opened.target,
        server,
        spec,
        sandbox,
        &ctx.global.schema,
    )
    .await;
    match said {
        Ok(prepared) => {
            for note in prepared.notes() {
                eprintln!("pglab: note: {note}");
            }
            Ok(opened)
        }
        Err(refusal) => {
            opened.close().await;
            let code = if refusal.is_usage() {
                EXIT_USAGE
            } else {
                EXIT_FAILED
            };
            Err(user_error(code, refusal.to_string()))
        }
    }
}

/// The flags of a `run` that are read before anything opens, so a typo costs no connection.
struct RunFlags {
    statement_timeout: Option<Duration>,
    lock_timeout: Duration,
    format: OutputFormat,
    max_temp: Option<u64>,
}

impl RunFlags {
    /// The timeouts (lock_timeout 5 s unless given), the output format (a table unless given)
    /// and `--max-temp`, or the sentence naming the flag that does not parse.
    fn parse(args: &RunArgs) -> Result<RunFlags> {
        let dur = |s: &Option<String>, what: &str| -> Result<Option<Duration>> {
            s.as_deref()
                .map(|v| {
                    parse_duration(v).map_err(|e| user_error(EXIT_USAGE, format!("--{what}: {e}")))
                })
                .transpose()
        };
        let statement_timeout = dur(&args.statement_timeout, "statement-timeout")?;
        let lock_timeout =
            dur(&args.lock_timeout, "lock-timeout")?.unwrap_or(Duration::from_secs(5));
        let format = args.format.unwrap_or(OutputFormat::Table);
        let max_temp = parse_max_temp(args.max_temp.as_deref())?;
        Ok(RunFlags {
            statement_timeout,
            lock_timeout,
            format,
            max_temp,
        })
    }
}

/// The disk and size checks: notes go to stderr, a refusal is an error, and a run big enough
/// to ask about starts only on `--yes` or a "y" on the terminal.
fn confirm_preflight(
    spec: &ExperimentSpec,
    free: Option<u64>,
    server: &crate::server::ServerSnapshot,
    yes: bool,
) -> Result<()> {
    let pf = preflight::preflight(spec, free, Some(server), preflight::CONFIRM_ABOVE);
    for w in &pf.warnings {
        eprintln!("pglab: note: {w}");
    }
    if let Some(why) = pf.refuse {
        return Err(user_error(EXIT_USAGE, why));
    }
    if let Some(q) = pf.confirm
        && !yes
        && !ask_yes(&q)
    {
        return Err(user_error(
            EXIT_USAGE,
            format!("{q} Not started (pass --yes to skip this question)"),
        ));
    }
    Ok(())
}

/// What the run will do and how long it should take, said on stderr before it starts; the
/// history's expectation is returned for the progress line's ETA.
fn announce_estimate(
    ctx: &Ctx,
    spec: &ExperimentSpec,
    free: Option<u64>,
) -> Option<experiment::lab::eta::Eta> {
    let kind = spec.kind();
    let expected = {
        let (runs, _) = crate::history::read(&ctx.paths.history_file());
        experiment::lab::eta::estimate(spec, &runs, Some(&crate::host::hostname()))
    };
    let mut plan = spec.estimate_with_free(free).items();
    plan.push(match &expected {
        Some(e) => format!("time {} (by {})", e.range_text(), e.basis),
        None => format!("time: no estimate yet (no past {kind} run on this host to go by)"),
    });
    eprintln!("estimate: {}", plan.join(" · "));
    expected
}

/// Show the run's progress until it ends, print its report, and return the exit code; the
/// first Ctrl-C asks the server to stop the running statement.
async fn follow(
    mut handle: experiment::RunHandle,
    mut printer: ProgressPrinter,
    format: OutputFormat,
) -> i32 {
    let signal = crate::session::shutdown_signal();
    tokio::pin!(signal);
    let mut cancelled_at: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = &mut signal, if cancelled_at.is_none() => {
                cancelled_at = Some(Instant::now());
                printer.line("cancelling: asking the server to stop the running statement…");
                handle.cancel.cancel();
            }
            ev = handle.events.recv() => {
                let Some(ev) = ev else { break EXIT_FAILED };
                if let Some(code) = finish(ev, &mut printer, format, cancelled_at) {
                    break code;
                }
            }
        }
    }
}

/// An event of the run: the exit code when it ends the run (its report printed), else
/// `None` after showing it.
fn finish(
    ev: RunEvent,
    printer: &mut ProgressPrinter,
    format: OutputFormat,
    cancelled_at: Option<Instant>,
) -> Option<i32> {
    match ev {
        RunEvent::Finished(report) => {
            printer.clear();
            print_report(&report, format);
            Some(0)
        }
        RunEvent::Cancelled(report) => {
            printer.clear();
            // The time is the cancel's (Ctrl-C to stopped), not the run's: said so.
            let took = cancelled_at
                .map(|t| {
                    format!(
                        " (stopped {} after the interrupt)",
                        format_seconds(t.elapsed().as_secs_f64())
                    )
                })
                .unwrap_or_default();
            eprintln!(
                "pglab: run cancelled{took}; a trial cut short is not counted; the finished trials follow and are in the history"
            );
            print_report(&report, format);
            Some(EXIT_CANCELLED)
        }
        RunEvent::Failed { error, report } => {
            printer.clear();
            eprintln!("pglab: run failed: {error}");
            if !report_is_empty(&report) {
                print_report(&report, format);
            }
            Some(EXIT_FAILED)
        }
        other => {
            printer.event(&other);
            None
        }
    }
}

/// `--max-temp SIZE`: bytes, or the sentence.
pub fn parse_max_temp(v: Option<&str>) -> Result<Option<u64>> {
    v.map(|v| {
        crate::measure::units::parse_size(v)
            .map(|s| s.bytes)
            .map_err(|e| user_error(EXIT_USAGE, format!("--max-temp: {e}")))
    })
    .transpose()
}

fn report_is_empty(r: &experiment::RunReport) -> bool {
    r.body.facts().is_empty()
}

fn print_report(report: &experiment::RunReport, format: OutputFormat) {
    let text = crate::report::render(report, format.into());
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Progress on stderr: a single rewritten line on a terminal, a line per phase otherwise.
struct ProgressPrinter {
    out: super::stderr_line::StderrLine,
    kind: ExperimentKind,
    last_phase: String,
    started: Instant,
    /// How long the history expected the run to take.
    expected: Option<experiment::lab::eta::Eta>,
    /// What the run measured so far says is left.
    live: experiment::lab::live_eta::LiveEta,
}

impl ProgressPrinter {
    fn new(
        kind: ExperimentKind,
        expected: Option<experiment::lab::eta::Eta>,
        live: experiment::lab::live_eta::LiveEta,
    ) -> Self {
        ProgressPrinter {
            out: super::stderr_line::StderrLine::new(),
            kind,
            last_phase: String::new(),
            started: Instant::now(),
            expected,
            live,
        }
    }

    /// "run 3/40 · run eta 1m 10s": from what the run measured (see
    /// [`experiment::lab::live_eta`]), or before that says anything from what the history
    /// expected.
    fn run_eta(&self, index: usize, total: usize) -> String {
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = match self.live.remaining(Instant::now()) {
            Some(left) => Some(format_seconds(left)),
            None => self
                .expected
                .as_ref()
                .and_then(|e| e.remaining(elapsed))
                .map(|e| e.range_text()),
        };
        match eta {
            Some(e) => format!(" · run {index}/{total} · run eta {e}"),
            None => format!(" · run {index}/{total}"),
        }
    }

    fn clear(&mut self) {
        self.out.clear();
    }

    fn line(&mut self, s: &str) {
        self.out.line(s);
    }

    fn event(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::Started {
                description,
                trials,
                ..
            } => {
                self.live.set_total(*trials);
                self.line(&format!("{}: {description}", self.kind))
            }
            RunEvent::Phase { trial, phase } => {
                self.live.trial(trial.as_ref(), None, Instant::now());
                let t = trial
                    .as_ref()
                    .map(|t| format!("[{}/{}] {} · ", t.index, t.total, t.label))
                    .unwrap_or_default();
                self.last_phase = phase.clone();
                if !self.out.tty {
                    self.line(&format!("{t}{phase}"));
                } else {
                    // A run of short trials (a query's executions) has phases and no
                    // progress: its line still moves.
                    let run = trial
                        .as_ref()
                        .map(|t| self.run_eta(t.index, t.total))
                        .unwrap_or_default();
                    self.out.draw(&format!("{t}{phase}{run}"));
                }
            }
            RunEvent::Progress(p) => {
                self.live
                    .trial(p.trial.as_ref(), p.fraction, Instant::now());
                if !self.out.due() {
                    return;
                }
                let t = p
                    .trial
                    .as_ref()
                    .map(|t| format!("[{}/{}] ", t.index, t.total))
                    .unwrap_or_default();
                // The percentage is the trial's (or the step's), said as such; the run's
                // share and ETA follow.
                let what = if p.trial.is_some() { "trial" } else { "step" };
                let pct = p
                    .fraction
                    .map(|f| format!(" · {what} {:.0}%", f * 100.0))
                    .unwrap_or_else(|| " …".into());
                let run = p
                    .trial
                    .as_ref()
                    .map(|t| self.run_eta(t.index, t.total))
                    .unwrap_or_default();
                let rate = p
                    .rate
                    .map(|r| {
                        format!(
                            " · {} {}",
                            crate::measure::units::format_count(r),
                            p.rate_unit
                        )
                    })
                    .unwrap_or_default();
                let s = format!(
                    "{t}{}{pct} · {}{rate}{run}",
                    p.phase,
                    format_seconds(p.elapsed_s)
                );
                self.out.draw(&s);
            }
            RunEvent::Sample(s) => {
                self.live.done();
                self.line(&format!("  {}", s.cells.join("  ")))
            }
            RunEvent::Note(n) => self.line(&format!("  note: {n}")),
            _ => {}
        }
    }
}
