//! Standby-side settings of a run whose reads go to a standby of the sandbox
//! (`run query --on-standby 1 --set hot_standby_feedback=on,off`): `hot_standby_feedback`,
//! `max_standby_streaming_delay` and the other settings only a standby reads are applied on
//! that standby — `ALTER SYSTEM` there and a reload — never on the primary, where they would
//! mean nothing. They are put back like the primary's what-ifs, with the same journal on the
//! standby's own cluster ([`crate::server::Sandbox::begin_whatif`]): its
//! `postgresql.auto.conf` is saved before the first change and written back at the end (after
//! an error or Ctrl-C too); a journal dropped on a panic puts it back itself, and after a kill
//! -9 the next start of the standby does ([`crate::server::Sandbox::repair_whatif`], run by
//! every start of a sandbox node).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::whatif::apply::shown;
use super::whatif::{Apply, Combo, PlannedSetting, WhatIf};
use crate::server::{Standby, Target, WhatIfJournal};

/// Settings a standby reads and a primary ignores (all `sighup`).
pub(crate) const STANDBY_SIDE: &[&str] = &[
    "hot_standby_feedback",
    "max_standby_streaming_delay",
    "max_standby_archive_delay",
    "wal_receiver_status_interval",
    "recovery_min_apply_delay",
];

/// A swept setting only a standby reads, as the primary would apply it (a reload).
fn standby_side(s: &PlannedSetting) -> bool {
    s.apply == Apply::Reload && STANDBY_SIDE.contains(&s.name.to_lowercase().as_str())
}

/// In the plan of a run that reads on a standby, its standby-side settings are applied there:
/// the names moved (none when nothing standby-side is swept).
pub(crate) fn move_to_standby(plan: &mut WhatIf) -> Vec<String> {
    let mut moved = Vec::new();
    for s in plan.settings.iter_mut() {
        if standby_side(s) {
            s.apply = Apply::Standby;
            moved.push(s.name.clone());
        }
    }
    moved
}

/// A run that sweeps a standby setting on the primary (no `--on-standby`): a note that it
/// changes nothing there (None when it sweeps none).
pub(crate) fn on_primary_note(plan: &WhatIf) -> Option<String> {
    let names: Vec<&str> = plan
        .settings
        .iter()
        .filter(|s| standby_side(s))
        .map(|s| s.name.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "{}: read by a standby only, so set on the primary it changes nothing; to measure it, run query --on-standby 1 on a sandbox with a standby",
            names.join(", ")
        )
    })
}

/// The part of combination `i` applied on the standby.
pub(crate) fn standby_part(plan: &WhatIf, i: usize) -> Combo {
    let on_standby = |n: &str| {
        plan.settings
            .iter()
            .any(|s| s.name == n && s.apply == Apply::Standby)
    };
    plan.combos
        .get(i)
        .map(|c| c.iter().filter(|(n, _)| on_standby(n)).cloned().collect())
        .unwrap_or_default()
}

#[derive(Default)]
struct State {
    journal: Option<WhatIfJournal>,
    applied: Option<Combo>,
    /// The standby's own values of the swept settings (as `SHOW`).
    before: BTreeMap<String, String>,
}

/// The standby-side settings of a run, and the standby they are applied on.
pub(crate) struct StandbySettings {
    standby: Standby,
    target: Arc<Target>,
    plan: WhatIf,
    state: tokio::sync::Mutex<State>,
}

impl StandbySettings {
    /// None when the plan applies nothing on the standby.
    pub(crate) fn new(
        standby: Standby,
        target: Arc<Target>,
        plan: &WhatIf,
    ) -> Option<StandbySettings> {
        plan.settings
            .iter()
            .any(|s| s.apply == Apply::Standby)
            .then(|| StandbySettings {
                standby,
                target,
                plan: plan.clone(),
                state: tokio::sync::Mutex::new(State::default()),
            })
    }

    fn names(&self) -> Vec<String> {
        self.plan
            .settings
            .iter()
            .filter(|s| s.apply == Apply::Standby)
            .map(|s| s.name.clone())
            .collect()
    }

