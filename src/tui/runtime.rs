//! Runs the app: feeds `update` with keys, timers and the results of commands, carries out the
//! commands on tokio, and draws at most `FRAME` apart and only after something changed.
//!
//! Background work (server readings, host samples, probes, the run) never blocks the loop:
//! each runs on its own task and reports back by message.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio::time::{MissedTickBehavior, interval, sleep, sleep_until, timeout};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::app::App;
use super::msg::{Command, HistoryPoint, Msg, PresetOp, ProbeMsg, ProbeStage, ServerMsg};
use super::terminal::{Input, Tui};
use super::{past_runs, render, update};
use crate::experiment::{self, RunOptions, guard};
use crate::host::probe::{self, FsyncSpec, ProbeError, SeqWriteSpec};
use crate::host::{HostSampler, HostSnapshot};
use crate::paths::Paths;
use crate::target::{Target, snapshot};

/// At most 20 frames a second.
pub const FRAME: Duration = Duration::from_millis(50);
/// Spinner and clock while something moves.
const TICK: Duration = Duration::from_millis(200);
/// Server readings and host samples.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// A server reading that takes longer counts as a lost connection.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How long leaving waits for a cancelled run to finish its cleanup.
const RUN_STOP_WAIT: Duration = Duration::from_secs(20);

