//! Standby faults as experiments (`--standby-fault`): during each trial, beside its clients,
//! the sandbox's synchronous standby stops (`stop-at=10s,for=5s`: its server and its relay
//! stopped with `pg_ctl stop -m fast`, started again after `for`) or stops applying WAL
//! (`pause-replay-at=10s,for=5s`: `pg_wal_replay_pause()`, resumed after). Without `for` the
//! fault lasts until the trial's time limit (`duration`), which a spec must then have: a
//! commit waiting for a standby that never comes back would never let the trial end.
//!
//! Everything is put back on every path: the standby running, replay resumed and streaming
//! again before each trial and after it (the fault's own end, the load's end, an error or a
//! cancel), once more when the run ends, and after a kill -9 of pglab by the next start
//! (which starts the standbys it has and resumes a paused replay). Only pglab's sandbox's
//! standbys are touched; on any other server the run is refused with a sentence. In a run that
//! sweeps the distance (`--standby-rtt`) the standby is put back at the trial's distance
//! ([`Injector::at_distance`]), which is never saved as its own.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::field::{FieldDef, FieldKind};
use super::{RunCtx, RunError};
use crate::measure::units::parse_duration;
use crate::server::{Sandbox, Standby, replication};

pub(crate) const FIELD: FieldDef = FieldDef {
    key: "standby-fault",
    help: "during each trial, the sandbox's synchronous standby stops (stop-at=10s,for=5s) or pauses its replay (pause-replay-at=10s,for=5s); without for=, until the trial's duration ends; off",
    default: "off",
    kind: FieldKind::Text,
};

/// How long a standby may take to stream again once put back or moved.
pub(crate) const STREAM_AGAIN: Duration = Duration::from_secs(60);
/// How often the primary is asked where the standby stands.
const POLL: Duration = Duration::from_millis(50);

/// What happens to the standby.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The standby's server (and relay) stops.
    Stop,
    /// The standby keeps receiving WAL but applies none.
    PauseReplay,
}

impl FaultKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FaultKind::Stop => "stop",
            FaultKind::PauseReplay => "pause-replay",
        }
    }
}

/// A fault during each trial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StandbyFault {
    pub kind: FaultKind,
    /// Seconds into each trial's load.
    pub at_s: f64,
    /// How long it lasts (None: until the trial's time limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_s: Option<f64>,
}

fn seconds(s: &str, what: &str) -> Result<f64, String> {
    parse_duration(s)
        .map(|d| d.as_secs_f64())
        .map_err(|e| format!("{what}: {}", e.0))
}

fn secs_text(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s}s")
    } else {
        format!("{}ms", (s * 1000.0).round())
    }
}

