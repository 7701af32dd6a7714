//! Entry point: parse the command line and dispatch to one front end. Nothing else lives here.

use clap::Parser;
use pglab::cli::{Cli, CommandKind};
use pglab::{commands, session, tui};

fn main() {
    let Cli { global, command } = Cli::parse();
    let code = match command {
        None => session::execute(global, tui::run),
        Some(CommandKind::Probe(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::probe::run(&ctx, a).await },
            )
        }
        Some(CommandKind::Run(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::run::run(&ctx, a).await },
            )
        }
        Some(CommandKind::Sandbox { action }) => session::execute(global, |ctx| async move {
            commands::sandbox::run(&ctx, action).await
        }),
        Some(CommandKind::Presets { action }) => session::execute(global, |ctx| async move {
            commands::presets::run(&ctx, action).await
        }),
        Some(CommandKind::History { action }) => session::execute(global, |ctx| async move {
            commands::history::run(&ctx, action).await
        }),
        Some(CommandKind::Report(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::report::run(&ctx, a).await },
            )
        }
        Some(CommandKind::Tune(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::tune::run(&ctx, a).await },
            )
        }
        Some(CommandKind::Capture(a)) => session::execute(global, |ctx| async move {
            commands::capture::run(&ctx, a).await
        }),
        Some(CommandKind::Verify(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::verify::run(&ctx, a).await },
            )
        }
        Some(CommandKind::Completions(a)) => commands::generate::completions(a),
        Some(CommandKind::Man(a)) => commands::generate::man(a),
        Some(CommandKind::StandbyRelay(a)) => pglab::server::standby_relay::run_relay(
            &pglab::server::relay::RelaySpec {
                listen_port: a.listen_port,
                to_port: a.to_port,
                one_way: std::time::Duration::from_micros(a.one_way_us),
            },
            &a.ready_file,
        ),
        Some(CommandKind::Clean(a)) => {
            session::execute(
                global,
                |ctx| async move { commands::clean::run(&ctx, a).await },
            )
        }
    };
    std::process::exit(code);
}
