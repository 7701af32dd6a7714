//! The import dialog's commands: list a server's tables, run an import into the sandbox (its
//! events come back as messages), cancel it. The same session as `pglab sandbox import`
//! ([`crate::import::session`]). Leaving pglab cancels a running import and waits for the
//! sandbox's transaction to roll back.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::import::session::{self, Finish, Refused, Request, SourceError};
use crate::import::{ImportEvent, ImportSpec, source};
use crate::server::{Target, TargetError};
use crate::tui::msg::{ImportCmd, ImportMsg, Msg};

/// The import going on, if any.
#[derive(Default)]
pub(crate) struct Importer {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

/// The source as a target, connected once (no prompt: the TUI owns the terminal); why not,
/// as the dialog says it.
async fn open_source(conninfo: &str) -> Result<(Arc<Target>, tokio_postgres::Client), String> {
    session::open_source(conninfo, session::APPLICATION, None)
        .await
        .map_err(|e| match e {
            SourceError::Connect(TargetError::NeedPassword) => {
                "the server wants a password and none is known: put it in ~/.pgpass or PGPASSWORD, or password=… in the conninfo (pglab never saves it)".into()
            }
            SourceError::Conninfo(e) | SourceError::Connect(e) => e.to_string(),
        })
}

impl Importer {
    pub(crate) fn exec(&mut self, cmd: ImportCmd, env: &Env, tx: UnboundedSender<Msg>) {
        match cmd {
            ImportCmd::List { conninfo } => {
                tokio::spawn(async move {
                    let r = match open_source(&conninfo).await {
                        Ok((_, c)) => source::list_tables(&c).await,
                        Err(e) => Err(e),
                    };
                    let _ = tx.send(Msg::Import(ImportMsg::Tables(r)));
                });
            }
            ImportCmd::Start { conninfo, spec } => {
                let Some(sandbox) = env.sandbox.clone().filter(|_| env.target.is_sandbox()) else {
                    let _ = tx.send(Msg::Import(ImportMsg::Event(ImportEvent::Failed {
                        error: "import fills pglab's sandbox, and this pglab is not using it"
                            .into(),
                        refused: true,
                    })));
                    return;
                };
                let target = env.target.clone();
                let cancel = CancellationToken::new();
                let c = cancel.clone();
                let task = tokio::spawn(async move {
                    if let Some(end) = import(&conninfo, target, sandbox.root, spec, &tx, &c).await
                    {
                        let _ = tx.send(Msg::Import(ImportMsg::Event(end)));
                    }
                });
                self.running = Some((cancel, task));
            }
            ImportCmd::Cancel => {
                if let Some((cancel, _)) = &self.running {
                    cancel.cancel();
                }
            }
        }
    }

    /// Cancel a running import and give the sandbox time to roll it back.
    pub(crate) async fn shutdown(&mut self) {
        if let Some((cancel, task)) = self.running.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(20), task).await;
        }
    }
}

/// The import session into the sandbox (its directory `dir`) with its events forwarded as
/// messages; its end as the event the dialog shows (None: the import ended without saying
/// how, and the dialog hears nothing more).
async fn import(
    conninfo: &str,
    sandbox: Arc<Target>,
    dir: PathBuf,
    spec: ImportSpec,
    tx: &UnboundedSender<Msg>,
    cancel: &CancellationToken,
) -> Option<ImportEvent> {
    let source = match open_source(conninfo).await {
        Ok((t, _)) => t,
        Err(error) => {
            return Some(ImportEvent::Failed {
                error,
                refused: true,
            });
        }
    };
    let (etx, mut erx) = unbounded_channel();
    let fwd = tx.clone();
    let forward = tokio::spawn(async move {
        while let Some(e) = erx.recv().await {
            let _ = fwd.send(Msg::Import(ImportMsg::Event(e)));
        }
    });
    let req = Request {
        source,
        sandbox,
        sandbox_dir: Some(dir),
        spec,
    };
    let end = session::run(req, etx, cancel).await;
    let _ = forward.await;
    match end {
        Ok(Finish::Done(r)) => Some(ImportEvent::Finished(r)),
        Ok(Finish::Cancelled) => Some(ImportEvent::Cancelled),
        Ok(Finish::Failed(error)) => Some(ImportEvent::Failed {
            error,
            refused: false,
        }),
        Err(Refused(error)) => Some(ImportEvent::Failed {
            error,
            refused: true,
        }),
        // The import's task ended without an end (a panic): the dialog says so instead of
        // staying on "running" for good.
        Ok(Finish::Lost) => Some(ImportEvent::Failed {
            error: "the import stopped without saying why (see the log)".into(),
            refused: false,
        }),
    }
}