/// What the commands need from outside the app.
pub struct Env {
    pub target: Arc<Target>,
    pub schema: String,
    pub history_file: PathBuf,
    /// Where presets live (the picker reads and writes them).
    pub paths: Paths,
    /// A directory on the server's filesystem, when the server is local.
    pub local_data_dir: Option<PathBuf>,
    /// Where the disk probes write.
    pub probe_dir: PathBuf,
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
    tokio::spawn(poll_server(
        env.target.clone(),
        client,
        tx.clone(),
        stop.clone(),
    ));
    tokio::spawn(sample_host(
        env.local_data_dir.clone(),
        tx.clone(),
        stop.clone(),
    ));
    let mut fx = Effects {
        env,
        tx: tx.clone(),
        run: None,
        probe: None,
    };
    let mut input = Input::new();
    let mut input_open = true;
    let signal = crate::commands::shutdown_signal();
    tokio::pin!(signal);
    let mut signalled = false;
    let mut tick = interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);

    let mut quit = false;
    for c in update::init(app) {
        fx.exec(c);
    }
    let mut dirty = true;
    let mut last_draw: Option<Instant> = None;
    let result = loop {
        let now = Instant::now();
        if dirty && last_draw.is_none_or(|t| now.duration_since(t) >= FRAME) {
            if let Err(e) = term.draw(|f| render::render(app, f)) {
                break Err(e);
            }
            if last_draw.is_none() {
                tracing::info!(
                    "first frame {} ms after launch",
                    launched.elapsed().as_millis()
                );
            }
            last_draw = Some(now);
            dirty = false;
        }
        if quit {
            break Ok(());
        }
        let next_frame = last_draw.map(|t| t + FRAME).unwrap_or(now);
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
            _ = sleep_until(next_frame.into()), if dirty => None,
        };
        let mut pending: Vec<Msg> = msg.into_iter().collect();
        while let Ok(m) = rx.try_recv() {
            pending.push(m);
        }
        for m in pending {
            app.now = Instant::now();
            dirty = true;
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

/// Carries out commands; holds what is running.
struct Effects {
    env: Env,
    tx: UnboundedSender<Msg>,
    run: Option<(CancellationToken, JoinHandle<()>)>,
    probe: Option<(CancellationToken, JoinHandle<()>)>,
}

impl Effects {
    fn exec(&mut self, cmd: Command) {
        let tx = self.tx.clone();
        match cmd {
            Command::Preflight { spec, kind, server } => {
                let dir = self.env.local_data_dir.clone();
                tokio::spawn(async move {
                    let free = match dir {
                        Some(d) => tokio::task::spawn_blocking(move || crate::host::free_bytes(&d))
                            .await
                            .ok()
                            .flatten(),
                        None => None,
                    };
                    let verdict = guard::preflight(
                        spec.estimate(),
                        free,
                        server.as_deref(),
                        guard::CONFIRM_ABOVE,
                    );
                    let _ = tx.send(Msg::Preflight {
                        spec,
                        kind,
                        verdict: Box::new(verdict),
                    });
                });
            }
            Command::StartRun { spec, preset } => {
                let opts = RunOptions {
                    preset,
                    schema: self.env.schema.clone(),
                    history: Some(self.env.history_file.clone()),
                    local_data_dir: self.env.local_data_dir.clone(),
                    ..RunOptions::default()
                };
                let mut handle = experiment::spawn(self.env.target.clone(), *spec, opts);
                tokio::spawn(async move {
                    while let Some(ev) = handle.events.recv().await {
                        let last = ev.is_final();
                        let _ = tx.send(Msg::Run(ev));
                        if last {
                            return;
                        }
                    }
                    let _ = tx.send(Msg::RunClosed);
                });
                self.run = Some((handle.cancel, handle.task));
            }
            Command::CancelRun => {
                if let Some((cancel, _)) = &self.run {
                    cancel.cancel();
                }
            }
            Command::StartProbe => {
                let cancel = CancellationToken::new();
                let dir = self.env.probe_dir.clone();
                let c = cancel.clone();
                let task = tokio::spawn(async move {
                    let ptx = tx.clone();
                    let r = tokio::task::spawn_blocking(move || probes(&dir, &c, &ptx)).await;
                    let msg = match r {
                        Ok(Ok(res)) => ProbeMsg::Done(Ok(res)),
                        Ok(Err(ProbeError::Cancelled)) => ProbeMsg::Cancelled,
                        Ok(Err(e)) => ProbeMsg::Done(Err(e.to_string())),
                        Err(e) => ProbeMsg::Done(Err(format!("the probe stopped: {e}"))),
                    };
                    let _ = tx.send(Msg::Probe(msg));
                });
                self.probe = Some((cancel, task));
            }
            Command::CancelProbe => {
                if let Some((cancel, _)) = &self.probe {
                    cancel.cancel();
                }
            }
            Command::FindLeftovers => {
                let (target, schema) = (self.env.target.clone(), self.env.schema.clone());
                tokio::spawn(async move {
                    let found = async {
                        let c = target.connect().await.ok()?;
                        crate::experiment::lab::lab_objects(&c, &schema).await.ok()
                    };
                    if let Ok(Some(objects)) =
                        tokio::time::timeout(std::time::Duration::from_secs(10), found).await
                    {
                        let leftovers = objects
                            .into_iter()
                            .filter(|o| {
                                !o.live && o.kind != crate::experiment::lab::LabObjectKind::Dataset
                            })
                            .collect();
                        let _ = tx.send(Msg::Leftovers(leftovers));
                    }
                });
            }
            Command::CleanLeftovers(objects) => {
                let (target, schema) = (self.env.target.clone(), self.env.schema.clone());
                tokio::spawn(async move {
                    let r = match target.connect().await {
                        Ok(c) => crate::experiment::lab::drop_objects(&c, &schema, &objects).await,
                        Err(e) => Err(e.to_string()),
                    };
                    let _ = tx.send(Msg::Cleaned(r));
                });
            }
            Command::LoadHistory { spec_key } => {
                let path = self.env.history_file.clone();
                tokio::spawn(async move {
                    let key = spec_key.clone();
                    let points: Result<Vec<HistoryPoint>, String> =
                        tokio::task::spawn_blocking(move || past_runs::points(&path, &key))
                            .await
                            .unwrap_or_else(|e| Err(e.to_string()));
                    let _ = tx.send(Msg::History { spec_key, points });
                });
            }
            Command::LoadPresets => {
                let paths = self.env.paths.clone();
                tokio::spawn(async move {
                    let msg = tokio::task::spawn_blocking(move || {
                        let (entries, errors) = crate::preset::list(&paths);
                        Msg::Presets {
                            entries,
                            problems: errors.iter().map(|e| e.to_string()).collect(),
                        }
                    })
                    .await
                    .unwrap_or_else(|e| Msg::Presets {
                        entries: Vec::new(),
                        problems: vec![format!("listing the presets stopped: {e}")],
                    });
                    let _ = tx.send(msg);
                });
            }
            Command::Preset(op) => {
                let paths = self.env.paths.clone();
                tokio::spawn(async move {
                    let o = op.clone();
                    let result = tokio::task::spawn_blocking(move || match &o {
                        PresetOp::Save { preset, overwrite } => {
                            crate::preset::save(&paths, preset, *overwrite).map(|_| ())
                        }
                        PresetOp::Rename { from, to } => {
                            crate::preset::rename(&paths, from, to).map(|_| ())
                        }
                        PresetOp::Delete { name } => {
                            crate::preset::delete(&paths, name).map(|_| ())
                        }
                    })
                    .await
                    .unwrap_or_else(|e| {
                        Err(crate::preset::PresetError::Io {
                            path: PathBuf::new(),
                            message: format!("the preset change stopped: {e}"),
                        })
                    });
                    let _ = tx.send(Msg::PresetDone { op, result });
                });
            }
            Command::LoadRuns => {
                let path = self.env.history_file.clone();
                tokio::spawn(async move {
                    let msg = tokio::task::spawn_blocking(move || {
                        let (runs, warnings) = crate::history::read(&path);
                        Msg::Runs {
                            runs,
                            warnings: warnings.iter().map(|w| w.to_string()).collect(),
                        }
                    })
                    .await
                    .unwrap_or_else(|e| Msg::Runs {
                        runs: Vec::new(),
                        warnings: vec![format!("reading the history stopped: {e}")],
                    });
                    let _ = tx.send(msg);
                });
            }
            Command::Quit => {}
        }
    }

    /// Stop what still runs: the run is cancelled and given time to drop its tables.
    async fn shutdown(&mut self) {
        if let Some((cancel, task)) = self.probe.take() {
            cancel.cancel();
            let _ = timeout(Duration::from_secs(5), task).await;
        }
        if let Some((cancel, task)) = self.run.take() {
            cancel.cancel();
            if timeout(RUN_STOP_WAIT, task).await.is_err() {
                tracing::warn!("the run did not stop within {RUN_STOP_WAIT:?}; leaving anyway");
            }
        }
    }
}

/// The two disk probes, one after the other (blocking).
fn probes(
    dir: &std::path::Path,
    cancel: &CancellationToken,
    tx: &UnboundedSender<Msg>,
) -> Result<(probe::SeqWriteResult, probe::FsyncResult), ProbeError> {
    let report = |stage| {
        move |fraction: f64| {
            let _ = tx.send(Msg::Probe(ProbeMsg::Progress { stage, fraction }));
        }
    };
    let seq = probe::seq_write(
        &SeqWriteSpec {
            dir: dir.to_path_buf(),
            ..SeqWriteSpec::default()
        },
        cancel,
        &mut report(ProbeStage::SeqWrite),
    )?;
    let fsync = probe::fsync_latency(
        &FsyncSpec {
            dir: dir.to_path_buf(),
            ..FsyncSpec::default()
        },
        cancel,
        &mut report(ProbeStage::Fsync),
    )?;
    Ok((seq, fsync))
}

/// Read the server about once a second; reconnect with backoff when the session is lost.
async fn poll_server(
    target: Arc<Target>,
    mut client: Option<Client>,
    tx: UnboundedSender<Msg>,
    stop: CancellationToken,
) {
    let mut backoff = Duration::from_secs(1);
    let mut every = interval(SAMPLE_EVERY);
    every.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        if client.as_ref().is_none_or(|c| c.is_closed()) {
            client = match timeout(target.connect_timeout + QUERY_TIMEOUT, target.connect()).await {
                Ok(Ok(c)) => Some(c),
                Ok(Err(e)) => {
                    lost(&tx, e.to_string(), &mut backoff, &stop).await;
                    continue;
                }
                Err(_) => {
                    lost(
                        &tx,
                        "no answer to the connection attempt".into(),
                        &mut backoff,
                        &stop,
                    )
                    .await;
                    continue;
                }
            };
        }
        let Some(c) = &client else { continue };
        match timeout(QUERY_TIMEOUT, snapshot::read(c, &target)).await {
            Ok(Ok(s)) => {
                backoff = Duration::from_secs(1);
                if tx
                    .send(Msg::Server(ServerMsg::Snapshot(Box::new(s))))
                    .is_err()
                {
                    return;
                }
            }
            Ok(Err(e)) => {
                client = None;
                lost(&tx, e.to_string(), &mut backoff, &stop).await;
            }
            Err(_) => {
                client = None;
                lost(
                    &tx,
                    format!(
                        "the server did not answer within {} s",
                        QUERY_TIMEOUT.as_secs()
                    ),
                    &mut backoff,
                    &stop,
                )
                .await;
            }
        }
    }
}

