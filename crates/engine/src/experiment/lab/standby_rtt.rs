//! The standby's distance as a swept setting (`--standby-rtt 0ms,2ms,10ms`): each value is one
//! more swept "setting", `pglab.standby_rtt`, so that it makes combinations, labels, verdicts
//! and the report's settings column like any server setting. The trial's sessions `SET` it as
//! a placeholder (a name with a dot, which PostgreSQL keeps without meaning, so `SHOW` in a
//! loading session says which distance it ran at); what changes the distance is pglab: before
//! a trial whose value differs from the one in force, every standby of the sandbox is pointed
//! at a relay holding each chunk RTT/2 each way (or at the primary's socket for 0), and the
//! trial waits until each streams again on a new connection. The distance the standby was
//! started with (its remembered `rtt-us`) is never written here, so the run's end — or the
//! next start after a kill -9 — puts it back.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_postgres::Client;

use super::field::{FieldDef, FieldKind};
use super::standby_fault::STREAM_AGAIN;
use super::whatif::Combo;
use super::whatif::catalog::SettingInfo;
use super::whatif::plan::Reach;
use super::whatif::sweep::SettingsSweep;
use super::{RunCtx, RunError};
use crate::measure::units::parse_duration;
use crate::server::{Sandbox, Standby, replication};

/// The swept name.
pub(crate) const NAME: &str = "pglab.standby_rtt";

pub(crate) const FIELD: FieldDef = FieldDef {
    key: "standby-rtt",
    help: "the sandbox's standbys at each emulated round trip in turn, swept like a setting (0ms,2ms,10ms: pglab.standby_rtt in the settings); off: as they are",
    default: "off",
    kind: FieldKind::Text,
};

/// `0ms,2ms,10ms` as the sweep's values (`0ms`, `2ms`, `10ms`, `500us`); `off`: none.
pub(crate) fn parse_list(s: &str) -> Result<Vec<String>, String> {
    super::standby_fields::each_once(s, "off", |item| {
        let d = parse_duration(item).map_err(|e| e.0)?;
        if d > Duration::from_secs(1) {
            return Err(format!(
                "{item}: a round trip above 1 s is not a standby's distance"
            ));
        }
        Ok(text(d))
    })
}

fn text(d: Duration) -> String {
    let us = d.as_micros();
    if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{}ms", us as f64 / 1000.0)
    }
}

/// The distance a combination runs at (None: not swept).
pub(crate) fn rtt_of(combo: &Combo) -> Option<Duration> {
    let (_, v) = combo.iter().find(|(n, _)| n == NAME)?;
    parse_duration(v).ok()
}

/// Before a sweep is checked against `pg_settings`: the placeholder it does not list, on
/// pglab's own sandbox only.
pub(crate) fn known(
    all: &mut Vec<SettingInfo>,
    sweep: &SettingsSweep,
    reach: Reach,
) -> Result<(), String> {
    if !sweep.items.iter().any(|i| i.name == NAME) {
        return Ok(());
    }
    if reach != Reach::Sandbox {
        return Err(format!(
            "{NAME} (--standby-rtt): the emulated distance exists only between pglab's single-server sandbox and its standbys"
        ));
    }
    all.push(SettingInfo {
        name: NAME.into(),
        setting: String::new(),
        unit: None,
        context: "user".into(),
        vartype: "string".into(),
        min: None,
        max: None,
        enumvals: Vec::new(),
    });
    Ok(())
}

/// The sandbox's standbys and the distance in force.
pub(crate) struct Distance {
    sandbox: Sandbox,
    standbys: Vec<Standby>,
    current: Mutex<Option<Duration>>,
}

impl Distance {
    /// The run's standbys when it sweeps the distance (None: it does not); refused without a
    /// standby running.
    pub(crate) fn for_run(
        ctx: &RunCtx,
        sweep: &SettingsSweep,
    ) -> Result<Option<Distance>, RunError> {
        if !sweep.items.iter().any(|i| i.name == NAME) {
            return Ok(None);
        }
        let sandbox = ctx.opts.sandbox.clone().filter(|_| ctx.target.is_sandbox());
        let standbys: Vec<Standby> = sandbox
            .iter()
            .flat_map(Standby::existing)
            .filter(Standby::running)
            .collect();
        match sandbox {
            Some(sandbox) if !standbys.is_empty() => Ok(Some(Distance {
                sandbox,
                standbys,
                current: Mutex::new(None),
            })),
            _ => Err(RunError::Failed(
                "--standby-rtt: the sandbox has no standby running to move: start one with `pglab sandbox start --standbys 1`".into(),
            )),
        }
    }

