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
use crate::experiment::lab::preflight;
use crate::experiment::{self, ExperimentSpec, RunOptions};
use crate::host::probe::{self, FsyncSpec, ProbeError, SeqWriteSpec};
use crate::server::ServerSnapshot;
use crate::tui::msg::{Command, Msg, PresetOp, ProbeMsg, ProbeStage, RunKind};

/// How long leaving waits for a cancelled run to finish its cleanup.
const RUN_STOP_WAIT: Duration = Duration::from_secs(20);

/// Carries out commands; holds what is running.
pub struct Effects {
    env: Env,
    tx: UnboundedSender<Msg>,
    run: Option<(CancellationToken, JoinHandle<()>)>,
    probe: Option<(CancellationToken, JoinHandle<()>)>,
    import: super::import::Importer,
    tune: super::tune::Tuning,
    capture: super::capture::Capturer,
}

impl Effects {
    pub fn new(env: Env, tx: UnboundedSender<Msg>) -> Effects {
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
    pub fn exec(&mut self, cmd: Command) {
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
            Command::Quit => {}
        }
    }

    /// Check free space and connection slots (and a query spec's statements) before a run.
    fn preflight(
        &self,
        spec: Box<ExperimentSpec>,
        kind: RunKind,
        server: Option<Box<ServerSnapshot>>,
        tx: UnboundedSender<Msg>,
    ) {
        let dir = self.env.local_data_dir.clone();
        let target = self.env.target.clone();
        let schema = self.env.schema.clone();
        let on_sandbox = self.env.sandbox.is_some() && target.is_sandbox();
        tokio::spawn(async move {
            let free =
                tokio::task::spawn_blocking(move || preflight::free_space(dir.as_deref(), None))
                    .await
                    .ok()
                    .flatten();
            let mut verdict =
                preflight::preflight(&spec, free, server.as_deref(), preflight::CONFIRM_ABOVE);
            // The query experiment's statements are checked by the server before a
            // run, as `pglab run query` checks them: bad SQL is a sentence, not a run.
            if let crate::experiment::ExperimentSpec::Query(q) = spec.as_ref()
                && verdict.refuse.is_none()
                && let Some(why) = query_problems(&target, q, &schema, on_sandbox).await
            {
                verdict.refuse = Some(why);
            }
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

    /// Run the disk probes off the async threads; kept so they can be cancelled.
    fn start_probe(&mut self, tx: UnboundedSender<Msg>) {
        let cancel = CancellationToken::new();
        let dir = self.env.probe_site.dir.clone();
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
    pub async fn shutdown(&mut self) {
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

/// What is wrong with a query spec on this server (None: nothing, or the server cannot be
/// asked now: the run then says it).
async fn query_problems(
    target: &crate::server::Target,
    q: &crate::experiment::query::QuerySpec,
    schema: &str,
    on_sandbox: bool,
) -> Option<String> {
    use crate::experiment::query::precheck;
    let mut problems = precheck::check_spec(q, on_sandbox);
    if problems.is_empty()
        && let Ok(c) = target.connect().await
    {
        problems = precheck::check_on_server(&c, q, schema, on_sandbox, false).await;
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}
