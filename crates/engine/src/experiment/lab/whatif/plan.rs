//! The plan of a settings sweep: how each setting is applied — `SET` in the trial's sessions
//! (`user`, `superuser`), `ALTER SYSTEM` + reload (`sighup`) or a restart (`postmaster`),
//! the last two only on pglab's own sandbox — the combinations in the order they run, and the
//! restart blocks that order keeps together. The checks that make a sweep a plan are in
//! [`super::check`].

use serde::{Deserialize, Serialize};

use super::catalog::SettingInfo;
use super::sweep::{Combo, SettingsSweep};
use crate::sql::settings::SessionSettings;

/// How a setting reaches the trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Apply {
    /// `SET` in every session of the trial (any target).
    Session,
    /// `ALTER SYSTEM` + `pg_reload_conf()` (the sandbox only).
    Reload,
    /// `ALTER SYSTEM` + a restart of the sandbox (the sandbox only).
    Restart,
    /// `ALTER SYSTEM` + `pg_reload_conf()` on the sandbox's standby the run reads on (a
    /// standby-side setting such as `hot_standby_feedback`; see
    /// [`crate::experiment::lab::standby_settings`]).
    Standby,
}

impl Apply {
    /// True when the primary's configuration carries it (a reload or a restart there).
    pub(crate) fn on_primary(self) -> bool {
        matches!(self, Apply::Reload | Apply::Restart)
    }
}

/// What pglab may do to the server a sweep runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// pglab's own single-server sandbox: reloads and restarts are allowed.
    Sandbox,
    /// pglab's Citus sandbox: only the coordinator would change, so only session settings.
    Cluster,
    /// A server pglab did not start: session settings only.
    Other,
}

impl Reach {
    /// The reach of a target: pglab's sandbox or not, a Citus coordinator or not.
    pub(crate) fn of(on_sandbox: bool, citus: bool) -> Reach {
        match (on_sandbox, citus) {
            (true, false) => Reach::Sandbox,
            (true, true) => Reach::Cluster,
            (false, _) => Reach::Other,
        }
    }
}

/// One swept setting, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedSetting {
    pub name: String,
    pub values: Vec<String>,
    /// `pg_settings.context`.
    pub context: String,
    pub apply: Apply,
    /// What the server is to show for each value (`pg_settings.setting`), and what it
    /// showed before the run.
    #[serde(skip)]
    pub info: Option<SettingInfo>,
}

/// A checked settings sweep: how each setting is applied, and the combinations in the order
/// they run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WhatIf {
    pub settings: Vec<PlannedSetting>,
    pub combos: Vec<Combo>,
    /// The sweep with `all` and `N%ram` written out as the values they stand for on this
    /// server and host (what the run records as its `set`).
    pub sweep: SettingsSweep,
}

impl WhatIf {
    /// Nothing swept: one pass with the server as it is.
    pub(crate) fn none() -> WhatIf {
        WhatIf {
            settings: Vec::new(),
            combos: vec![Vec::new()],
            sweep: SettingsSweep::default(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.settings.is_empty()
    }

    fn apply_of(&self, name: &str) -> Apply {
        self.settings
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.apply)
            .unwrap_or(Apply::Session)
    }

    /// True when some combination needs a restart.
    pub(crate) fn restarts(&self) -> bool {
        self.settings.iter().any(|s| s.apply == Apply::Restart)
    }

    /// True when some setting changes the server's configuration (reload or restart).
    pub(crate) fn changes_server(&self) -> bool {
        self.settings.iter().any(|s| s.apply.on_primary())
    }

    /// The part of combination `i` the server's configuration carries.
    pub(crate) fn server_part(&self, i: usize) -> Combo {
        self.combos
            .get(i)
            .map(|c| {
                c.iter()
                    .filter(|(n, _)| self.apply_of(n).on_primary())
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The restart block of combination `i`: combinations with the same values of every
    /// `postmaster` setting share one restart. Planners order trials by it when
    /// [`WhatIf::restarts`], so each block costs one restart.
    pub(crate) fn block_of(&self, i: usize) -> usize {
        let key = |i: usize| -> Combo {
            self.combos
                .get(i)
                .map(|c| {
                    c.iter()
                        .filter(|(n, _)| self.apply_of(n) == Apply::Restart)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()
        };
        let k = key(i);
        (0..self.combos.len()).find(|&j| key(j) == k).unwrap_or(i)
    }

    /// The restart block of each of `combos` combinations (the spec's count): all 0 when no
    /// swept setting needs a restart, so every combination interleaves with the others.
    pub(crate) fn blocks(&self, combos: usize) -> Vec<usize> {
        (0..combos)
            .map(|i| if self.restarts() { self.block_of(i) } else { 0 })
            .collect()
    }
}

/// The order in which round `round` (0-based) visits the restart blocks `distinct` (each
/// once, in the order given): every round visits every block, one restart each, so the
/// repeats of a restart (or reload) value are spread over the whole run, never all in one
/// block, and drift of the host over the run cannot land on one value. Two blocks alternate
/// ABAB…; three or more rotate (ABC, BCA, CAB, …), each taking every position in turn — a
/// round never starts with the block the previous one ended with, so no two rounds' trials
/// of one value run back to back. The restarts' seconds stay outside every trial.
pub(crate) fn round_blocks(distinct: &[usize], round: usize) -> Vec<usize> {
    let k = distinct.len();
    if k <= 2 {
        return distinct.to_vec();
    }
    let r = round % k;
    distinct[r..]
        .iter()
        .chain(&distinct[..r])
        .copied()
        .collect()
}

/// The distinct blocks of `blocks` (per combination), in first-seen order.
pub(crate) fn distinct_blocks(blocks: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    for &b in blocks {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out
}

impl WhatIf {
    /// Combination `i`'s session settings (empty when none).
    pub(crate) fn session_settings(&self, i: usize) -> SessionSettings {
        let mut s = SessionSettings::new();
        for (n, v) in self.combos.get(i).into_iter().flatten() {
            if self.apply_of(n) == Apply::Session {
                s.set(n.clone(), v.clone());
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_blocks_alternate_or_rotate_round_by_round() {
        assert_eq!(round_blocks(&[0], 3), [0]);
        let two: Vec<Vec<usize>> = (0..4).map(|r| round_blocks(&[0, 3], r)).collect();
        assert_eq!(two, [[0, 3], [0, 3], [0, 3], [0, 3]]);
        let three: Vec<Vec<usize>> = (0..4).map(|r| round_blocks(&[0, 1, 2], r)).collect();
        assert_eq!(three, [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 1, 2]]);
        // No round starts with the block the previous one ended with.
        for k in 2..6 {
            let d: Vec<usize> = (0..k).collect();
            for r in 0..10 {
                assert_ne!(
                    round_blocks(&d, r).last(),
                    round_blocks(&d, r + 1).first(),
                    "k={k} r={r}"
                );
            }
        }
        assert_eq!(distinct_blocks(&[2, 2, 0, 2, 1]), [2, 0, 1]);
    }
}