    /// Put every standby at `rtt` unless it already is, and wait until each streams again.
    pub(crate) async fn enter(
        &self,
        ctx: &RunCtx,
        control: &Client,
        rtt: Duration,
    ) -> Result<(), RunError> {
        if *self.current.lock().unwrap_or_else(|e| e.into_inner()) == Some(rtt) {
            return Ok(());
        }
        let since = replication::now(control).await.map_err(|e| ctx.error(e))?;
        let moved = self.move_to(Some(rtt)).await.map_err(RunError::Failed)?;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(rtt);
        ctx.emit
            .phase(
                None,
                format!("standbys at an emulated {} round trip", text(rtt)),
            )
            .await;
        for s in self.standbys.iter().filter(|s| moved.contains(&s.name())) {
            let end = Instant::now() + STREAM_AGAIN;
            while !replication::streaming_since(control, &s.name(), &since)
                .await
                .map_err(|e| ctx.error(e))?
            {
                ctx.check()?;
                if Instant::now() > end {
                    return Err(RunError::Failed(format!(
                        "{} did not stream again at {} within {} s",
                        s.name(),
                        text(rtt),
                        STREAM_AGAIN.as_secs()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Ok(())
    }

    /// Every standby back at the distance it was started with.
    pub(crate) async fn restore(&self) -> Result<(), String> {
        self.move_to(None).await.map(|_| ())
    }

    /// After a combination was entered: the standbys at its distance, a session of the run's
    /// own watching them stream again (opened only when the distance changes).
    pub(crate) async fn follow(&self, ctx: &RunCtx) -> Result<(), RunError> {
        let Some(rtt) = rtt_of(&ctx.whatif.combo()) else {
            return Ok(());
        };
        if *self.current.lock().unwrap_or_else(|e| e.into_inner()) == Some(rtt) {
            return Ok(());
        }
        let control = ctx.session().await?;
        self.enter(ctx, &control, rtt).await
    }
}

/// At the end of a run (after an error or Ctrl-C too): the standbys back at their own
/// distance, or a note that the next start does it.
pub(crate) async fn put_back(ctx: &RunCtx, distance: Option<&Distance>) {
    if let Some(d) = distance
        && let Err(e) = d.restore().await
    {
        ctx.note(format!(
            "the standbys' distance was not put back ({e}); the next pglab start puts it back"
        ))
        .await;
    }
}

impl Distance {
    /// `Some(rtt)`: at `rtt` for this run; None: at the remembered distance. The names of the
    /// standbys whose connection changed.
    async fn move_to(&self, rtt: Option<Duration>) -> Result<Vec<String>, String> {
        let (sandbox, standbys) = (self.sandbox.clone(), self.standbys.clone());
        let r = tokio::task::spawn_blocking(move || {
            let (_, port) = sandbox
                .live_postmaster()
                .ok_or_else(|| "the sandbox is not running".to_string())?;
            let mut moved = Vec::new();
            for s in &standbys {
                let r = match rtt {
                    Some(r) => s.set_distance(port, r),
                    None => s.start(port, None).map(|_| true),
                };
                if r.map_err(|e| format!("moving {} failed: {e}", s.name()))? {
                    moved.push(s.name());
                }
            }
            Ok(moved)
        })
        .await;
        r.map_err(|e| e.to_string())?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_parse_to_the_sweeps_values() {
        assert_eq!(parse_list("off").unwrap(), Vec::<String>::new());
        assert_eq!(parse_list("0ms, 2ms,10ms").unwrap(), ["0ms", "2ms", "10ms"]);
        // A value reads back as the distance it stands for.
        for (given, d) in [("0ms", 0), ("900ms", 900_000), ("1s", 1_000_000)] {
            let v = parse_list(given).unwrap().remove(0);
            let combo = vec![(NAME.to_string(), v)];
            assert_eq!(rtt_of(&combo), Some(Duration::from_micros(d)), "{given}");
        }
        assert!(parse_list("2ms,2ms").unwrap_err().contains("twice"));
        assert!(parse_list("5s").unwrap_err().contains("above 1 s"));
        assert!(parse_list("far").is_err());
        let combo = vec![(NAME.to_string(), "2ms".to_string())];
        assert_eq!(rtt_of(&combo), Some(Duration::from_millis(2)));
        assert_eq!(rtt_of(&Vec::new()), None);
    }

    #[test]
    fn the_placeholder_is_known_on_the_sandbox_only() {
        let sweep = SettingsSweep::parse("pglab.standby_rtt=0ms,2ms").unwrap();
        let mut all = Vec::new();
        known(&mut all, &sweep, Reach::Sandbox).unwrap();
        assert_eq!(all[0].context, "user");
        let mut none = Vec::new();
        let e = known(&mut none, &sweep, Reach::Other).unwrap_err();
        assert!(
            e.contains("only between pglab's single-server sandbox"),
            "{e}"
        );
        assert!(none.is_empty());
    }
}
