//! An import from start to end, the one sequence both front ends run: open the source (its
//! conninfo resolved, its sessions named, connected once so a password asked for is known),
//! then run the import into the sandbox — its free disk checked, its `imports.json` rewritten —
//! passing its phases, progress and notes on and relaying a cancel, and say how it ended.
//! `pglab sandbox import` and the TUI's import dialog only choose how to show its events
//! ([`ImportEvent`]), its end ([`Finish`]) and its refusals ([`Refused`], [`SourceError`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::{ImportEvent, ImportOptions, ImportReport, ImportSpec};
use crate::server::connect::AskPassword;
use crate::server::{Target, TargetError, conninfo};

/// The name an import's sessions on the source carry, unless its conninfo names one.
pub const APPLICATION: &str = "pglab import";

/// Why the source could not be opened.
#[derive(Debug)]
pub enum SourceError {
    /// The conninfo does not name a server pglab can use (bad input).
    Conninfo(TargetError),
    /// The server did not take the session.
    Connect(TargetError),
}

/// A server of the DBA's as a target, connected once (asking with `ask` when it wants a
/// password, so the sessions after know it); its sessions say `application` unless the
/// conninfo names one.
pub async fn open_source(
    conninfo: &str,
    application: &str,
    ask: Option<&AskPassword>,
) -> Result<(Arc<Target>, Client), SourceError> {
    let mut params =
        conninfo::resolve(Some(conninfo), &conninfo::ProcessEnv).map_err(SourceError::Conninfo)?;
    if params.application_name == "pglab" {
        params.application_name = application.into();
    }
    let target = Arc::new(Target::new(params, false).map_err(SourceError::Conninfo)?);
    let client = target
        .connect_first(ask)
        .await
        .map_err(SourceError::Connect)?;
    Ok((target, client))
}

/// Everything an import needs.
pub struct Request {
    /// The server to read from, opened by [`open_source`].
    pub source: Arc<Target>,
    /// pglab's sandbox, the tables go there.
    pub sandbox: Arc<Target>,
    /// The sandbox's directory: its filesystem's free space is checked before anything is
    /// written, its `imports.json` rewritten after (None: neither).
    pub sandbox_dir: Option<PathBuf>,
    pub spec: ImportSpec,
}

/// Why an import was refused: bad input the user can fix (an unknown table, no permission, a
/// type pglab cannot make, not enough disk). Nothing was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused(pub String);

/// How an import that was not refused ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    /// Every table is in the sandbox, with its record.
    Done(Box<ImportReport>),
    /// Stopped by the user: the sandbox's transaction was rolled back.
    Cancelled,
    /// Failed: the sandbox's transaction was rolled back.
    Failed(String),
    /// The import's task ended without saying how (it panicked: see the log).
    Lost,
}

/// Run an import: its phases, progress and notes on `events` (progress may be dropped under
/// load; the end is returned, never sent). A cancel of `cancel` rolls the sandbox's
/// transaction back.
pub async fn run(
    req: Request,
    events: UnboundedSender<ImportEvent>,
    cancel: &CancellationToken,
) -> Result<Finish, Refused> {
    let options = options(req.sandbox_dir.as_deref());
    let mut import = super::spawn(req.source, req.sandbox, req.spec, options);
    loop {
        tokio::select! {
            _ = cancel.cancelled(), if !import.cancel.is_cancelled() => import.cancel.cancel(),
            ev = import.events.recv() => {
                let Some(ev) = ev else {
                    return Ok(Finish::Lost);
                };
                if let Some(end) = pass_on(ev, &events) {
                    return end;
                }
            }
        }
    }
}

/// What the import writes besides the tables, from the sandbox's directory.
fn options(dir: Option<&Path>) -> ImportOptions {
    ImportOptions {
        free_bytes: dir.and_then(crate::host::free_bytes),
        cache_file: dir.map(|d| d.join("imports.json")),
    }
}

/// The end an event says; any other event is passed on (None).
fn pass_on(
    ev: ImportEvent,
    events: &UnboundedSender<ImportEvent>,
) -> Option<Result<Finish, Refused>> {
    match ev {
        ImportEvent::Finished(r) => Some(Ok(Finish::Done(r))),
        ImportEvent::Cancelled => Some(Ok(Finish::Cancelled)),
        ImportEvent::Failed {
            error,
            refused: true,
        } => Some(Err(Refused(error))),
        ImportEvent::Failed {
            error,
            refused: false,
        } => Some(Ok(Finish::Failed(error))),
        ev @ (ImportEvent::Phase(_) | ImportEvent::Progress(_) | ImportEvent::Note(_)) => {
            let _ = events.send(ev);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::unbounded_channel;

    #[test]
    fn the_end_is_returned_and_the_rest_passed_on() {
        let (tx, mut rx) = unbounded_channel();
        assert_eq!(pass_on(ImportEvent::Phase("copying".into()), &tx), None);
        assert_eq!(pass_on(ImportEvent::Note("n".into()), &tx), None);
        assert_eq!(
            pass_on(ImportEvent::Cancelled, &tx),
            Some(Ok(Finish::Cancelled))
        );
        let failed = |refused| ImportEvent::Failed {
            error: "e".into(),
            refused,
        };
        assert_eq!(pass_on(failed(true), &tx), Some(Err(Refused("e".into()))));
        assert_eq!(
            pass_on(failed(false), &tx),
            Some(Ok(Finish::Failed("e".into())))
        );
        drop(tx);
        let mut passed = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            passed.push(ev);
        }
        assert_eq!(
            passed,
            [
                ImportEvent::Phase("copying".into()),
                ImportEvent::Note("n".into())
            ]
        );
    }

    #[test]
    fn the_sandbox_directory_holds_the_cache_and_is_checked_for_space() {
        let none = options(None);
        assert_eq!((none.free_bytes, none.cache_file), (None, None));
        let dir = std::env::temp_dir();
        let o = options(Some(&dir));
        assert_eq!(o.cache_file, Some(dir.join("imports.json")));
        assert!(o.free_bytes.is_some());
    }
}
