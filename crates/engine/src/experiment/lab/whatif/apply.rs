//! Applying a what-if plan during a run. Session settings ride on every session the trial
//! opens (`SET`); server settings are written with `ALTER SYSTEM` on the sandbox, read with a
//! reload or a restart, and checked from a fresh session before the trial starts. The
//! restart's time is recorded and never part of a trial. At the end — finished, cancelled or
//! failed — the sandbox's own `postgresql.auto.conf` goes back and the server reads it again;
//! a killed run's journal is put back by the next start ([`crate::server::Sandbox::repair_whatif`]).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use super::plan::{Apply, PlannedSetting, WhatIf};
use super::sweep::{Combo, combo_label};
use crate::server::{Sandbox, Target, WhatIfJournal};

/// What a run's settings sweep did to the server, kept in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhatIfRecord {
    /// The swept settings, their values and how each was applied.
    pub settings: Vec<PlannedSetting>,
    /// Seconds each restart of the sandbox took (never part of a trial's time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<f64>,
    #[serde(default)]
    pub reloads: u32,
    /// The server's own values of the server-level settings before the run (as `SHOW`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub before: BTreeMap<String, String>,
    /// How the server got its own settings back (None: nothing was changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<String>,
}

/// What entering a combination took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Entered {
    /// Nothing on the server changed (session settings only, or the same server values).
    Same,
    /// A configuration reload.
    Reloaded,
    /// A restart: every open session is gone, caches are cold.
    Restarted { seconds: f64 },
}

struct ServerState {
    /// The server-level part of the combination in effect (None: the sandbox's own).
    applied: Option<Combo>,
    journal: Option<WhatIfJournal>,
    /// After a restart: the session that holds the run's lock again.
    lock_session: Option<Client>,
    record: WhatIfRecord,
    /// Something was written with `ALTER SYSTEM` (until then the journal only holds the lock).
    changed: bool,
}

/// A run's what-if state: the plan, the combination in effect, what was changed.
pub struct Applier {
    pub plan: WhatIf,
    sandbox: Option<Sandbox>,
    current: Mutex<usize>,
    state: tokio::sync::Mutex<ServerState>,
}

