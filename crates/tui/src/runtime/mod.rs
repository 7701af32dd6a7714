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
pub mod prepare;
pub(crate) mod probe_saved;
mod report;
mod strip;
mod tune;
pub mod verify;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::{Interval, MissedTickBehavior, interval, sleep_until};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use self::effects::Effects;
use crate::paths::Paths;
use crate::server::Target;
use crate::tui::app::App;
use crate::tui::frame::Pacer;
use crate::tui::msg::{Command, Msg};
use crate::tui::terminal::{Input, Tui};
use crate::tui::{render, update};

/// Spinner and clock while something moves.
const TICK: Duration = Duration::from_millis(200);

/// What the commands need from outside the app.
pub(crate) struct Env {
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
pub(crate) async fn run(
    term: &mut Tui,
    app: &mut App,
    env: Env,
    client: Option<Client>,
    launched: Instant,
) -> std::io::Result<()> {
    let (tx, rx) = unbounded_channel::<Msg>();
    let stop = CancellationToken::new();
    start_readings(&env, client, &tx, &stop);
    let sync = env.synchronized_output;
    let mut lp = EventLoop::new(Effects::new(env, tx.clone()), rx);
    let signal = crate::session::shutdown_signal();
    tokio::pin!(signal);
    for c in update::init(app) {
        lp.fx.exec(c);
    }
    let screen = Screen {
        term,
        sync,
        launched,
    };
    let result = lp.until_quit(screen, app, signal).await;
    stop.cancel();
    lp.fx.shutdown().await;
    result
}

/// The server's readings and the host's samples, each on its own task until `stop`.
fn start_readings(
    env: &Env,
    client: Option<Client>,
    tx: &UnboundedSender<Msg>,
    stop: &CancellationToken,
) {
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
}

/// The terminal the frames go to.
struct Screen<'a> {
    term: &'a mut Tui,
    /// Wrap frames in synchronized output.
    sync: bool,
    /// When pglab started (the first frame's delay is logged).
    launched: Instant,
}

/// The loop's state between two messages.
struct EventLoop {
    fx: Effects,
    rx: UnboundedReceiver<Msg>,
    input: Input,
    input_open: bool,
    signalled: bool,
    tick: Interval,
    pacer: Pacer,
    /// Settle marks of a run held until the frame that is due has been drawn (see [`Self::apply`]).
    held: Vec<Msg>,
    quit: bool,
}

impl EventLoop {
    fn new(fx: Effects, rx: UnboundedReceiver<Msg>) -> EventLoop {
        let input = Input::new();
        let mut tick = interval(TICK);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut pacer = Pacer::default();
        pacer.changed(true);
        EventLoop {
            fx,
            rx,
            input,
            input_open: true,
            signalled: false,
            tick,
            pacer,
            held: Vec::new(),
            quit: false,
        }
    }

    /// Draw when a frame is due, wait for the next messages, update the app with them; until
    /// the user quits or the terminal fails.
    async fn until_quit(
        &mut self,
        mut screen: Screen<'_>,
        app: &mut App,
        mut signal: Pin<&mut impl Future<Output = ()>>,
    ) -> std::io::Result<()> {
        loop {
            let now = Instant::now();
            if let Some(end) = self.draw_if_due(&mut screen, app, now) {
                return end;
            }
            self.held.clear();
            if self.quit {
                return Ok(());
            }
            let msg = self.next(app, signal.as_mut(), now).await?;
            let mut pending: Vec<Msg> = msg.into_iter().collect();
            while let Ok(m) = self.rx.try_recv() {
                pending.push(m);
            }
            self.apply(app, pending);
        }
    }

    /// Draw the frame when one is due; Some(end) when the terminal failed or went away.
    fn draw_if_due(
        &mut self,
        screen: &mut Screen<'_>,
        app: &App,
        now: Instant,
    ) -> Option<std::io::Result<()>> {
        if !self.pacer.ready(now) {
            return None;
        }
        if let Err(e) =
            crate::tui::frame::draw(screen.term, screen.sync, |f| render::render(app, f))
        {
            if crate::tui::terminal::is_gone(&e) {
                // The terminal went away (SSH dropped, tmux killed): leave as on SIGHUP,
                // through the same clean shutdown (the run cancelled, the sandbox stopped).
                tracing::info!("the terminal is gone ({e}): shutting down");
                return Some(Ok(()));
            }
            return Some(Err(e));
        }
        if self.pacer.first() {
            tracing::info!(
                "first frame {} ms after launch",
                screen.launched.elapsed().as_millis()
            );
        }
        self.pacer.drawn(now);
        None
    }

    /// The next key, message, tick or signal; None when only a frame fell due.
    async fn next(
        &mut self,
        app: &App,
        signal: Pin<&mut impl Future<Output = ()>>,
        now: Instant,
    ) -> std::io::Result<Option<Msg>> {
        let next_frame = self.pacer.due();
        Ok(tokio::select! {
            ev = self.input.next(), if self.input_open => match ev {
                Some(Ok(m)) => Some(m),
                Some(Err(e)) => return Err(e),
                None => {
                    // The terminal is gone: leave as on SIGHUP.
                    self.input_open = false;
                    Some(Msg::Shutdown)
                }
            },
            m = self.rx.recv() => m,
            _ = self.tick.tick(), if app.animating() => Some(Msg::Tick),
            _ = signal, if !self.signalled => {
                self.signalled = true;
                Some(Msg::Shutdown)
            }
            _ = sleep_until(next_frame.unwrap_or(now).into()), if next_frame.is_some() => None,
        })
    }

    /// Update the app with each message and carry out the commands it returns.
    fn apply(&mut self, app: &mut App, pending: Vec<Msg>) {
        for m in pending {
            // The run waits for this mark before it starts a timed execution: when a frame is
            // due, the mark goes after the frame, so the draw is not inside the timed window.
            if matches!(m, Msg::Run(crate::experiment::RunEvent::Settle(_))) {
                if self.pacer.ready(Instant::now()) {
                    self.held.push(m);
                }
                continue;
            }
            app.now = Instant::now();
            self.pacer
                .changed(matches!(m, Msg::Key(_) | Msg::Resize(..)));
            for c in update::update(app, m) {
                if c == Command::Quit {
                    self.quit = true;
                } else {
                    self.fx.exec(c);
                }
            }
        }
    }
}
