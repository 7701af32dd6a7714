//! The terminal UI: `pglab` with no subcommand.
//!
//! Elm-shaped: [`app::App`] is the state; [`update::update`] turns a message into state
//! changes and commands without I/O; [`render::render`] draws the state without changing it;
//! [`runtime`] carries out the commands on tokio and feeds their results back as messages.
//! Only [`terminal`] touches the terminal. One file per pane under [`panes`].

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as tui;
#[allow(unused_imports)]
use pglab_capture as capture;
#[allow(unused_imports)]
use pglab_engine::{experiment, history, preset, report, tune};
#[allow(unused_imports)]
use pglab_host as host;
#[allow(unused_imports)]
use pglab_import as import;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_paths as paths;
#[allow(unused_imports)]
use pglab_server as server;
#[allow(unused_imports)]
use pglab_session::{cli, outputs, session};
#[allow(unused_imports)]
use pglab_sql as sql;

pub mod app;
pub mod config;
/// Built apps and reports for the unit tests and the render bench; not in the product.
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod frame;
pub mod keybar;
pub mod keys;
pub mod last_params;
pub mod line_edit;
pub mod msg;
pub mod overlays;
pub mod panes;
pub mod render;
pub mod run_shelf;
pub mod runtime;
pub mod secret;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod update;
pub mod update_capture;
mod update_import;
mod update_overlays;
mod update_report;
mod update_run;
mod update_runs;
mod update_start;
mod update_tune;
mod update_verify;

#[cfg(test)]
mod capture_tests;
#[cfg(test)]
mod field_tests;
#[cfg(test)]
mod import_tests;
#[cfg(test)]
mod keys_walk_tests;
#[cfg(test)]
mod look_only_tests;
#[cfg(test)]
mod outcome_tests;
#[cfg(test)]
mod overlay_tests;
#[cfg(test)]
mod params_tests;
#[cfg(test)]
mod plans_tests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod results_tests;
#[cfg(test)]
mod run_tests;
#[cfg(test)]
mod screen80_tests;
#[cfg(test)]
mod screens_tests;
#[cfg(test)]
mod shelf_tests;
#[cfg(test)]
mod tune_tests;
#[cfg(test)]
mod update_tests;
#[cfg(test)]
mod wrap_tests;

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};

use self::app::{App, AppInit, Level, Notice};
use self::msg::{Msg, ServerMsg};
use self::runtime::Env;
use self::terminal::TerminalGuard;
use crate::experiment::Outcome;
use crate::server::snapshot;
use crate::session::{Ctx, EXIT_CANCELLED, EXIT_USAGE, user_error};

/// Open the target (before taking over the screen: it may ask for a password or start the
/// sandbox), run the UI, then give the sandbox back so its server stops.
pub async fn run(ctx: Ctx) -> Result<i32> {
    let launched = Instant::now();
    if !terminal::is_interactive() {
        return Err(user_error(
            EXIT_USAGE,
            "the terminal UI needs a terminal on stdin and stdout: use `pglab run …` in scripts",
        ));
    }
    terminal::set_log_file(ctx.paths.log_dir().join("pglab.log"));
    let config = config::load(&ctx.paths.config_file());
    if let Some(p) = &config.problem {
        tracing::warn!("{p}");
    }
    // Said while the sandbox starts, and taken back: after the UI leaves, the terminal's
    // last line is the shell's again.
    let wait = ctx
        .target_options()
        .wants_sandbox()
        .then(|| terminal::announce("starting the sandbox…"));
    let opened = ctx.open_target().await;
    if let Some(w) = wait {
        w.clear();
    }
    let (opened, client) = opened?;
    let first = tokio::time::timeout(
        Duration::from_secs(5),
        snapshot::read(&client, &opened.target),
    )
    .await
    .ok()
    .and_then(|r| r.ok());
    let local = Ctx::local_data_dir(&opened, first.as_ref());
    let probe_site = ctx.probe_site(&opened, first.as_ref());
    let env = Env {
        target: opened.target.clone(),
        schema: ctx.global.schema.clone(),
        history_file: ctx.paths.history_file(),
        paths: ctx.paths.clone(),
        probe_site: probe_site.clone(),
        local_data_dir: local,
        synchronized_output: config.synchronized_output,
        sandbox: opened.sandbox.as_ref().map(|s| s.sandbox.clone()),
    };
    let params_file = ctx.paths.last_params_file();
    let (last_params, params_problem) = match last_params::load(&params_file) {
        Ok(p) => (p, None),
        Err(e) => {
            tracing::warn!("{e}");
            (None, Some(e))
        }
    };
    let init = AppInit {
        now: Instant::now(),
        theme: theme::Theme::from_env(),
        keys: config.keys,
        config_file: ctx.paths.config_file(),
        observe: ctx.global.observe,
        location: opened.target.location.clone(),
        size: (80, 24),
        notice: config.problem.or(params_problem).map(|text| Notice {
            text,
            level: Level::Warn,
        }),
        last_params,
        saved_probe: runtime::probe_saved::load(&ctx.paths.data_dir, &probe_site.dir),
    };
    let result = ui(
        init,
        env,
        client,
        first,
        launched,
        &params_file,
        (probe_site.kind != crate::host::probe_site::SiteKind::Sandbox).then(|| probe_site.clone()),
    )
    .await;
    opened.close().await;
    result
}

/// How long after the UI starts pglab's own start-up transactions may still reach the
/// server's statistics (PostgreSQL 15 flushes them at most once a second; one more for the
/// leftovers lookup the UI starts with).
const STARTUP_COUNTED: Duration = Duration::from_secs(2);

async fn ui(
    mut init: AppInit,
    env: Env,
    client: tokio_postgres::Client,
    first: Option<crate::server::ServerSnapshot>,
    launched: Instant,
    params_file: &std::path::Path,
    probe_site: Option<crate::host::probe_site::ProbeSite>,
) -> Result<i32> {
    let mut guard = TerminalGuard::enter().map_err(|e| eyre!("cannot set up the terminal: {e}"))?;
    init.size = guard.size();
    let mut app = App::new(init);
    app.host.probe_site = probe_site;
    // The first rates start from a reading after pglab's own start-up work has been counted.
    app.target.rates_from = Some(Instant::now() + STARTUP_COUNTED);
    if let Some(s) = first {
        update::update(&mut app, Msg::Server(ServerMsg::Snapshot(Box::new(s))));
    }
    let r = runtime::run(&mut guard.terminal, &mut app, env, Some(client), launched).await;
    let bytes = guard.bytes.get();
    let secs = launched.elapsed().as_secs_f64().max(0.001);
    tracing::info!(
        "terminal output: {bytes} bytes in {secs:.0} s ({:.0} B/s)",
        bytes as f64 / secs
    );
    drop(guard);
    // The next start begins where this one ended.
    if let Err(e) = last_params::save(params_file, &app.params.snapshot()) {
        tracing::warn!(
            "could not save the parameters to {}: {e}",
            params_file.display()
        );
    }
    r.map_err(|e| eyre!("the terminal failed: {e}"))?;
    let cancelled = app
        .run
        .ended()
        .is_some_and(|e| e.outcome == Outcome::Cancelled);
    Ok(if app.by_signal && cancelled {
        EXIT_CANCELLED
    } else {
        0
    })
}
