//! Entry point: parse the command line and dispatch. Nothing else lives here.

use clap::Parser;

fn main() {
    let cli = pglab::cli::Cli::parse();
    std::process::exit(pglab::commands::dispatch(cli));
}
