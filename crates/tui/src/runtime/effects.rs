//! The command executor: carries out what `update` asks for (preflight, runs, probes, preset
//! and history I/O, cleanup) on tokio tasks, and reports back by message. Holds the run and
//! the probe that are going, so leaving can cancel them and wait for their cleanup.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::Env;
use super::strip;
use crate::experiment::{self, ExperimentSpec, RunOptions};
use crate::host::probe::{self, FsyncSpec, ProbeError, SeqWriteSpec};
use crate::server::ServerSnapshot;
use crate::tui::msg::{Command, Msg, PresetOp, ProbeMsg, ProbeStage, RunKind};

/// How long leaving waits for a cancelled run to finish its cleanup.
const RUN_STOP_WAIT: Duration = Duration::from_secs(20);

/// The data directory's run lock for `what`: taken at once, or waited for while another
/// pglab's run holds it (as `pglab run` waits), the run pane told who holds it and that Esc
/// stops waiting. None: `stop` came first, or the lock could not be taken (the pane told).
async fn lock_waiting(
    data_dir: &std::path::Path,
    what: &str,
    stop: &CancellationToken,
    tx: &UnboundedSender<Msg>,
) -> Option<crate::experiment::lab::data_dir_lock::RunLock> {
    use crate::experiment::lab::data_dir_lock::{LockError, wait_for};
    let t = tx.clone();
    let said = move |e: &LockError| {
        let _ = t.send(Msg::Run(experiment::RunEvent::Note(e.waiting("Esc"))));
    };
    match wait_for(data_dir, what, stop, said).await {
        Ok(Some(lock)) => Some(lock),
        Ok(None) => {
            let _ = tx.send(Msg::RunRefused(
                "stopped waiting for the other pglab's run".into(),
            ));
            None
        }
        Err(e) => {
            let _ = tx.send(Msg::RunRefused(e.to_string()));
            None
        }
    }
}

/// Carries out commands; holds what is running.
pub(crate) struct Effects {
    env: Env,
    tx: UnboundedSender<Msg>,
    run: Option<(CancellationToken, JoinHandle<()>)>,
    probe: Option<(CancellationToken, JoinHandle<()>)>,
    import: super::import::Importer,
    tune: super::tune::Tuning,
    capture: super::capture::Capturer,
}

impl Effects {
    pub(crate) fn new(env: Env, tx: UnboundedSender<Msg>) -> Effects {
        Effects {
            env,
            tx,
            run: None,
            probe: None,
            import: Default::default(),
            tune: Default::default(),
            capture: Default::default(),
        }
    }

    /// Carry out one command; what takes time runs on its own task and answers by message.
    pub(crate) fn exec(&mut self, cmd: Command) {
        let tx = self.tx.clone();
        match cmd {
            Command::Preflight { spec, kind, server } => self.preflight(spec, kind, server, tx),
            Command::StartRun { spec, preset } => self.start_run(spec, preset, tx),
            Command::CancelRun => {
                if let Some((cancel, _)) = &self.run {
                    cancel.cancel();
                }
            }
            Command::StartProbe => self.start_probe(tx),
            Command::StartCapture => self.capture.start(&self.env, tx),
            Command::CancelCapture => self.capture.cancel(),
            Command::StartWindow => self.capture.start_window(&self.env, tx),
            Command::CompareWindows => super::verify::spawn(&self.env.paths.data_dir, tx),
            Command::CancelProbe => {
                if let Some((cancel, _)) = &self.probe {
                    cancel.cancel();
                }
            }
            Command::FindLeftovers => self.find_leftovers(tx),
            Command::CleanLeftovers(objects) => self.clean_leftovers(objects, tx),
            Command::LoadHistory { spec_key, spec } => self.load_history(spec_key, spec, tx),
            Command::LoadPresets => self.load_presets(tx),
            Command::Preset(op) => self.preset(op, tx),
            Command::LoadRuns => self.load_runs(tx),
            Command::Import(c) => self.import.exec(c, &self.env, tx),
            Command::Tune(c) => self.tune.exec(c, &self.env, tx),
            Command::WriteReport { run_id } => {
                super::report::spawn(self.env.history_file.clone(), run_id, tx)
            }
            Command::Quit => {}
        }
    }

    /// Check free space and connection slots, then pass the engine's one gate (the same
    /// `pglab run` passes) before a run.
    fn preflight(
        &self,
        spec: Box<ExperimentSpec>,
        kind: RunKind,
        server: Option<Box<ServerSnapshot>>,
        tx: UnboundedSender<Msg>,
    ) {
        let road = super::prepare::Road {
            target: self.env.target.clone(),
            sandbox: self.env.sandbox.clone(),
            schema: self.env.schema.clone(),
            local_data_dir: self.env.local_data_dir.clone(),
        };
        tokio::spawn(async move {
            // Another pglab running with this data directory is waited for when the run
            // starts, as `pglab run` waits (see `start_run`).
            let verdict = super::prepare::verdict(&road, &spec, server.as_deref()).await;
            let _ = tx.send(Msg::Preflight {
                spec,
                kind,
                verdict: Box::new(verdict),
            });
        });
    }