async fn lost(
    tx: &UnboundedSender<Msg>,
    error: String,
    backoff: &mut Duration,
    stop: &CancellationToken,
) {
    tracing::info!("server reading failed: {error}; retrying in {backoff:?}");
    let _ = tx.send(Msg::Server(ServerMsg::Lost {
        error,
        retry_in: *backoff,
    }));
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = sleep(*backoff) => {}
    }
    *backoff = (*backoff * 2).min(BACKOFF_MAX);
}

/// Describe the host once, then sample it about once a second, off the async threads.
async fn sample_host(dir: Option<PathBuf>, tx: UnboundedSender<Msg>, stop: CancellationToken) {
    let d = dir.clone();
    let Ok((info, mut sampler)) = tokio::task::spawn_blocking(move || {
        (
            HostSnapshot::read(d.as_deref()),
            HostSampler::new(d.as_deref()),
        )
    })
    .await
    else {
        return;
    };
    let _ = tx.send(Msg::HostInfo(Box::new(info)));
    let mut every = interval(SAMPLE_EVERY);
    every.set_missed_tick_behavior(MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        let Ok((s, sample)) = tokio::task::spawn_blocking(move || {
            let sample = sampler.sample();
            (sampler, sample)
        })
        .await
        else {
            return;
        };
        sampler = s;
        if tx.send(Msg::HostSample(sample)).is_err() {
            return;
        }
    }
}