impl StandbyFault {
    /// `off`, `stop-at=10s[,for=5s]`, `pause-replay[-at=10s][,for=5s]` (`at=` and `for=` may
    /// also follow `stop` or `pause-replay` as items of their own).
    pub fn parse(s: &str) -> Result<Option<StandbyFault>, String> {
        let s = s.trim();
        if matches!(s, "" | "off" | "none") {
            return Ok(None);
        }
        let mut items = s.split(',').map(str::trim);
        let head = items.next().unwrap_or_default();
        let (name, at) = match head.split_once('=') {
            Some((n, v)) => (n.trim(), Some(seconds(v.trim(), n.trim())?)),
            None => (head, None),
        };
        let (kind, at_given) = match name {
            "stop-at" => (FaultKind::Stop, true),
            "pause-replay-at" => (FaultKind::PauseReplay, true),
            "stop" if at.is_none() => (FaultKind::Stop, false),
            "pause-replay" if at.is_none() => (FaultKind::PauseReplay, false),
            _ => {
                return Err(format!(
                    "'{head}' is not a fault: stop-at=10s[,for=5s], pause-replay-at=10s[,for=5s], or off"
                ));
            }
        };
        let mut f = StandbyFault {
            kind,
            at_s: if at_given { at.unwrap_or(0.0) } else { 0.0 },
            for_s: None,
        };
        for item in items {
            match item.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("at", v)) if !at_given => f.at_s = seconds(v, "at")?,
                Some(("for", v)) => f.for_s = Some(seconds(v, "for")?),
                _ => return Err(format!("'{item}' is not for=5s (how long the fault lasts)")),
            }
        }
        if f.for_s == Some(0.0) {
            return Err("for=0 is no fault: give how long it lasts, or leave for= out".into());
        }
        Ok(Some(f))
    }

    /// The text form `parse` reads back.
    pub(crate) fn text(&self) -> String {
        let mut t = match (self.kind, self.at_s) {
            (FaultKind::PauseReplay, 0.0) => "pause-replay".to_string(),
            (k, a) => format!("{}-at={}", k.as_str(), secs_text(a)),
        };
        if let Some(f) = self.for_s {
            t.push_str(&format!(",for={}", secs_text(f)));
        }
        t
    }

    /// The fault fits trials limited to `duration_s` (None: until all rows are in).
    pub(crate) fn check(&self, duration_s: Option<f64>) -> Result<(), String> {
        match (self.for_s, duration_s) {
            (None, None) => Err(format!(
                "{} without for= lasts until the trial's time limit, and there is none: a commit waiting for the standby would never let the trial end; give for=…, or a duration",
                self.text()
            )),
            (_, Some(d)) if self.at_s >= d => Err(format!(
                "{} comes after the trial's {} time limit: it would never happen",
                self.text(),
                secs_text(d)
            )),
            _ => Ok(()),
        }
    }
}

/// What the fault did in one trial, in seconds from the start of its load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// The fault's text form.
    pub fault: String,
    /// The standby it hit (`pglab_standby_1`).
    pub standby: String,
    /// When it began (None: the load ended before it was due).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_s: Option<f64>,
    /// When the standby was put back (started again, or replay resumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_s: Option<f64>,
    /// How long after `to_s` the standby had replayed all the WAL the primary had written by
    /// then (None: not within a minute, or the run was cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_up_s: Option<f64>,
    /// What went wrong applying or undoing it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// The fault of a run and the standby it hits.
pub(crate) struct Injector {
    pub fault: StandbyFault,
    standby: Standby,
    sandbox: Sandbox,
    /// The distance a run sweeping it (`--standby-rtt`) has in force for the trial (None:
    /// not swept, the standby's own): the standby is put back there.
    distance: Mutex<Option<Duration>>,
}

fn failed(s: String) -> RunError {
    RunError::Failed(s)
}

impl Injector {
    /// The standby the fault hits: the synchronous one (`pg_stat_replication` on the run's
    /// session `control`), else the first running. Refused unless the target is pglab's
    /// sandbox with a standby running.
    pub(crate) async fn for_run(
        ctx: &RunCtx,
        fault: StandbyFault,
        control: &Client,
    ) -> Result<Injector, RunError> {
        let Some(sandbox) = ctx.opts.sandbox.clone().filter(|_| ctx.target.is_sandbox()) else {
            return Err(failed(format!(
                "--standby-fault {}: pglab stops or pauses only the standbys of its own sandbox, and this server is not pglab's sandbox; nothing was done",
                fault.text()
            )));
        };
        let up: Vec<Standby> = Standby::existing(&sandbox)
            .into_iter()
            .filter(Standby::running)
            .collect();
        let sync = replication::read(control)
            .await
            .unwrap_or_default()
            .into_iter()
            .find(|r| r.sync_state == "sync")
            .map(|r| r.application_name);
        let standby = up
            .iter()
            .find(|s| Some(s.name()) == sync)
            .or(up.first())
            .cloned()
            .ok_or_else(|| {
                failed(format!(
                    "--standby-fault {}: the sandbox has no standby running to stop or pause: start one with `pglab sandbox start --standbys 1`",
                    fault.text()
                ))
            })?;
        Ok(Injector {
            fault,
            standby,
            sandbox,
            distance: Mutex::new(None),
        })
    }

