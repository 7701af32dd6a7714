//! `pglab run`'s flags, built at run time: one subcommand per experiment with one flag per
//! parameter, generated from the same field definitions the TUI editor and presets use, and
//! the options of every run (`--preset`, `--format`, the timeouts, …). `presets save` takes
//! the same per-experiment subcommands without the run options.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use super::OutputFormat;
use crate::experiment::lab::field::{FieldKind, ParamText};
use crate::experiment::lab::spec::ExperimentKind;

/// `pglab run [EXPERIMENT] [--FIELD VALUE]… [--preset NAME] [--format …]`.
#[derive(Debug, Clone, Default)]
pub struct RunArgs {
    /// None when only `--preset` names the experiment.
    pub experiment: Option<ExperimentKind>,
    /// Parameters given as flags (override the preset's).
    pub params: ParamText,
    pub preset: Option<String>,
    pub format: Option<OutputFormat>,
    pub statement_timeout: Option<String>,
    pub lock_timeout: Option<String>,
    /// `--max-temp`: the temporary files a trial may write.
    pub max_temp: Option<String>,
    /// Say yes to the large-run confirmation.
    pub yes: bool,
    /// Do not record the run in the history.
    pub no_history: bool,
    /// Do not poll progress views (to measure their cost; hidden).
    pub no_progress_poll: bool,
}

/// `--preset NAME`, taken by `run` and `presets save`.
pub(super) fn preset_arg() -> Arg {
    Arg::new("preset")
        .long("preset")
        .value_name("NAME")
        .help("Start from a preset (flags override its values)")
}

/// The options of every run, under "Run options": given before or after the experiment.
fn common_run_args(cmd: Command) -> Command {
    cmd.next_help_heading("Run options")
        .arg(preset_arg())
        .arg(
            Arg::new("format")
                .long("format")
                .value_parser(clap::builder::EnumValueParser::<OutputFormat>::new())
                .help("Results on stdout as table, json, csv or md [default: table]"),
        )
        .arg(
            Arg::new("statement-timeout")
                .long("statement-timeout")
                .value_name("DURATION")
                .help("Abort any statement of the run after this long (e.g. 30min)"),
        )
        .arg(
            Arg::new("lock-timeout")
                .long("lock-timeout")
                .value_name("DURATION")
                .help("Give up waiting for a lock after this long [default: 5s]"),
        )
        .arg(
            Arg::new("max-temp")
                .long("max-temp")
                .value_name("SIZE")
                .help("Stop a trial that writes more temporary files than this (e.g. 500MB) [default: 256MB on a server pglab did not start, none on its sandbox]"),
        )
        .arg(
            Arg::new("yes")
                .long("yes")
                .short('y')
                .action(ArgAction::SetTrue)
                .help("Do not ask before a run that needs a lot of disk"),
        )
        .arg(
            Arg::new("no-history")
                .long("no-history")
                .action(ArgAction::SetTrue)
                .help("Do not record this run in the history"),
        )
        .arg(
            Arg::new("no-progress-poll")
                .long("no-progress-poll")
                .action(ArgAction::SetTrue)
                .hide(true),
        )
}

/// `run`'s subcommand for an experiment: its parameters and the run options.
fn experiment_command(kind: ExperimentKind) -> Command {
    common_run_args(fields_command(kind))
}

/// An experiment's subcommand with one flag per parameter.
pub(super) fn fields_command(kind: ExperimentKind) -> Command {
    let info = kind.info();
    let mut cmd = Command::new(kind.as_str())
        .about(info.about)
        .next_help_heading(info.heading);
    for f in kind.fields() {
        let mut a = Arg::new(f.key)
            .long(f.key)
            // `--rows -5` is a bad value of --rows, not an unknown flag: the field's parser
            // says why, as for `--rows=-5`.
            .allow_negative_numbers(true)
            .help(format!("{} [default: {}]", f.help, f.default))
            .value_name(match f.kind {
                FieldKind::Count => "N",
                FieldKind::CountList => "LIST",
                FieldKind::Size => "SIZE",
                FieldKind::SizeList => "SIZES",
                FieldKind::Choice(_) => "CHOICE",
                FieldKind::ChoiceList(_) => "LIST",
                FieldKind::Bool => "on|off",
                FieldKind::Duration => "DURATION",
                FieldKind::Number => "N",
                FieldKind::Percent => "PCT",
                FieldKind::Settings => "NAME=V1,V2",
                FieldKind::Sql => "SQL",
                FieldKind::Text => "TEXT",
                FieldKind::Names => "NAME",
            });
        if f.kind == FieldKind::Bool {
            a = a.num_args(0..=1).default_missing_value("on");
        }
        if matches!(
            f.kind,
            FieldKind::Settings | FieldKind::Sql | FieldKind::Names
        ) {
            a = a.action(ArgAction::Append);
        }
        if matches!(f.kind, FieldKind::Sql | FieldKind::Text) {
            // SQL may start with a comment: `--sql "-- name: q …"` is a value, not a flag.
            a = a.allow_hyphen_values(true);
        }
        cmd = cmd.arg(a);
    }
    cmd
}

