//! The command line. `pglab` alone opens the TUI; subcommands run headless.
//!
//! `pglab run <experiment>` takes one flag per experiment parameter, generated from the same
//! field definitions the TUI editor and presets use, so the three can never disagree
//! (`cli/run_args.rs`).

mod capture;
mod run_args;
mod verify;
pub use capture::CaptureArgs;
pub use run_args::RunArgs;
pub use verify::{VerifyArgs, VerifyFormat};

use std::path::PathBuf;

use clap::{ArgMatches, Args, Command, FromArgMatches, Parser, Subcommand, ValueEnum};

pub use crate::cli_sandbox::{ImportArgs, RelayArgs, SandboxAction, StartArgs};
use crate::experiment::lab::field::ParamText;
use crate::experiment::lab::spec::ExperimentKind;
use run_args::{experiment_named, field_values, fields_command, preset_arg};

pub mod generate;

/// `pglab --version`: the package version and the commit it was built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PGLAB_GIT_COMMIT"),
    ")"
);

const EXAMPLES: &str = "\
Examples:
  pglab                                   open the lab on its own sandbox server
  pglab --db postgresql://me@db1/sales    open the lab on a server of yours
  pglab probe --disk                      print the server and host, with disk probes
  pglab run index-build --rows 1M --order sorted,random --mwm 1MB..1GB*4
  pglab run --preset cybertec-quick       run a shipped preset headless
  pglab run ingest --method insert,copy --batch sqrt2 --format json
  pglab sandbox status                    where the sandbox lives, whether it runs
  pglab sandbox import --from postgresql://me@db1/sales --table public.orders --sample 10
";

