//! `pglab tune`: search settings for a workload within a time budget, headless. Progress on
//! stderr; at the end the script (`--out`, default `tune.sql`) and a Markdown report with the
//! search path as an SVG chart; the script is also printed on stdout. Ctrl-C stops the
//! search and keeps what it learnt for `--resume`.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use tokio_util::sync::CancellationToken;

use crate::cli::TuneArgs;
use crate::experiment::RunOptions;
use crate::measure::units::format_seconds;
use crate::outputs::OutputSet;
use crate::report::tune_files::TuneFiles;
use crate::server::snapshot;
use crate::session::{Ctx, EXIT_CANCELLED, EXIT_FAILED, EXIT_USAGE, user_error};
use crate::tune::TuneEvent;
use crate::tune::candidates::GivenHardware;
use crate::tune::objective::Objective;
use crate::tune::output;
use crate::tune::session::{self, Finish, Ready, Refused, Request, Start};
use crate::tune::setup;
use crate::tune::state::{self, TuneState};

fn usage(msg: impl Into<String>) -> color_eyre::eyre::Report {
    user_error(EXIT_USAGE, msg)
}

/// A size flag (`--ram 64GB`) in bytes; the sentence names the flag and an example.
fn size_flag(
    flag: &str,
    v: Option<&str>,
    example: &str,
) -> std::result::Result<Option<u64>, String> {
    v.map(|v| {
        crate::measure::units::parse_size(v)
            .map(|s| s.bytes)
            .map_err(|e| format!("{flag} {v}: {e} (write it as {example})"))
    })
    .transpose()
}

/// `--ram`, `--cores`, `--storage` as the prior takes them; one sentence for a bad value.
fn given_hardware(args: &TuneArgs) -> std::result::Result<GivenHardware, String> {
    let ram = size_flag("--ram", args.ram.as_deref(), "64GB")?;
    if args.cores == Some(0) {
        return Err("--cores 0: give the server's cores, 1 or more".into());
    }
    let ssd = match args
        .storage
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None => None,
        Some("ssd") => Some(true),
        Some("hdd") => Some(false),
        Some(other) => return Err(format!("--storage {other}: write ssd or hdd")),
    };
    Ok(GivenHardware {
        ram,
        cores: args.cores,
        ssd,
        local: false,
    })
}