    /// Spawn the run and pass its events on until the final one; kept so it can be cancelled.
    fn start_run(
        &mut self,
        spec: Box<ExperimentSpec>,
        preset: Option<String>,
        tx: UnboundedSender<Msg>,
    ) {
        let opts = RunOptions {
            preset,
            schema: self.env.schema.clone(),
            recorder: Some(crate::history::recorder(self.env.history_file.clone())),
            local_data_dir: self.env.local_data_dir.clone(),
            probe_dir: self.env.probe_site.on_server_device(),
            sandbox: self.env.sandbox.clone(),
            ..RunOptions::default()
        };
        let what = format!("a run of {} from the TUI", spec.kind());
        let (target, data_dir) = (self.env.target.clone(), self.env.paths.data_dir.clone());
        // Esc (cancel) stops the wait for the data directory's lock, then the run.
        let stop = CancellationToken::new();
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let Some(lock) = lock_waiting(&data_dir, &what, &s, &tx).await else {
                return;
            };
            let mut handle = experiment::spawn(target, *spec, opts);
            // Held until the run's last event: the run's cleanup is over by then.
            let _lock = lock;
            let mut forwarded = false;
            loop {
                let ev = tokio::select! {
                    ev = handle.events.recv() => ev,
                    _ = s.cancelled(), if !forwarded => {
                        forwarded = true;
                        handle.cancel.cancel();
                        continue;
                    }
                };
                let Some(ev) = ev else { break };
                let last = ev.is_final();
                let _ = tx.send(Msg::Run(ev));
                if last {
                    return;
                }
            }
            let _ = tx.send(Msg::RunClosed);
        });
        self.run = Some((stop, task));
    }

    /// Run the disk probes off the async threads; kept so they can be cancelled.
    fn start_probe(&mut self, tx: UnboundedSender<Msg>) {
        let cancel = CancellationToken::new();
        let dir = self.env.probe_site.dir.clone();
        let device = self.env.probe_site.device.clone();
        let data_dir = self.env.paths.data_dir.clone();
        let c = cancel.clone();
        let task = tokio::spawn(async move {
            let ptx = tx.clone();
            let d = dir.clone();
            let r = tokio::task::spawn_blocking(move || probes(&d, &c, &ptx)).await;
            let msg = match r {
                Ok(Ok(res)) => {
                    // Kept for the next start, with its date and the device it measured.
                    let saved = super::probe_saved::SavedProbe {
                        at: chrono::Utc::now(),
                        dir,
                        device,
                        seq: res.0.clone(),
                        fsync: res.1.clone(),
                    };
                    if let Err(e) = super::probe_saved::save(&data_dir, &saved) {
                        tracing::warn!("could not keep the disk probe: {e}");
                    }
                    ProbeMsg::Done(Ok(res))
                }
                Ok(Err(ProbeError::Cancelled)) => ProbeMsg::Cancelled,
                Ok(Err(e)) => ProbeMsg::Done(Err(e.to_string())),
                Err(e) => ProbeMsg::Done(Err(format!("the probe stopped: {e}"))),
            };
            let _ = tx.send(Msg::Probe(msg));
        });
        self.probe = Some((cancel, task));
    }

    /// Look for what interrupted runs left behind (datasets and live objects aside); a server
    /// that does not answer within ten seconds is not asked again.
    fn find_leftovers(&self, tx: UnboundedSender<Msg>) {
        let (target, schema) = (self.env.target.clone(), self.env.schema.clone());
        tokio::spawn(async move {
            let found = async {
                let c = target.connect().await.ok()?;
                crate::experiment::lab::leftovers::lab_objects(&c, &schema)
                    .await
                    .ok()
            };
            if let Ok(Some(objects)) =
                tokio::time::timeout(std::time::Duration::from_secs(10), found).await
            {
                let leftovers = objects
                    .into_iter()
                    .filter(|o| {
                        !o.live
                            && o.kind != crate::experiment::lab::leftovers::LabObjectKind::Dataset
                    })
                    .collect();
                let _ = tx.send(Msg::Leftovers(leftovers));
            }
        });
    }

    /// Drop the leftovers the user chose.
    fn clean_leftovers(
        &self,
        objects: Vec<crate::experiment::lab::leftovers::LabObject>,
        tx: UnboundedSender<Msg>,
    ) {
        let (target, schema) = (self.env.target.clone(), self.env.schema.clone());
        tokio::spawn(async move {
            let r = match target.connect().await {
                Ok(c) => {
                    crate::experiment::lab::leftovers::drop_objects(&c, &schema, &objects).await
                }
                Err(e) => Err(e.to_string()),
            };
            let _ = tx.send(Msg::Cleaned(r));
        });
    }

    /// Read this spec's past runs on this host from the history (blocking, off the async
    /// threads).
    fn load_history(&self, spec_key: String, spec: Box<ExperimentSpec>, tx: UnboundedSender<Msg>) {
        let path = self.env.history_file.clone();
        tokio::spawn(async move {
            let past = tokio::task::spawn_blocking(move || {
                strip::past(&path, &spec, &crate::host::hostname())
            })
            .await
            .unwrap_or_else(|e| Err(e.to_string()));
            let _ = tx.send(Msg::History { spec_key, past });
        });
    }

    /// List the presets and the problems met reading them.
    fn load_presets(&self, tx: UnboundedSender<Msg>) {
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

    /// Save, rename or delete a preset; the answer carries the operation back.
    fn preset(&self, op: PresetOp, tx: UnboundedSender<Msg>) {
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
                PresetOp::Delete { name } => crate::preset::delete(&paths, name).map(|_| ()),
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

    /// Read the whole history and the warnings met reading it.
    fn load_runs(&self, tx: UnboundedSender<Msg>) {
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

    /// Stop what still runs: the run is cancelled and given time to drop its tables.
    pub(crate) async fn shutdown(&mut self) {
        self.import.shutdown().await;
        self.tune.shutdown().await;
        self.capture.shutdown().await;
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
