//! The import dialog's commands: list a server's tables, run an import into the sandbox (its
//! events come back as messages), cancel it. Leaving pglab cancels a running import and waits
//! for the sandbox's transaction to roll back.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::import::{self, ImportOptions, source};
use crate::server::{Target, TargetError, conninfo};
use crate::tui::msg::{ImportCmd, ImportMsg, Msg};

/// The import going on, if any.
#[derive(Default)]
pub struct Importer {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

/// The source as a target, connected once (no prompt: the TUI owns the terminal).
async fn open_source(conninfo: &str) -> Result<(Arc<Target>, tokio_postgres::Client), String> {
    let mut params =
        conninfo::resolve(Some(conninfo), &conninfo::ProcessEnv).map_err(|e| e.to_string())?;
    if params.application_name == "pglab" {
        params.application_name = "pglab import".into();
    }
    let target = Arc::new(Target::new(params, false).map_err(|e| e.to_string())?);
    match target.connect().await {
        Ok(c) => Ok((target, c)),
        Err(TargetError::NeedPassword) => Err(
            "the server wants a password and none is known: put it in ~/.pgpass or PGPASSWORD, or password=… in the conninfo (pglab never saves it)".into(),
        ),
        Err(e) => Err(e.to_string()),
    }
}

impl Importer {
    pub fn exec(&mut self, cmd: ImportCmd, env: &Env, tx: UnboundedSender<Msg>) {
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
                    let _ = tx.send(Msg::Import(ImportMsg::Event(import::ImportEvent::Failed {
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
                    let source = match open_source(&conninfo).await {
                        Ok((t, _)) => t,
                        Err(error) => {
                            let _ = tx.send(Msg::Import(ImportMsg::Event(
                                import::ImportEvent::Failed {
                                    error,
                                    refused: true,
                                },
                            )));
                            return;
                        }
                    };
                    let opts = ImportOptions {
                        free_bytes: crate::host::free_bytes(&sandbox.root),
                        cache_file: Some(sandbox.root.join("imports.json")),
                    };
                    let mut h = import::spawn(source, target, spec, opts);
                    loop {
                        tokio::select! {
                            _ = c.cancelled(), if !h.cancel.is_cancelled() => h.cancel.cancel(),
                            ev = h.events.recv() => {
                                let Some(ev) = ev else { return };
                                let last = matches!(
                                    ev,
                                    import::ImportEvent::Finished(_)
                                        | import::ImportEvent::Failed { .. }
                                        | import::ImportEvent::Cancelled
                                );
                                let _ = tx.send(Msg::Import(ImportMsg::Event(ev)));
                                if last {
                                    return;
                                }
                            }
                        }
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
    pub async fn shutdown(&mut self) {
        if let Some((cancel, task)) = self.running.take() {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(20), task).await;
        }
    }
}