/// The experiment a subcommand names.
pub(super) fn experiment_named(name: &str) -> Result<ExperimentKind, clap::Error> {
    ExperimentKind::parse(name).ok_or_else(|| {
        clap::Error::raw(
            clap::error::ErrorKind::InvalidSubcommand,
            format!("unknown experiment '{name}'\n"),
        )
    })
}

/// The parameters given as flags to an experiment's subcommand.
pub(super) fn field_values(kind: ExperimentKind, sub: &ArgMatches) -> ParamText {
    let mut params = ParamText::new();
    for f in kind.fields() {
        if matches!(
            f.kind,
            FieldKind::Settings | FieldKind::Sql | FieldKind::Names
        ) {
            // Repeatable: `--set a=1,2 --set b=x` is one sweep of two settings;
            // `--sql A --sql B` two statements; `--allow-function a.f --allow-function b.g`
            // two names.
            let sep = match f.kind {
                FieldKind::Sql => ";\n",
                FieldKind::Names => ",",
                _ => " ",
            };
            if let Some(vs) = sub.get_many::<String>(f.key) {
                let joined: Vec<&str> = vs.map(String::as_str).collect();
                params.insert(f.key.to_string(), joined.join(sep));
            }
        } else if let Some(v) = sub.get_one::<String>(f.key) {
            params.insert(f.key.to_string(), v.clone());
        }
    }
    params
}

impl RunArgs {
    /// The run options given at this level (the experiment's subcommand's win over `run`'s).
    fn read_common(m: &ArgMatches, out: &mut RunArgs) {
        out.preset = m.get_one::<String>("preset").cloned().or(out.preset.take());
        out.format = m.get_one::<OutputFormat>("format").copied().or(out.format);
        out.statement_timeout = m
            .get_one::<String>("statement-timeout")
            .cloned()
            .or(out.statement_timeout.take());
        out.lock_timeout = m
            .get_one::<String>("lock-timeout")
            .cloned()
            .or(out.lock_timeout.take());
        out.max_temp = m
            .get_one::<String>("max-temp")
            .cloned()
            .or(out.max_temp.take());
        out.yes |= m.get_flag("yes");
        out.no_history |= m.get_flag("no-history");
        out.no_progress_poll |= m.get_flag("no-progress-poll");
    }
}

impl FromArgMatches for RunArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut out = RunArgs::default();
        Self::read_common(m, &mut out);
        if let Some((name, sub)) = m.subcommand() {
            let kind = experiment_named(name)?;
            out.experiment = Some(kind);
            out.params = field_values(kind, sub);
            Self::read_common(sub, &mut out);
        }
        Ok(out)
    }
    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for RunArgs {
    fn augment_args(cmd: Command) -> Command {
        let mut cmd = common_run_args(cmd)
            .subcommand_required(false)
            .args_conflicts_with_subcommands(false);
        for kind in ExperimentKind::ALL {
            cmd = cmd.subcommand(experiment_command(kind));
        }
        cmd
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, CommandKind};
    use clap::Parser;

    #[test]
    fn run_flags_become_params() {
        let cli = Cli::try_parse_from([
            "pglab",
            "run",
            "index-build",
            "--rows",
            "5M",
            "--warmup",
            "--format",
            "json",
        ])
        .unwrap();
        let Some(CommandKind::Run(r)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(r.experiment, Some(ExperimentKind::IndexBuild));
        assert_eq!(r.params.get("rows").map(String::as_str), Some("5M"));
        assert_eq!(r.params.get("warmup").map(String::as_str), Some("on"));
        assert_eq!(r.format, Some(OutputFormat::Json));
        let cli = Cli::try_parse_from(["pglab", "run", "--preset", "cybertec-quick"]).unwrap();
        let Some(CommandKind::Run(r)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (r.experiment, r.preset.as_deref()),
            (None, Some("cybertec-quick"))
        );
    }
}
