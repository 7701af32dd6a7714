//! The capture key's work: read the target's top statements (`pg_stat_statements`, and a
//! short sample of `pg_stat_activity` for their values) as `pglab capture` does, write the
//! workload into pglab's data directory, and report back. Cancel ends the sample early (the
//! capture goes on with what was seen); leaving pglab stops it.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::capture::session::{self, Destination};
use crate::capture::{CaptureSpec, Pick};
use crate::tui::msg::{CaptureDone, CaptureMsg, Msg};

/// How long the key samples `pg_stat_activity` (the command's default).
pub(crate) const SAMPLE: Duration = Duration::from_secs(10);
/// Statements the key keeps (the command's default).
pub(crate) const TOP: usize = 20;
/// The longest window the window key records (the key again or Esc ends it sooner).
pub(crate) const WINDOW: Duration = Duration::from_secs(crate::tui::update_capture::WINDOW_S);

/// The capture going on, if any.
#[derive(Default)]
pub(crate) struct Capturer {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

impl Capturer {
    /// The capture key's: a workload into the data directory's `captures`.
    pub(crate) fn start(&mut self, env: &Env, tx: UnboundedSender<Msg>) {
        self.spawn(env, tx, SAMPLE, env.paths.data_dir.join("captures"));
    }

    /// The window key's: the same capture, its window kept in the data directory's
    /// `windows` (what the verify key compares), up to [`WINDOW`] long.
    pub(crate) fn start_window(&mut self, env: &Env, tx: UnboundedSender<Msg>) {
        self.spawn(
            env,
            tx,
            WINDOW,
            super::verify::windows_dir(&env.paths.data_dir),
        );
    }

    fn spawn(
        &mut self,
        env: &Env,
        tx: UnboundedSender<Msg>,
        sample: Duration,
        dir: std::path::PathBuf,
    ) {
        let stop = CancellationToken::new();
        let target = env.target.clone();
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let result = async {
                let client = target
                    .connect()
                    .await
                    .map_err(|e| format!("cannot connect to the target: {e}"))?;
                let spec = CaptureSpec {
                    pick: Pick::Top(TOP),
                    sample,
                    since_reset: false,
                };
                let progress_tx = tx.clone();
                let done = session::run(
                    &client,
                    &spec,
                    &s,
                    &mut |seen, t| {
                        let _ = progress_tx.send(Msg::Capture(CaptureMsg::Progress {
                            seen,
                            seconds: t.as_secs_f64(),
                        }));
                    },
                    Destination::Dir(dir),
                )
                .await?;
                let (cap, path) = (done.capture, done.path);
                Ok(CaptureDone {
                    written: cap.statements.iter().filter(|x| x.sql.is_some()).count(),
                    captured: cap.statements.len(),
                    coverage: cap.coverage,
                    from_statements: cap.from_statements,
                    database: cap.database.clone(),
                    path,
                })
            }
            .await;
            let _ = tx.send(Msg::Capture(CaptureMsg::Done(result)));
        });
        self.running = Some((stop, task));
    }

    /// End the sample early: the capture goes on with what was seen.
    pub(crate) fn cancel(&self) {
        if let Some((stop, _)) = &self.running {
            stop.cancel();
        }
    }

    pub(crate) async fn shutdown(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            stop.cancel();
            task.abort();
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}