    /// The trials to come run at `rtt` (a swept distance): the standby is put back there,
    /// not at the distance it was started with, which stays its own.
    pub(crate) fn at_distance(&self, rtt: Duration) {
        *self.distance.lock().unwrap_or_else(|e| e.into_inner()) = Some(rtt);
    }

    pub(crate) fn standby_name(&self) -> String {
        self.standby.name()
    }

    /// The standby running, replay resumed (nothing when it already is).
    pub(crate) async fn restore(&self) -> Result<(), String> {
        let (standby, sandbox) = (self.standby.clone(), self.sandbox.clone());
        let rtt = *self.distance.lock().unwrap_or_else(|e| e.into_inner());
        let r = tokio::task::spawn_blocking(move || {
            let (_, port) = sandbox
                .live_postmaster()
                .ok_or_else(|| "the sandbox is not running".to_string())?;
            // On a running standby, start only reloads and resumes a paused replay.
            match rtt {
                Some(rtt) => standby.start_at(port, rtt),
                None => standby.start(port, None),
            }
            .map_err(|e| e.to_string())?;
            standby.resume_replay().map_err(|e| e.to_string())
        })
        .await;
        r.map_err(|e| e.to_string())?
            .map_err(|e| format!("putting {} back failed: {e}", self.standby.name()))
    }

    /// Before and after each trial: put back, then wait until the primary sees the standby
    /// streaming (a cancel stops the wait, not the putting back).
    pub(crate) async fn ready(&self, ctx: &RunCtx, control: &Client) -> Result<(), RunError> {
        self.restore().await.map_err(failed)?;
        let end = Instant::now() + STREAM_AGAIN;
        while !ctx.cancel.is_cancelled() {
            let at = replication::standby_at(control, &self.standby.name(), "0/0")
                .await
                .map_err(|e| ctx.error(e))?;
            if at.is_some_and(|(state, _)| state == "streaming") {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(failed(format!(
                    "{} did not stream again within {} s of being put back (see its log in {})",
                    self.standby.name(),
                    STREAM_AGAIN.as_secs(),
                    self.standby.node.root.display()
                )));
            }
            tokio::time::sleep(POLL).await;
        }
        Ok(())
    }

    async fn apply(&self) -> Result<(), String> {
        let (standby, kind) = (self.standby.clone(), self.fault.kind);
        let r = tokio::task::spawn_blocking(move || match kind {
            FaultKind::Stop => standby.stop().map(|_| ()),
            FaultKind::PauseReplay => standby.pause_replay(),
        })
        .await;
        r.map_err(|e| e.to_string())?
            .map_err(|e| format!("{} on {} failed: {e}", kind.as_str(), self.standby.name()))
    }

    /// The fault during one trial's load: wait for the load to start (`started` gives its
    /// start), apply the fault at `at`, put the standby back after `for` (or at the trial's
    /// time limit `limit_s`, or as soon as the load ends or the run is cancelled), and time
    /// its catching up. `loaded` is cancelled when the load has ended; `applied` once the
    /// fault is in place (or will not be: it is cancelled however this ends).
    pub(crate) async fn during(
        &self,
        ctx: &RunCtx,
        control: &Client,
        (started, limit_s): (impl Future<Output = Option<Instant>>, Option<f64>),
        (loaded, applied): (&CancellationToken, &CancellationToken),
    ) -> FaultWindow {
        let _applied = applied.clone().drop_guard();
        let mut w = FaultWindow {
            fault: self.fault.text(),
            standby: self.standby.name(),
            ..Default::default()
        };
        let start = tokio::select! {
            s = started => s,
            _ = loaded.cancelled() => None,
            _ = ctx.cancel.cancelled() => None,
        };
        let Some(start) = start else { return w };
        let due = start + Duration::from_secs_f64(self.fault.at_s);
        if !wait_until(Some(due), loaded, &ctx.cancel).await {
            return w;
        }
        w.from_s = Some(start.elapsed().as_secs_f64());
        let done = self.apply().await;
        applied.cancel();
        let until = match (self.fault.for_s, limit_s) {
            (Some(f), _) => Some(Instant::now() + Duration::from_secs_f64(f)),
            (None, Some(l)) => Some(start + Duration::from_secs_f64(l)),
            (None, None) => None,
        };
        if let Err(e) = done {
            w.problems.push(e);
        } else {
            wait_until(until, loaded, &ctx.cancel).await;
        }
        let lsn = replication::current_lsn(control).await.ok();
        if let Err(e) = self.restore().await {
            w.problems.push(e);
        }
        let back = Instant::now();
        w.to_s = Some(back.duration_since(start).as_secs_f64());
        if let Some(lsn) = lsn {
            w.caught_up_s = self
                .catch_up(ctx, control, &lsn)
                .await
                .map(|t| t.duration_since(back).as_secs_f64());
        }
        w
    }

