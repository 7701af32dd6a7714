//! What a CLI user expects from the ecosystem, generated from the same clap definitions the
//! parser uses, so they can never disagree with it: shell completions (clap_complete) and
//! man pages (clap_mangen), one page per command.

use std::path::{Path, PathBuf};

use clap::{Args, Command, CommandFactory};
use clap_complete::Shell;

use super::Cli;

/// `pglab completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh, fish (also elvish, powershell).
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// `pglab man [--out DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write pglab.1 and a page per command (pglab-run-index-build.1, …) into this existing
    /// directory instead of printing pglab.1 on stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "pglab", &mut out);
    out
}

/// The top-level man page, `pglab.1`.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(built()).render(&mut out)?;
    Ok(out)
}

/// Every command's man page into `dir`, named as `man` looks them up (`pglab-sandbox-import.1`
/// for `man pglab-sandbox-import`); returns the files written.
pub fn write_man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    write_page(&built(), dir, &mut written)?;
    Ok(written)
}

/// The command tree with everything clap fills in at parse time (help, version, the
/// subcommands' full names), as the pages must show it.
fn built() -> Command {
    let mut cmd = Cli::command();
    cmd.build();
    cmd
}

fn write_page(cmd: &Command, dir: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    // Named by the command's display name, `pglab-sandbox-import.1`, as `build` set it.
    written.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() != "help" {
            write_page(sub, dir, written)?;
        }
    }
    Ok(())
}
