//! The tune view's commands: start a tune on the parameters on screen (its events come back
//! as messages), stop it. The same engine as `pglab tune`: the state is saved for `pglab tune
//! --resume`, the script and report go to the current directory. Leaving pglab stops a running
//! tune and waits for the sandbox's settings to be put back.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::experiment::{RunOptions, preflight};
use crate::server::snapshot;
use crate::tui::msg::{Msg, TuneCmd, TuneMsg};
use crate::tune::budget::Budget;
use crate::tune::setup::{self, Fresh, SetupError};
use crate::tune::{End, Tuner, state};

/// The tune going on, if any.
#[derive(Default)]
pub struct Tuning {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

impl Tuning {
    pub fn exec(&mut self, cmd: TuneCmd, env: &Env, tx: UnboundedSender<Msg>) {
        match cmd {
            TuneCmd::Start {
                workload,
                spec,
                budget,
                settings,
                outputs,
            } => {
                // The default names, unless the user answered about them: never replaced
                // without asking.
                let outputs = match outputs {
                    Some(set) => set,
                    None => {
                        let taken = crate::outputs::tune("tune.sql".into(), None);
                        let existing = taken.existing();
                        if !existing.is_empty() {
                            let free = taken.free();
                            let start = TuneCmd::Start {
                                workload,
                                spec,
                                budget,
                                settings,
                                outputs: None,
                            };
                            let _ = tx.send(Msg::Tune(TuneMsg::OutputsTaken {
                                existing,
                                taken,
                                free,
                                start: Box::new(start),
                            }));
                            return;
                        }
                        taken
                    }
                };
                let cancel = CancellationToken::new();
                let c = cancel.clone();
                let run = RunOptions {
                    schema: env.schema.clone(),
                    recorder: Some(crate::history::recorder(env.history_file.clone())),
                    local_data_dir: env.local_data_dir.clone(),
                    probe_dir: env.probe_site.on_server_device(),
                    sandbox: env.sandbox.clone().filter(|_| env.target.is_sandbox()),
                    ..RunOptions::default()
                };
                let target = env.target.clone();
                let data_dir = env.paths.data_dir.clone();
                let fresh = Fresh {
                    workload,
                    spec: *spec,
                    note: None,
                    settings,
                    budget,
                    hardware: crate::tune::candidates::GivenHardware {
                        local: env.target.location.is_local(),
                        ..Default::default()
                    },
                };
                let task = tokio::spawn(async move {
                    let r = tune(target, fresh, run, &data_dir, &outputs, &tx, &c).await;
                    let _ = tx.send(Msg::Tune(TuneMsg::Done(r)));
                });
                self.running = Some((cancel, task));
            }
            TuneCmd::Cancel => {
                if let Some((cancel, _)) = &self.running {
                    cancel.cancel();
                }
            }
        }
    }

    /// Stop a running tune and give the sandbox time to get its settings back.
    pub async fn shutdown(&mut self) {
        if let Some((cancel, task)) = self.running.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(60), task).await;
        }
    }
}

async fn tune(
    target: std::sync::Arc<crate::server::Target>,
    fresh: Fresh,
    run: RunOptions,
    data_dir: &Path,
    outputs: &crate::outputs::OutputSet,
    tx: &UnboundedSender<Msg>,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let clock = Instant::now();
    let client = target.connect().await.map_err(|e| e.to_string())?;
    let server = snapshot::read(&client, &target)
        .await
        .map_err(|e| e.to_string())?;
    preflight::may_write(&server)?;
    let total = fresh.budget;
    let mut st = setup::new_state(
        &client,
        &server,
        &target.describe(),
        run.sandbox.is_some(),
        run.probe_dir.clone(),
        &run.schema,
        fresh,
    )
    .await
    .map_err(|e| match e {
        SetupError::Nothing(m) | SetupError::Failed(m) => m,
    })?;
    drop(client);
    let state_file = state::path(data_dir);
    let budget = Budget::since(clock, total, Duration::ZERO);
    let (etx, mut erx) = unbounded_channel();
    let fwd = tx.clone();
    let forward = tokio::spawn(async move {
        while let Some(e) = erx.recv().await {
            let _ = fwd.send(Msg::Tune(TuneMsg::Event(Box::new(e))));
        }
    });
    for n in &st.notes {
        let _ = etx.send(crate::tune::TuneEvent::Note(n.clone()));
    }
    let tuner = Tuner {
        target,
        rules: crate::tune::setup::rules(&st.spec),
        run,
        state_file: state_file.clone(),
        events: etx,
    };
    let end = tuner.run(&mut st, &budget, cancel).await;
    drop(tuner);
    let _ = forward.await;
    match end {
        End::Done => {
            let said = crate::report::tune::write_all(&st, &outputs.files[0], &outputs.files[1])?;
            state::remove(&state_file);
            Ok(said)
        }
        End::Cancelled => {
            Ok("stopped; what the tune learnt is saved: pglab tune --resume goes on".to_string())
        }
        End::Failed(e) => Err(format!(
            "the tune failed: {e}; what it learnt is saved: pglab tune --resume goes on"
        )),
    }
}
