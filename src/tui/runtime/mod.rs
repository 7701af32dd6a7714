//! Runs the app: the event loop. It feeds `update` with keys, timers and the results of commands, carries out the
//! commands on tokio, and draws only after something changed, paced by `frame::Pacer`.
//!
//! Background work (server readings, host samples, probes, the run) never blocks the loop:
//! each runs on its own task and reports back by message. [`effects`] carries out the
//! commands, [`poll`] reads the server and the host, [`strip`] loads the history strip.

mod capture;
mod effects;
mod import;
mod poll;
mod strip;
mod tune;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::unbounded_channel;
use tokio::time::{MissedTickBehavior, interval, sleep_until};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use self::effects::Effects;
use crate::paths::Paths;
use crate::server::Target;
use crate::tui::app::App;
use crate::tui::msg::{Command, Msg};
use crate::tui::terminal::{Input, Tui};
use crate::tui::{render, update};

/// Spinner and clock while something moves.
const TICK: Duration = Duration::from_millis(200);

/// What the commands need from outside the app.
pub struct Env {
    pub target: Arc<Target>,
    pub schema: String,
    pub history_file: PathBuf,
    /// Where presets live (the picker reads and writes them).
    pub paths: Paths,
    /// A directory on the server's filesystem, when the server is local.
    pub local_data_dir: Option<PathBuf>,
    /// Where the disk probes write (a directory pglab owns, or `--probe-dir`).
    pub probe_site: crate::host::probe_site::ProbeSite,
    /// Wrap frames in synchronized output (config `[ui] synchronized_output`).
    pub synchronized_output: bool,
    /// pglab's sandbox when it is the target (server settings may be swept on it).
    pub sandbox: Option<crate::server::Sandbox>,
}

/// Run until the user quits. `client` is the session opened at start-up, reused for readings.
pub async fn run(
    term: &mut Tui,
    app: &mut App,
    env: Env,
    client: Option<Client>,
    launched: Instant,
) -> std::io::Result<()> {
    let (tx, mut rx) = unbounded_channel::<Msg>();
    let stop = CancellationToken::new();
    tokio::spawn(poll::poll_server(
        env.target.clone(),
        client,
        tx.clone(),
        stop.clone(),
    ));
    tokio::spawn(poll::sample_host(
        env.local_data_dir.clone(),
        tx.clone(),
        stop.clone(),
    ));
    let sync = env.synchronized_output;
    let mut fx = Effects::new(env, tx.clone());
    let mut input = Input::new();
    let mut input_open = true;
    let signal = crate::session::shutdown_signal();
    tokio::pin!(signal);
    let mut signalled = false;
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);

    let mut quit = false;
    for c in update::init(app) {
        fx.exec(c);
    }
    let mut pacer = crate::tui::frame::Pacer::default();
    pacer.changed(true);
    // Settle marks of a run held until the frame that is due has been drawn (see below).
    let mut held: Vec<Msg> = Vec::new();
    let result = loop {
        let now = Instant::now();
        if pacer.ready(now) {
            if let Err(e) = crate::tui::frame::draw(term, sync, |f| render::render(app, f)) {
                if crate::tui::terminal::is_gone(&e) {
                    // The terminal went away (SSH dropped, tmux killed): leave as on SIGHUP,
                    // through the same clean shutdown (the run cancelled, the sandbox stopped).
                    tracing::info!("the terminal is gone ({e}): shutting down");
                    break Ok(());
                }
                break Err(e);
            }
            if pacer.first() {
                tracing::info!(
                    "first frame {} ms after launch",
                    launched.elapsed().as_millis()
                );
            }
            pacer.drawn(now);
        }
        held.clear();
        if quit {
            break Ok(());
        }
        let next_frame = pacer.due();
        let msg = tokio::select! {
            ev = input.next(), if input_open => match ev {
                Some(Ok(m)) => Some(m),
                Some(Err(e)) => break Err(e),
                None => {
                    // The terminal is gone: leave as on SIGHUP.
                    input_open = false;
                    Some(Msg::Shutdown)
                }
            },
            m = rx.recv() => m,
            _ = tick.tick(), if app.animating() => Some(Msg::Tick),
            _ = &mut signal, if !signalled => {
                signalled = true;
                Some(Msg::Shutdown)
            }
            _ = sleep_until(next_frame.unwrap_or(now).into()), if next_frame.is_some() => None,
        };
        let mut pending: Vec<Msg> = msg.into_iter().collect();
        while let Ok(m) = rx.try_recv() {
            pending.push(m);
        }
        for m in pending {
            // The run waits for this mark before it starts a timed execution: when a frame is
            // due, the mark goes after the frame, so the draw is not inside the timed window.
            if matches!(m, Msg::Run(crate::experiment::RunEvent::Settle(_))) {
                if pacer.ready(Instant::now()) {
                    held.push(m);
                }
                continue;
            }
            app.now = Instant::now();
            pacer.changed(matches!(m, Msg::Key(_) | Msg::Resize(..)));
            for c in update::update(app, m) {
                if c == Command::Quit {
                    quit = true;
                } else {
                    fx.exec(c);
                }
            }
        }
    };
    stop.cancel();
    fx.shutdown().await;
    result
}
