//! What-if: any server setting as one more dimension of an experiment's sweep. The sweep
//! (the `set` field), the server's catalog of settings and the checks against it, the plan
//! (how each setting is applied, in which order), and applying it during a run — `SET` per
//! session anywhere, `ALTER SYSTEM` + reload or restart on pglab's own sandbox only, and
//! always put back.

pub mod apply;
pub mod catalog;
pub mod plan;
pub mod sweep;

pub use apply::{Applier, Entered, WhatIfRecord};
pub use plan::{Apply, PlannedSetting, Reach, WhatIf};
pub use sweep::{Combo, SET, SettingsSweep, combo_label, with_combo};

use super::event::ResultLayout;

/// A results layout with a `settings` column when the run sweeps server settings.
pub fn layout_with(mut layout: ResultLayout, sweep: &SettingsSweep) -> ResultLayout {
    if !sweep.is_empty() {
        layout.columns.push("settings".into());
    }
    layout
}