/// The settings as `SHOW` reports them in `client`'s session.
pub(crate) async fn shown(
    client: &Client,
    names: &[String],
) -> Result<BTreeMap<String, String>, tokio_postgres::Error> {
    if names.is_empty() {
        return Ok(BTreeMap::new());
    }
    let rows = client
        .query(
            "SELECT n, current_setting(n) FROM unnest($1::text[]) AS n",
            &[&names],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

impl Applier {
    pub(crate) fn new(plan: WhatIf, sandbox: Option<Sandbox>) -> Applier {
        let record = WhatIfRecord {
            settings: plan.settings.clone(),
            ..Default::default()
        };
        Applier {
            plan,
            sandbox,
            current: Mutex::new(0),
            state: tokio::sync::Mutex::new(ServerState {
                applied: None,
                journal: None,
                lock_session: None,
                record,
                changed: false,
            }),
        }
    }

    /// Nothing swept.
    pub(crate) fn none() -> Applier {
        Applier::new(WhatIf::none(), None)
    }

    /// The index of the combination in effect.
    pub(crate) fn current(&self) -> usize {
        self.current.lock().map(|c| *c).unwrap_or(0)
    }

    /// The combination in effect (empty when nothing is swept).
    pub(crate) fn combo(&self) -> Combo {
        self.plan
            .combos
            .get(self.current())
            .cloned()
            .unwrap_or_default()
    }

    /// The swept names (for `SHOW` per trial).
    pub(crate) fn names(&self) -> Vec<String> {
        self.plan.settings.iter().map(|s| s.name.clone()).collect()
    }

    /// The session settings of the combination in effect, for a new session.
    pub(crate) fn session_settings(&self) -> crate::sql::settings::SessionSettings {
        self.plan.session_settings(self.current())
    }

    pub(crate) async fn record(&self) -> Option<WhatIfRecord> {
        if self.plan.is_empty() {
            return None;
        }
        Some(self.state.lock().await.record.clone())
    }

    fn setting(&self, name: &str) -> Option<&PlannedSetting> {
        self.plan.settings.iter().find(|s| s.name == name)
    }

    /// Before the run's first trial, when the plan changes the server (reload or restart):
    /// hold the sandbox's what-if journal — its lock, so any other pglab run is refused from
    /// now until [`Applier::restore`], and a copy of `postgresql.auto.conf` — and record the
    /// sandbox's own values of the swept settings. Nothing is changed yet.
    pub(crate) async fn begin(&self, target: &Target) -> Result<(), String> {
        let Some(sandbox) = self.sandbox.clone().filter(|_| self.plan.changes_server()) else {
            return Ok(());
        };
        let mut st = self.state.lock().await;
        let client = target.connect().await.map_err(|e| e.to_string())?;
        self.take_journal(&mut st, &sandbox, &client).await
    }

    async fn take_journal(
        &self,
        st: &mut ServerState,
        sandbox: &Sandbox,
        client: &Client,
    ) -> Result<(), String> {
        if st.journal.is_some() {
            return Ok(());
        }
        let names: Vec<String> = self
            .plan
            .settings
            .iter()
            .filter(|s| s.apply.on_primary())
            .map(|s| s.name.clone())
            .collect();
        st.record.before = shown(client, &names).await.map_err(|e| e.to_string())?;
        let sb = sandbox.clone();
        let journal = tokio::task::spawn_blocking(move || sb.begin_whatif())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        st.journal = Some(journal);
        Ok(())
    }

    /// Make combination `i` the one in effect: its session settings for every session opened
    /// from now on, its server settings on the server (checked from a fresh session).
    /// `run_id` re-takes the run's lock after a restart.
    pub(crate) async fn enter(
        &self,
        target: &Target,
        run_id: &str,
        i: usize,
    ) -> Result<Entered, String> {
        if let Ok(mut c) = self.current.lock() {
            *c = i;
        }
        let part = self.plan.server_part(i);
        if part.is_empty() {
            return Ok(Entered::Same);
        }
        let mut st = self.state.lock().await;
        if st.applied.as_ref() == Some(&part) {
            return Ok(Entered::Same);
        }
        let Some(sandbox) = self.sandbox.clone() else {
            return Err("internal: server settings are swept on the sandbox only".into());
        };
        let client = target.connect().await.map_err(|e| e.to_string())?;
        // Normally held since [`Applier::begin`]; taken here for a caller that did not.
        self.take_journal(&mut st, &sandbox, &client).await?;
        // A restart only when a restart setting changes: from the value in effect (the last
        // one applied, else the server's own).
        let restart = part.iter().any(|(n, v)| {
            let Some(s) = self.setting(n).filter(|s| s.apply == Apply::Restart) else {
                return false;
            };
            let now = st
                .applied
                .as_ref()
                .and_then(|a| a.iter().find(|(an, _)| an == n))
                .map(|(_, av)| av.clone())
                .or_else(|| st.record.before.get(n).cloned());
            match (now, s.info.as_ref()) {
                (Some(now), Some(info)) => match (info.normalize(&now), info.normalize(v)) {
                    (Some(a), Some(b)) => !info.same(&a, &b),
                    _ => true,
                },
                _ => true,
            }
        });
        st.changed = true;
        for (n, v) in &part {
            client
                .batch_execute(&crate::sql::settings::alter_system_line(n, v))
                .await
                .map_err(|e| format!("ALTER SYSTEM SET {n} = {v}: {}", describe(&e)))?;
        }
        let entered = if restart {
            drop(client);
            st.lock_session = None;
            let sb = sandbox.clone();
            let took = tokio::task::spawn_blocking(move || sb.restart())
                .await
                .map_err(|e| e.to_string())?;
            let took = match took {
                Ok(d) => d,
                Err(e) => {
                    let back = self.put_back(&mut st, &sandbox, target).await;
                    return Err(format!(
                        "the sandbox did not restart with {}: {e}; {}",
                        combo_label(&part),
                        back.unwrap_or_else(|e| format!(
                            "putting its settings back failed too: {e}"
                        ))
                    ));
                }
            };
            let lock = target.connect().await.map_err(|e| e.to_string())?;
            crate::experiment::lab::leftovers::hold_run_lock(&lock, run_id).await?;
            st.lock_session = Some(lock);
            st.record.restarts.push(took.as_secs_f64());
            Entered::Restarted {
                seconds: took.as_secs_f64(),
            }
        } else {
            client
                .batch_execute("SELECT pg_reload_conf()")
                .await
                .map_err(|e| describe(&e))?;
            st.record.reloads += 1;
            Entered::Reloaded
        };
        self.verify(target, &part).await?;
        st.applied = Some(part);
        Ok(entered)
    }

    /// Wait (up to 5 s: a reload reaches new sessions asynchronously) until a fresh session
    /// sees every value of `part`.
    async fn verify(&self, target: &Target, part: &Combo) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            let client = target.connect().await.map_err(|e| e.to_string())?;
            let mut wrong = Vec::new();
            for (n, v) in part {
                let row = client
                    .query_one(
                        "SELECT setting, pending_restart FROM pg_settings WHERE lower(name) = lower($1)",
                        &[n],
                    )
                    .await
                    .map_err(|e| describe(&e))?;
                let setting: String = row.get(0);
                let pending: bool = row.get(1);
                let info = self.setting(n).and_then(|s| s.info.as_ref());
                let ok =
                    info.is_none_or(|i| i.normalize(v).is_some_and(|want| i.same(&setting, &want)));
                if !ok || pending {
                    wrong.push(format!("{n} shows {setting}, not {v}"));
                }
            }
            if wrong.is_empty() {
                return Ok(());
            }
            if Instant::now() >= end {
                return Err(format!(
                    "the server did not take the settings: {}",
                    wrong.join(", ")
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Give the sandbox its own settings back (after the run, a cancel or a failure). A
    /// sentence saying what was done, None when nothing had changed.
    pub(crate) async fn restore(&self, target: &Target) -> Result<Option<String>, String> {
        let Some(sandbox) = self.sandbox.clone() else {
            return Ok(None);
        };
        let mut st = self.state.lock().await;
        if st.journal.is_none() {
            return Ok(None);
        }
        if !st.changed && sandbox.auto_conf_as_saved() {
            // Held from the start, never used (the run ended before its first change).
            if let Some(j) = st.journal.take() {
                sandbox.end_whatif(j);
            }
            return Ok(None);
        }
        let said = self.put_back(&mut st, &sandbox, target).await?;
        st.record.restored = Some(said.clone());
        Ok(Some(said))
    }

    async fn put_back(
        &self,
        st: &mut ServerState,
        sandbox: &Sandbox,
        target: &Target,
    ) -> Result<String, String> {
        let Some(journal) = st.journal.take() else {
            return Ok("nothing to put back".into());
        };
        st.applied = None;
        st.lock_session = None;
        let sb = sandbox.clone();
        let live = tokio::task::spawn_blocking(move || {
            sb.restore_auto_conf()?;
            Ok::<bool, crate::server::TargetError>(sb.live_postmaster().is_some())
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let before = st.record.before.clone();
        let list = before
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut how = "a reload".to_string();
        let pending = if live {
            match target.connect().await {
                Ok(c) => {
                    c.batch_execute("SELECT pg_reload_conf()")
                        .await
                        .map_err(|e| describe(&e))?;
                    // The postmaster reads the file asynchronously; pending_restart shows
                    // once it has.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let names: Vec<String> = before.keys().cloned().collect();
                    let row = c
                        .query_one(
                            "SELECT count(*) FROM pg_settings WHERE pending_restart OR (name = ANY($1) AND context = 'postmaster')",
                            &[&names],
                        )
                        .await
                        .map_err(|e| describe(&e))?;
                    row.get::<_, i64>(0) > 0
                }
                Err(_) => true,
            }
        } else {
            true
        };
        if pending {
            let sb = sandbox.clone();
            let took = tokio::task::spawn_blocking(move || {
                if live {
                    sb.restart()
                } else {
                    let t = Instant::now();
                    sb.start().map(|_| t.elapsed())
                }
            })
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
            st.record.restarts.push(took.as_secs_f64());
            how = format!("a restart ({:.2} s)", took.as_secs_f64());
        }
        // Check from a fresh session that the server shows its own values again.
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            let c = target.connect().await.map_err(|e| e.to_string())?;
            let names: Vec<String> = before.keys().cloned().collect();
            let now = shown(&c, &names).await.map_err(|e| describe(&e))?;
            if now == before {
                break;
            }
            if Instant::now() >= end {
                return Err(format!(
                    "the sandbox shows {} after putting back {list}",
                    now.iter()
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Only now may the saved copy go: until here a killed pglab leaves it for the next start.
        sandbox.end_whatif(journal);
        Ok(format!(
            "the sandbox has its own settings back ({list}) after {how}"
        ))
    }
}

fn describe(e: &tokio_postgres::Error) -> String {
    crate::server::error::describe_query_error(e)
}