    /// Before the first change: the standby's own values, and its journal held (a copy of
    /// its `postgresql.auto.conf`, and the lock that keeps another run off it).
    pub(crate) async fn begin(&self) -> Result<(), String> {
        let mut st = self.state.lock().await;
        if st.journal.is_some() {
            return Ok(());
        }
        let c = self.target.connect().await.map_err(|e| e.to_string())?;
        st.before = shown(&c, &self.names()).await.map_err(|e| describe(&e))?;
        let node = self.standby.node.clone();
        let journal = tokio::task::spawn_blocking(move || node.begin_whatif())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("{}: {e}", self.standby.name()))?;
        st.journal = Some(journal);
        Ok(())
    }

    /// Make `part` the standby's settings (ALTER SYSTEM + reload, checked from a fresh
    /// session); true when something changed.
    pub(crate) async fn enter(&self, part: &Combo) -> Result<bool, String> {
        if part.is_empty() {
            return Ok(false);
        }
        self.begin().await?;
        let mut st = self.state.lock().await;
        if st.applied.as_ref() == Some(part) {
            return Ok(false);
        }
        let c = self.target.connect().await.map_err(|e| e.to_string())?;
        st.applied = None;
        for (n, v) in part {
            c.batch_execute(&crate::sql::settings::alter_system_line(n, v))
                .await
                .map_err(|e| {
                    format!(
                        "ALTER SYSTEM SET {n} = {v} on {}: {}",
                        self.standby.name(),
                        describe(&e)
                    )
                })?;
        }
        c.batch_execute("SELECT pg_reload_conf()")
            .await
            .map_err(|e| describe(&e))?;
        self.wait_showing(part).await?;
        st.applied = Some(part.clone());
        Ok(true)
    }

    /// Wait (up to 5 s: a reload reaches new sessions asynchronously) until a fresh session on
    /// the standby shows every value of `want`.
    async fn wait_showing(&self, want: &Combo) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            let c = self.target.connect().await.map_err(|e| e.to_string())?;
            let names: Vec<String> = want.iter().map(|(n, _)| n.clone()).collect();
            let now = shown(&c, &names).await.map_err(|e| describe(&e))?;
            let wrong: Vec<String> = want
                .iter()
                .filter(|(n, v)| !self.same(n, now.get(n).map_or("", String::as_str), v))
                .map(|(n, v)| {
                    format!(
                        "{n} shows {}, not {v}",
                        now.get(n).cloned().unwrap_or_default()
                    )
                })
                .collect();
            if wrong.is_empty() {
                return Ok(());
            }
            if Instant::now() >= end {
                return Err(format!(
                    "{} did not take the settings: {}",
                    self.standby.name(),
                    wrong.join(", ")
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether `shown` (as `SHOW` says it) is the value `v`.
    fn same(&self, name: &str, shown: &str, v: &str) -> bool {
        let info = self
            .plan
            .settings
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.info.as_ref());
        match info {
            Some(i) => match (i.normalize(shown), i.normalize(v)) {
                (Some(a), Some(b)) => i.same(&a, &b),
                _ => shown == v,
            },
            None => shown == v,
        }
    }

    /// The standby's own settings back (after the run, a cancel or a failure): a sentence,
    /// None when nothing had changed.
    pub(crate) async fn restore(&self) -> Result<Option<String>, String> {
        let mut st = self.state.lock().await;
        let Some(journal) = st.journal.take() else {
            return Ok(None);
        };
        st.applied = None;
        let node = self.standby.node.clone();
        let wrote = tokio::task::spawn_blocking(move || node.restore_auto_conf())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let before: Combo = st.before.clone().into_iter().collect();
        if wrote {
            let c = self.target.connect().await.map_err(|e| e.to_string())?;
            c.batch_execute("SELECT pg_reload_conf()")
                .await
                .map_err(|e| describe(&e))?;
            self.wait_showing(&before).await?;
        }
        // Only now may the saved copy go: until here a killed pglab leaves it for the next start.
        self.standby.node.end_whatif(journal);
        let list: Vec<String> = before.iter().map(|(n, v)| format!("{n}={v}")).collect();
        Ok(Some(format!(
            "{} has its own settings back ({}) after a reload",
            self.standby.name(),
            list.join(", ")
        )))
    }
}

fn describe(e: &tokio_postgres::Error) -> String {
    crate::server::error::describe_query_error(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, apply: Apply) -> PlannedSetting {
        PlannedSetting {
            name: name.into(),
            values: vec!["on".into(), "off".into()],
            context: "sighup".into(),
            apply,
            info: None,
        }
    }

    #[test]
    fn standby_side_settings_move_off_the_primary() {
        let combo = |f: &str, w: &str| {
            vec![
                ("hot_standby_feedback".to_string(), f.to_string()),
                ("work_mem".to_string(), w.to_string()),
                ("checkpoint_timeout".to_string(), "5min".to_string()),
            ]
        };
        let mut plan = WhatIf {
            settings: vec![
                setting("hot_standby_feedback", Apply::Reload),
                setting("work_mem", Apply::Session),
                setting("checkpoint_timeout", Apply::Reload),
            ],
            combos: vec![combo("on", "4MB"), combo("off", "4MB")],
            ..WhatIf::default()
        };
        let note = on_primary_note(&plan).unwrap();
        assert!(
            note.starts_with("hot_standby_feedback: read by a standby only"),
            "{note}"
        );
        assert_eq!(move_to_standby(&mut plan), ["hot_standby_feedback"]);
        assert_eq!(on_primary_note(&plan), None);
        // The primary reloads for checkpoint_timeout only; the standby gets the feedback.
        assert_eq!(
            plan.server_part(1),
            vec![("checkpoint_timeout".to_string(), "5min".to_string())]
        );
        assert_eq!(
            standby_part(&plan, 1),
            vec![("hot_standby_feedback".to_string(), "off".to_string())]
        );
        assert_eq!(
            plan.session_settings(0).pairs(),
            [("work_mem".to_string(), "4MB".to_string())]
        );
        // Nothing standby-side: nothing moves.
        let mut other = WhatIf {
            settings: vec![setting("checkpoint_timeout", Apply::Reload)],
            ..WhatIf::default()
        };
        assert!(move_to_standby(&mut other).is_empty());
        assert!(standby_part(&other, 0).is_empty());
    }
}
