//! The documentation cannot drift from the command line: every long flag that `--help` shows,
//! of every command and subcommand (walked through clap's own command tree, the one the
//! parser uses), is written somewhere in `README.md` or `docs/`.

use std::path::Path;

use clap::{Arg, ArgAction, Command, CommandFactory};
use pglab::cli::Cli;

/// Every visible long flag of `cmd` and its subcommands, with the command it belongs to.
fn long_flags(cmd: &Command, path: &str, out: &mut Vec<(String, String)>) {
    for arg in cmd.get_arguments().filter(|a| shown(a)) {
        if let Some(long) = arg.get_long() {
            out.push((path.to_string(), format!("--{long}")));
        }
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        long_flags(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

/// A flag `--help` lists: not hidden, and not clap's own `--help`/`--version`.
fn shown(arg: &Arg) -> bool {
    !arg.is_hide_set()
        && !matches!(
            arg.get_action(),
            ArgAction::Help | ArgAction::HelpLong | ArgAction::HelpShort | ArgAction::Version
        )
}

/// `flag` written as a whole word: `--set` in `--set NAME=V` but not in `--settings`.
fn mentions(text: &str, flag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(flag).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + flag.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The README and every page of `docs/`, as one text.
fn documentation() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let mut pages: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "docs/ holds no page");
    for page in pages {
        text.push_str(&std::fs::read_to_string(&page).expect("a docs page"));
    }
    text
}

/// The flags of `cmd` that no page mentions, as `command --flag` lines.
fn undocumented(cmd: &Command, docs: &str) -> Vec<String> {
    let mut flags = Vec::new();
    long_flags(cmd, cmd.get_name(), &mut flags);
    let mut missing: Vec<String> = flags
        .into_iter()
        .filter(|(_, flag)| !mentions(docs, flag))
        .map(|(path, flag)| format!("{path} {flag}"))
        .collect();
    missing.dedup();
    missing
}

#[test]
fn every_flag_of_every_command_is_documented() {
    let docs = documentation();
    let mut cli = Cli::command();
    cli.build();
    let mut all = Vec::new();
    long_flags(&cli, "pglab", &mut all);
    assert!(
        all.len() > 100,
        "the walk found only {} flags: is it reaching the subcommands?",
        all.len()
    );
    let missing = undocumented(&cli, &docs);
    assert!(
        missing.is_empty(),
        "{} flag(s) of --help are in no page of docs/ nor in README.md; document each (its command's page, or docs/commands.md):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
}

#[test]
fn an_undocumented_flag_is_caught_and_a_documented_one_is_not() {
    let docs = documentation();
    let cmd = Command::new("pglab").subcommand(
        Command::new("probe")
            .arg(Arg::new("disk").long("disk").action(ArgAction::SetTrue))
            .arg(Arg::new("frobnicate").long("frobnicate-the-pool"))
            .arg(Arg::new("secret").long("secret-knob").hide(true)),
    );
    assert_eq!(
        undocumented(&cmd, &docs),
        vec!["pglab probe --frobnicate-the-pool".to_string()]
    );
}

#[test]
fn a_flag_is_a_whole_word() {
    assert!(mentions("sweep with `--set a=1,2`", "--set"));
    assert!(mentions("--set", "--set"));
    assert!(!mentions("`--settings auto`", "--set"));
    assert!(!mentions("`--no-set`", "--set"));
}