pub async fn run(ctx: &Ctx, args: TuneArgs) -> Result<i32> {
    // The budget's clock: everything from here on counts.
    let clock = Instant::now();
    if ctx.global.observe {
        return Err(usage(
            "look-only (--observe): a tune runs the workload and changes settings, so none runs; drop --observe to tune",
        ));
    }
    let budget = args
        .budget
        .as_deref()
        .map(setup::budget)
        .transpose()
        .map_err(usage)?;
    let max_memory =
        size_flag("--max-memory", args.max_memory.as_deref(), "48GB").map_err(usage)?;
    let max_temp = super::run::parse_max_temp(args.max_temp.as_deref())?;
    let state_file = state::path(&ctx.paths.data_dir);
    // Checked before anything is opened: a fresh tune needs a workload and a budget.
    let start = start(ctx, &args, &state_file, budget)?;
    let objective = Objective::of(match &start {
        Start::Resume(st) => &st.spec,
        Start::Fresh(f) => &f.spec,
    });
    // Where the script and the report go, settled before the budget is spent on the tune.
    let outputs = outputs(&args)?;

    let (opened, client) = ctx.open_target().await?;
    let server = match snapshot::read(&client, &opened.target).await {
        Ok(s) => s,
        Err(e) => {
            opened.close().await;
            return Err(user_error(EXIT_FAILED, e.to_string()));
        }
    };
    drop(client);
    let req = Request {
        target: opened.target.clone(),
        start,
        run: RunOptions {
            schema: ctx.global.schema.clone(),
            recorder: Some(crate::history::recorder(ctx.paths.history_file())),
            local_data_dir: Ctx::local_data_dir(&opened, Some(&server)),
            probe_dir: ctx.probe_site(&opened, Some(&server)).on_server_device(),
            sandbox: opened.sandbox.as_ref().map(|s| s.sandbox.clone()),
            max_temp,
            ..RunOptions::default()
        },
        state_file,
        budget,
        max_memory,
        clock,
        outputs: Box::new(TuneFiles {
            script: outputs.files[0].clone(),
            report: outputs.files[1].clone(),
        }),
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(print_events(rx, objective));
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let signal = tokio::spawn(async move {
        crate::session::shutdown_signal().await;
        c.cancel();
    });
    let finish = session::run(req, announce, tx, &cancel).await;
    signal.abort();
    let _ = printer.await;
    opened.close().await;
    say_finish(finish)
}

/// The saved tune (`--resume`) or a fresh one from the flags; one sentence for what is
/// missing or does not fit.
fn start(
    ctx: &Ctx,
    args: &TuneArgs,
    state_file: &std::path::Path,
    budget: Option<Duration>,
) -> Result<Start> {
    if let Some(st) = saved_state(args, state_file)? {
        return Ok(Start::Resume(Box::new(st)));
    }
    let Some(w) = &args.workload else {
        return Err(usage(
            "name the workload: --workload ingest (an experiment, a preset, or a preset file); see pglab tune --help",
        ));
    };
    let Some(budget) = budget else {
        return Err(usage(
            "give the time budget: --budget 15min (it counts everything: data, restarts, trials, the confirmation)",
        ));
    };
    let mut overrides = args.params.clone();
    if !args.allow_function.is_empty() {
        overrides.push(format!("allow-function={}", args.allow_function.join(",")));
    }
    let (spec, note) = setup::workload(&ctx.paths, w, &overrides).map_err(usage)?;
    let settings = setup::settings(spec.kind(), &args.settings, args.allow_durability_tradeoff)
        .map_err(usage)?;
    Ok(Start::Fresh(Box::new(setup::Fresh {
        workload: w.clone(),
        spec,
        note,
        settings,
        budget,
        hardware: given_hardware(args).map_err(usage)?,
    })))
}

/// The end of the tune, said: the script on stdout and what was written; or how to go on.
fn say_finish(finish: std::result::Result<Finish, Refused>) -> Result<i32> {
    match finish {
        Err(Refused::Usage(m)) => Err(usage(m)),
        Err(Refused::Failed(m)) => Err(user_error(EXIT_FAILED, m)),
        Ok(Finish::Done { state, said }) => {
            let text = output::script(&state, &state.measured_on);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            eprintln!("pglab: {said}");
            Ok(0)
        }
        Ok(Finish::Cancelled { spent_s }) => {
            eprintln!(
                "pglab: tune cancelled ({} of the budget spent); what it learnt is saved: go on with pglab tune --resume",
                format_seconds(spent_s)
            );
            Ok(EXIT_CANCELLED)
        }
        Ok(Finish::Failed(e)) => {
            eprintln!(
                "pglab: tune failed: {e}; what it learnt is saved: go on with pglab tune --resume"
            );
            Ok(EXIT_FAILED)
        }
    }
}

/// The saved state `--resume` goes on with (None without `--resume`); one sentence when there
/// is none or the flags ask for another workload.
fn saved_state(args: &TuneArgs, state_file: &std::path::Path) -> Result<Option<TuneState>> {
    if !args.resume {
        return Ok(None);
    }
    let st = state::load(state_file)
        .map_err(usage)?
        .ok_or_else(|| usage("--resume: there is no saved tune to go on with; start one with --workload and --budget"))?;
    if !args.params.is_empty() {
        return Err(usage(
            "--resume goes on with the saved workload and its parameters: drop --param, or start afresh without --resume",
        ));
    }
    if let Some(w) = &args.workload
        && w != &st.workload
    {
        return Err(usage(format!(
            "--resume: the saved tune is of workload '{}', not '{w}'; drop --workload, or start afresh without --resume",
            st.workload
        )));
    }
    Ok(Some(st))
}

/// What the tune is about to do, on stderr: where, its notes, the settings and their values.
fn announce(r: Ready) {
    if !r.on_sandbox {
        eprintln!(
            "pglab: note: not pglab's sandbox: the tune uses session settings (SET) only and never ALTER SYSTEM; reload and restart settings need the sandbox"
        );
    }
    for n in &r.notes {
        eprintln!("pglab: note: {n}");
    }
    eprintln!("{}", r.line);
}

/// The script's, the report's and the chart's paths: the ones asked for (or the defaults),
/// never replacing a file without --force (see `outputs`).
fn outputs(args: &TuneArgs) -> Result<OutputSet> {
    let sql = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("tune.sql"));
    let set = crate::outputs::tune(sql, args.report.clone());
    let chosen = match (&args.out, &args.report) {
        (Some(_), _) => Some("--out"),
        (None, Some(_)) => Some("--report"),
        (None, None) => None,
    };
    let (set, said) = crate::outputs::resolve(&set, chosen, args.force).map_err(usage)?;
    if let Some(s) = said {
        eprintln!("pglab: {s}");
    }
    Ok(set)
}

