//! The capture key's work: read the target's top statements (`pg_stat_statements`, and a
//! short sample of `pg_stat_activity` for their values) as `pglab capture` does, write the
//! workload into pglab's data directory, and report back. Cancel ends the sample early (the
//! capture goes on with what was seen); leaving pglab stops it.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Env;
use crate::capture::{self, CaptureSpec, Pick};
use crate::tui::msg::{CaptureDone, CaptureMsg, Msg};

/// How long the key samples `pg_stat_activity` (the command's default).
pub const SAMPLE: Duration = Duration::from_secs(10);
/// Statements the key keeps (the command's default).
pub const TOP: usize = 20;

/// The capture going on, if any.
#[derive(Default)]
pub struct Capturer {
    running: Option<(CancellationToken, JoinHandle<()>)>,
}

impl Capturer {
    pub fn start(&mut self, env: &Env, tx: UnboundedSender<Msg>) {
        let stop = CancellationToken::new();
        let (target, dir) = (env.target.clone(), env.paths.data_dir.join("captures"));
        let s = stop.clone();
        let task = tokio::spawn(async move {
            let result = async {
                let client = target
                    .connect()
                    .await
                    .map_err(|e| format!("cannot connect to the target: {e}"))?;
                let spec = CaptureSpec {
                    pick: Pick::Top(TOP),
                    sample: SAMPLE,
                };
                let progress_tx = tx.clone();
                let cap = capture::capture(&client, &spec, &s, &mut |seen, t| {
                    let _ = progress_tx.send(Msg::Capture(CaptureMsg::Progress {
                        seen,
                        seconds: t.as_secs_f64(),
                    }));
                })
                .await?;
                nothing_to_capture(&cap)?;
                let path = write(&dir, &cap)?;
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
    pub fn cancel(&self) {
        if let Some((stop, _)) = &self.running {
            stop.cancel();
        }
    }

    pub async fn shutdown(&mut self) {
        if let Some((stop, task)) = self.running.take() {
            stop.cancel();
            task.abort();
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

/// A capture that found no statement writes no file: the reason instead (where the statements
/// would have come from, and how to get `pg_stat_statements` when it is missing).
fn nothing_to_capture(cap: &capture::Capture) -> Result<(), String> {
    if !cap.statements.is_empty() {
        return Ok(());
    }
    Err(if cap.from_statements {
        format!(
            "nothing to capture from {}: pg_stat_statements holds no statement a replay can run ({} passed over: transaction control, settings, DDL)",
            cap.database, cap.other
        )
    } else {
        format!(
            "nothing to capture from {}: no other session ran a statement during the {:.0} s sample, and {}",
            cap.database,
            cap.sample_seconds,
            capture::statements::ENABLE
        )
    })
}

/// `captures/<database>-<UTC time>.sql`, written atomically.
fn write(dir: &std::path::Path, cap: &capture::Capture) -> Result<PathBuf, String> {
    crate::paths::private_dir(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let now = chrono::Utc::now();
    let safe: String = cap
        .database
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let path = dir.join(format!("{safe}-{}.sql", now.format("%Y%m%d-%H%M%S")));
    let text = capture::file::render(cap, &now.format("%Y-%m-%d %H:%M UTC").to_string());
    crate::paths::write_atomic(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_capture_is_a_reason_not_a_file() {
        let empty = capture::Capture {
            database: "pglab".into(),
            sample_seconds: 10.0,
            ..Default::default()
        };
        let e = nothing_to_capture(&empty).unwrap_err();
        assert!(
            e.contains("no other session ran a statement during the 10 s sample")
                && e.contains("shared_preload_libraries"),
            "{e}"
        );
        let from_statements = capture::Capture {
            from_statements: true,
            other: 4,
            ..empty
        };
        assert!(
            nothing_to_capture(&from_statements)
                .unwrap_err()
                .contains("4 passed over")
        );
    }
}