#[derive(Debug, Parser)]
#[command(
    name = "pglab",
    version = VERSION,
    about = "A terminal tuning lab for PostgreSQL: real experiments on a real server",
    long_about = "pglab runs index builds, ingest tests and growth tests on a real PostgreSQL server \
                  (its own sandbox by default), live in a terminal UI or headless for scripts.",
    after_help = EXAMPLES
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<CommandKind>,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Target server: a URL (postgresql://user@host:5432/db?sslmode=require) or key=value
    /// conninfo. Without it (and without PGHOST/PGPORT/PGDATABASE) pglab uses its sandbox.
    #[arg(long, global = true, value_name = "CONNINFO")]
    pub db: Option<String>,
    /// Use the sandbox even when PG* variables name a server.
    #[arg(long, global = true, conflicts_with = "db")]
    pub sandbox: bool,
    /// Directory holding initdb, pg_ctl and postgres for the sandbox.
    #[arg(long, global = true, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
    /// Leave the sandbox server running when pglab exits.
    #[arg(long, global = true)]
    pub keep_sandbox: bool,
    /// Fixed 127.0.0.1 port for the sandbox (default: a free one).
    #[arg(long, global = true, value_name = "PORT")]
    pub sandbox_port: Option<u16>,
    /// Make the sandbox a Citus cluster: a coordinator and N workers (1-8; 0 = one server),
    /// each its own postmaster on 127.0.0.1. Default: `[sandbox] citus_workers` in the
    /// config file, else one server.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=8))]
    pub citus_workers: Option<u32>,
    /// Where pglab keeps history, the sandbox and logs [env: PGLAB_DATA_DIR].
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The lab schema: everything pglab creates lives there.
    #[arg(long, global = true, default_value = "pglab", value_name = "NAME")]
    pub schema: String,
    /// Look-only: nothing is written (no experiments, no disk probes), e.g. on production.
    #[arg(long, global = true)]
    pub observe: bool,
    /// Where the disk probes write (`probe --disk`, the TUI's probe key): a directory of
    /// yours. Default: the sandbox's directory, or pglab's data dir — never a server's data
    /// directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub probe_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CommandKind {
    /// Print the target server and the host (and run the disk probes with --disk).
    Probe(ProbeArgs),
    /// Run an experiment headless: progress on stderr, results on stdout.
    Run(RunArgs),
    /// Manage pglab's own PostgreSQL cluster.
    Sandbox {
        #[command(subcommand)]
        action: SandboxAction,
    },
    /// List, show, save and delete presets.
    Presets {
        #[command(subcommand)]
        action: PresetAction,
    },
    /// Past runs: list, show, export, compare.
    History {
        #[command(subcommand)]
        action: HistoryAction,
    },
    /// Write a Markdown report (and an SVG chart beside it) for a past run, or print it in
    /// another format (--format json|csv|table|md).
    Report(ReportArgs),
    /// List and drop leftovers of interrupted runs (only objects marked as pglab's).
    Clean(CleanArgs),
    /// Search settings for a workload within a time budget; write a reviewed ALTER SYSTEM
    /// script where every line carries its evidence.
    Tune(TuneArgs),
    /// Read what a server of yours runs (pg_stat_statements, pg_stat_activity) and write it
    /// as a workload for run query and tune: statements, weights, values, production's
    /// figures. Only reads the server (--db).
    Capture(CaptureArgs),
    /// Compare two captured windows of pg_stat_statements (before and after a change),
    /// statement by statement, with intervals. Reads two files; touches no server.
    Verify(VerifyArgs),
    /// Print a shell completion script: pglab completions bash > /etc/bash_completion.d/pglab
    Completions(generate::CompletionsArgs),
    /// Print the man page (or write one per command with --out DIR).
    Man(generate::ManArgs),
    /// The relay between the sandbox and a standby at a distance (run by pglab itself).
    #[command(name = "__standby-relay", hide = true)]
    StandbyRelay(RelayArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Table,
    Json,
    Csv,
    Md,
}

impl From<OutputFormat> for crate::report::Format {
    /// `text` and `table` both mean the aligned table.
    fn from(f: OutputFormat) -> Self {
        match f {
            OutputFormat::Text | OutputFormat::Table => crate::report::Format::Table,
            OutputFormat::Json => crate::report::Format::Json,
            OutputFormat::Csv => crate::report::Format::Csv,
            OutputFormat::Md => crate::report::Format::Md,
        }
    }
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Also run the disk probes (sequential write with fdatasync, fsync latency).
    #[arg(long)]
    pub disk: bool,
    /// Bytes for the sequential write probe.
    #[arg(long, default_value = "256MB", value_name = "SIZE")]
    pub disk_size: String,
    /// Duration of the fsync latency probe.
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub fsync_time: String,
}

#[derive(Debug, Subcommand)]
pub enum PresetAction {
    /// Shipped and user presets with their descriptions.
    List,
    /// A preset's parameters.
    Show { name: String },
    /// Save parameters as a user preset: pglab presets save NAME index-build --rows 5M …
    Save(PresetSaveArgs),
    /// Delete a user preset.
    Delete { name: String },
}

#[derive(Debug, Args)]
pub struct PresetSaveArgs {
    pub name: String,
    /// One-line description.
    #[arg(long, global = true)]
    pub description: Option<String>,
    /// Overwrite an existing user preset of that name.
    #[arg(long, global = true)]
    pub force: bool,
    #[command(flatten)]
    pub params: PresetParams,
}

/// What `presets save` stores: an experiment, its parameters as flags, and the preset it
/// starts from; none of `run`'s options (a preset holds no output format or timeout).
#[derive(Debug, Clone, Default)]
pub struct PresetParams {
    pub experiment: Option<ExperimentKind>,
    pub params: ParamText,
    pub preset: Option<String>,
}

impl FromArgMatches for PresetParams {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut out = PresetParams {
            preset: m.get_one::<String>("preset").cloned(),
            ..PresetParams::default()
        };
        if let Some((name, sub)) = m.subcommand() {
            let kind = experiment_named(name)?;
            out.experiment = Some(kind);
            out.params = field_values(kind, sub);
            out.preset = sub.get_one::<String>("preset").cloned().or(out.preset);
        }
        Ok(out)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for PresetParams {
    fn augment_args(cmd: Command) -> Command {
        let mut cmd = cmd
            .arg(preset_arg().global(true))
            .subcommand_required(false)
            .args_conflicts_with_subcommands(false);
        for kind in ExperimentKind::ALL {
            cmd = cmd.subcommand(fields_command(kind));
        }
        cmd
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// Past runs, newest last.
    List {
        /// Only runs of this experiment (index-build, ingest, growth, query).
        #[arg(long, value_name = "EXPERIMENT")]
        experiment: Option<String>,
        /// Only runs started from this preset.
        #[arg(long, value_name = "NAME")]
        preset: Option<String>,
        /// Only runs since this date/time (2026-12-01 or RFC 3339) or age (7d, 12h).
        #[arg(long)]
        since: Option<String>,
        /// Output format: a table, or one record per run (json, csv, md).
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
    /// One run's full results.
    Show {
        id: String,
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
    },
    /// Export runs.
    Export {
        #[arg(long, value_enum, default_value = "json")]
        format: OutputFormat,
        /// Only runs since this date/time (2026-12-01 or RFC 3339) or age (7d, 12h).
        #[arg(long)]
        since: Option<String>,
        /// Only runs of this experiment (index-build, ingest, growth, query).
        #[arg(long, value_name = "EXPERIMENT")]
        experiment: Option<String>,
    },
    /// Compare a baseline run with a candidate of the same experiment, setting by setting.
    Compare {
        baseline: String,
        candidate: String,
        #[arg(long, value_enum, default_value = "table")]
        format: OutputFormat,
        /// Confidence of every interval and verdict (95%); default: the candidate run's.
        #[arg(long, value_name = "PCT")]
        confidence: Option<String>,
        /// Smallest difference called faster/slower (5%); default: the candidate run's.
        #[arg(long, value_name = "PCT")]
        min_effect: Option<String>,
        /// A difference between the runs that is what you are comparing (a parameter, server
        /// setting or host field, e.g. shared_buffers), so it does not make them not
        /// comparable; repeat or list with commas.
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        vary: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run id (or a unique prefix; `last` for the newest).
    pub id: String,
    /// Output file: Markdown with its chart beside it as .svg, or with --format the report
    /// in that format [default without --format: pglab-ID.md, numbered when taken].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the report on stdout (or write it to --out) as table, json, csv or md.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Replace --out (and its charts) when it is there already.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Only list what would be dropped.
    #[arg(long)]
    pub dry_run: bool,
    /// Also drop reusable datasets (index-build tables kept between runs).
    #[arg(long)]
    pub datasets: bool,
    /// Drop every pglab object, datasets included, then the lab schema itself: only a schema
    /// pglab created and only when nothing else is in it (foreign objects are listed).
    #[arg(long)]
    pub drop_schema: bool,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The workload: an experiment (ingest, index-build, growth: its defaults), a preset
    /// name (query presets too), a preset file (FILE.toml), or a file of statements (FILE.sql).
    #[arg(long, value_name = "PRESET|FILE")]
    pub workload: Option<String>,
    /// The time budget for everything (data, restarts, trials, the confirmation): 90s, 15min, 1h.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// The settings to search: a comma-separated list, or auto (those that matter to the
    /// workload's kind).
    #[arg(long, value_name = "NAME,…|auto", default_value = "auto")]
    pub settings: String,
    /// A workload parameter, overriding the preset's (repeatable): --param rows=20k.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// On a server pglab did not start: a VOLATILE function of a query workload that you know
    /// only reads (SCHEMA.NAME, repeatable); every other one is refused before anything runs.
    #[arg(long = "allow-function", value_name = "SCHEMA.NAME")]
    pub allow_function: Vec<String>,
    /// Also search settings that trade durability for speed: synchronous_commit and
    /// full_page_writes (in auto), fsync (only when named in --settings); each line
    /// proposing one says what a crash would lose.
    #[arg(long)]
    pub allow_durability_tradeoff: bool,
    /// Go on from the saved state of a cancelled tune (same workload; --budget replaces the
    /// total budget).
    #[arg(long)]
    pub resume: bool,
    /// Stop a trial that writes more temporary files than this (e.g. 500MB); default 256MB
    /// on a server pglab did not start, none on its sandbox.
    #[arg(long, value_name = "SIZE")]
    pub max_temp: Option<String>,
    /// The server's memory for pgtune's prior and the memory check (64GB); needed with a
    /// server on another machine, read on this host otherwise.
    #[arg(long, value_name = "SIZE")]
    pub ram: Option<String>,
    /// The server's cores for pgtune's prior; needed with a server on another machine.
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
    /// The server's storage for pgtune's prior (random_page_cost, effective_io_concurrency);
    /// probed with fsync when the server runs here.
    #[arg(long, value_name = "ssd|hdd")]
    pub storage: Option<String>,
    /// Refuse a tuned set whose worst-case memory (work_mem × hash_mem_multiplier × the sort
    /// and hash nodes of the workload's plans × max_connections, plus shared_buffers) is past
    /// this (e.g. 48GB); without it the report warns past the server's RAM.
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Where to write the script [default: tune.sql; when that or its report is there
    /// already, tune-2.sql and so on].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Where to write the Markdown report (the search-path chart goes beside it as .svg).
    /// Default: the script's name with .md.
    #[arg(long, value_name = "FILE.md")]
    pub report: Option<PathBuf>,
    /// Replace the script, report or chart when they are there already (a path given with
    /// --out or --report is otherwise refused before the tune starts).
    #[arg(long)]
    pub force: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