    /// When the standby, back, has replayed up to `lsn` (None: not within a minute).
    async fn catch_up(&self, ctx: &RunCtx, control: &Client, lsn: &str) -> Option<Instant> {
        let end = Instant::now() + STREAM_AGAIN;
        while Instant::now() < end && !ctx.cancel.is_cancelled() {
            match replication::standby_at(control, &self.standby.name(), lsn).await {
                Ok(Some((state, true))) if state == "streaming" => return Some(Instant::now()),
                Err(_) => return None,
                _ => tokio::time::sleep(POLL).await,
            }
        }
        None
    }
}

/// Wait until `at` (None: forever); false when the load ended or the run was cancelled
/// first.
async fn wait_until(
    at: Option<Instant>,
    loaded: &CancellationToken,
    cancel: &CancellationToken,
) -> bool {
    let sleep = async {
        match at {
            Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = sleep => true,
        _ = loaded.cancelled() => false,
        _ = cancel.cancelled() => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> StandbyFault {
        StandbyFault::parse(s).unwrap().unwrap()
    }

    #[test]
    fn faults_parse_and_read_back() {
        assert_eq!(StandbyFault::parse("off").unwrap(), None);
        let f = parse("stop-at=10s,for=5s");
        assert_eq!(
            f,
            StandbyFault {
                kind: FaultKind::Stop,
                at_s: 10.0,
                for_s: Some(5.0)
            }
        );
        assert_eq!(f.text(), "stop-at=10s,for=5s");
        let p = parse("pause-replay");
        assert_eq!(
            (p.kind, p.at_s, p.for_s),
            (FaultKind::PauseReplay, 0.0, None)
        );
        assert_eq!(p.text(), "pause-replay");
        let q = parse("pause-replay, at=1500ms, for=2s");
        assert_eq!(q.text(), "pause-replay-at=1500ms,for=2s");
        for s in [
            "stop-at=2s",
            "pause-replay-at=1s,for=500ms",
            "stop-at=0s,for=1s",
        ] {
            assert_eq!(parse(s).text(), s);
            assert_eq!(parse(&parse(s).text()), parse(s));
        }
    }

    #[test]
    fn bad_faults_are_refused_with_a_sentence() {
        for (s, says) in [
            ("crash-at=1s", "is not a fault"),
            ("stop-at=1s,until=2s", "is not for="),
            ("stop-at=1s,for=0s", "no fault"),
            ("stop-at=soon", "at"),
        ] {
            let e = StandbyFault::parse(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
        let e = parse("stop-at=2s").check(None).unwrap_err();
        assert!(e.contains("never let the trial end"), "{e}");
        let e = parse("stop-at=10s,for=1s").check(Some(5.0)).unwrap_err();
        assert!(e.contains("never happen"), "{e}");
        assert!(parse("stop-at=2s").check(Some(5.0)).is_ok());
        assert!(parse("stop-at=2s,for=1s").check(None).is_ok());
    }
}
