//! The tune view's commands: start a tune on the parameters on screen (its events come back
//! as messages), stop it. The same session as `pglab tune` ([`crate::tune::session`]): the
//! state is saved for `pglab tune --resume`, the script and report go to the current
//! directory. Leaving pglab stops a running tune and waits for the sandbox's settings to be
//! put back.

use std::time::{Duration, Instant};

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::experiment::RunOptions;
use crate::report::tune_files::TuneFiles;
use crate::tui::msg::{Msg, TuneCmd, TuneMsg};
use crate::tune::session::{self, Finish, Ready, Refused, Request, Start};
use crate::tune::setup::Fresh;
use crate::tune::{TuneEvent, state};

/// The tune going on, if any.
#[derive(Default)]
pub(crate) struct Tuning {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

impl Tuning {
    pub(crate) fn exec(&mut self, cmd: TuneCmd, env: &Env, tx: UnboundedSender<Msg>) {
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
                let req = Request {
                    target: env.target.clone(),
                    start: Start::Fresh(Box::new(Fresh {
                        workload,
                        spec: *spec,
                        note: None,
                        settings,
                        budget,
                        hardware: crate::tune::candidates::GivenHardware::default(),
                    })),
                    run: RunOptions {
                        schema: env.schema.clone(),
                        recorder: Some(crate::history::recorder(env.history_file.clone())),
                        local_data_dir: env.local_data_dir.clone(),
                        probe_dir: env.probe_site.on_server_device(),
                        sandbox: env.sandbox.clone().filter(|_| env.target.is_sandbox()),
                        ..RunOptions::default()
                    },
                    state_file: state::path(&env.paths.data_dir),
                    budget: None,
                    max_memory: None,
                    clock: Instant::now(),
                    outputs: Box::new(TuneFiles {
                        script: outputs.files[0].clone(),
                        report: outputs.files[1].clone(),
                    }),
                };
                let task = tokio::spawn(async move {
                    let r = tune(req, &tx, &c).await;
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
    pub(crate) async fn shutdown(&mut self) {
        if let Some((cancel, task)) = self.running.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(60), task).await;
        }
    }
}

/// The tune session with its events forwarded as messages; its end as the view says it.
async fn tune(
    req: Request,
    tx: &UnboundedSender<Msg>,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let (etx, mut erx) = unbounded_channel();
    let fwd = tx.clone();
    let forward = tokio::spawn(async move {
        while let Some(e) = erx.recv().await {
            let _ = fwd.send(Msg::Tune(TuneMsg::Event(Box::new(e))));
        }
    });
    let notes = etx.clone();
    let ready = move |r: Ready| {
        for n in r.notes {
            let _ = notes.send(TuneEvent::Note(n));
        }
    };
    let finish = session::run(req, ready, etx, cancel).await;
    let _ = forward.await;
    match finish {
        Err(Refused::Usage(m) | Refused::Failed(m)) => Err(m),
        Ok(Finish::Done { said, .. }) => Ok(said),
        Ok(Finish::Cancelled { .. }) => {
            Ok("stopped; what the tune learnt is saved: pglab tune --resume goes on".to_string())
        }
        Ok(Finish::Failed(e)) => Err(format!(
            "the tune failed: {e}; what it learnt is saved: pglab tune --resume goes on"
        )),
    }
}
