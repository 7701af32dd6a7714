//! What-if: any server setting as one more dimension of an experiment's sweep. The sweep
//! (the `set` field), the server's catalog of settings and the checks against it, the plan
//! (how each setting is applied, in which order), and applying it during a run — `SET` per
//! session anywhere, `ALTER SYSTEM` + reload or restart on pglab's own sandbox only, and
//! always put back.

pub(crate) mod apply;
pub mod catalog;
pub(crate) mod check;
pub(crate) mod plan;
pub(crate) mod sweep;

pub(crate) use apply::{Applier, Entered, WhatIfRecord};
pub(crate) use check::check;
pub(crate) use plan::{Apply, PlannedSetting, Reach, WhatIf, distinct_blocks, round_blocks};
pub(crate) use sweep::{Combo, SET, SettingsSweep, combo_label, with_combo};

use super::event::ResultLayout;
use crate::server::Sandbox;

/// Why this run must not start on a sandbox other pglab processes share (None: it may): a
/// reload or restart would change their runs too, and a live what-if run of another process
/// would make this run measure its settings.
pub(crate) fn sandbox_conflict(sandbox: &Sandbox, plan: &WhatIf) -> Option<String> {
    if let Some(why) = users_conflict(sandbox, plan) {
        return Some(why);
    }
    sandbox.whatif_live().then(|| {
        "a what-if run of another pglab is changing the sandbox's settings: this run would measure them; wait until it ends".to_string()
    })
}

/// The part of [`sandbox_conflict`] a run checks again once it holds the what-if lock: other
/// pglab processes holding the sandbox's lease, when this run would reload or restart it.
pub(crate) fn users_conflict(sandbox: &Sandbox, plan: &WhatIf) -> Option<String> {
    if !plan.changes_server() {
        return None;
    }
    let others = sandbox.other_users();
    if others.is_empty() {
        return None;
    }
    let pids: Vec<String> = others.iter().map(|p| p.to_string()).collect();
    Some(format!(
        "another pglab is using the sandbox (pid {}): a reload or restart for --set would change its runs too; quit it or let it finish, then run this again",
        pids.join(", ")
    ))
}

/// A results layout with a `settings` column when the run sweeps server settings.
pub fn layout_with(mut layout: ResultLayout, sweep: &SettingsSweep) -> ResultLayout {
    if !sweep.is_empty() {
        layout.columns.push("settings".into());
    }
    layout
}