/// Progress on stderr: a line per round, drop, decision and confirmation round; the running
/// trial's phase as one rewritten line on a terminal.
async fn print_events(mut rx: tokio::sync::mpsc::UnboundedReceiver<TuneEvent>, obj: Objective) {
    let mut out = super::stderr_line::StderrLine::new();
    let mut budget = String::new();
    while let Some(ev) = rx.recv().await {
        match ev {
            TuneEvent::Note(n) => out.line(&format!("  note: {n}")),
            TuneEvent::Progress(p) => {
                if out.tty && out.due() {
                    out.draw(&format!("{p}{budget}"));
                }
            }
            TuneEvent::Round {
                setting,
                round,
                order,
            } => out.line(&format!("{setting}: round {round}: {}", order.join(", "))),
            TuneEvent::Race(r) => {
                let cells: Vec<String> = r
                    .candidates
                    .iter()
                    .map(|c| {
                        let m = crate::measure::stats::median(&c.trials)
                            .map(|m| obj.format(m))
                            .unwrap_or_else(|| "-".into());
                        let gone = if c.dropped.is_some() {
                            " (dropped)"
                        } else {
                            ""
                        };
                        format!("{}={m}{gone}", c.value)
                    })
                    .collect();
                out.line(&format!("  medians: {}", cells.join("  ")));
            }
            TuneEvent::Screen(s) if s.done => {
                out.line(&format!(
                    "screening: {}",
                    crate::tune::screen_report::method(&s)
                ));
                for e in &s.effects {
                    out.line(&format!("  {}", crate::tune::screen_report::effect_line(e)));
                }
            }
            TuneEvent::Screen(_) => {}
            TuneEvent::Dropped { sentence, .. } => out.line(&format!("  {sentence}")),
            TuneEvent::Decided(d) => out.line(&format!(
                "{}: {} ({}; {} rounds)",
                d.setting,
                if d.value == d.start {
                    format!("stays {}", d.start)
                } else {
                    format!("{} -> {}", d.start, d.value)
                },
                d.why.as_str(),
                d.rounds
            )),
            TuneEvent::Confirm(c) => {
                let v = c
                    .comparison
                    .as_ref()
                    .map(|cmp| format!(": tuned set {}", output::comparison_text(cmp)))
                    .unwrap_or_default();
                out.line(&format!("confirmation: {} rounds{v}", c.rounds));
            }
            TuneEvent::Budget { spent_s, total_s } => {
                budget = format!(
                    " · budget {} of {}",
                    format_seconds(spent_s),
                    format_seconds(total_s)
                );
            }
        }
    }
    out.clear();
}
