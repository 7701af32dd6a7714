//! A run on the sandbox while it has standbys streaming: an ingest run that measures a
//! `synchronous_commit` level waiting for a standby (`on`, `remote_write`, `remote_apply`),
//! or a query or growth run that sweeps `synchronous_commit` through such a level, gets `synchronous_standby_names` naming them as one more (single-valued) server setting of
//! its what-if sweep — written with `ALTER SYSTEM` and a reload, and put back after the run
//! like every what-if (after Ctrl-C too, and by the next start after a kill -9) — so that
//! those levels really wait. A run that sets `synchronous_standby_names` itself is left as
//! it is.

use super::experiment::{Experiment, each_kind};
use super::spec::ExperimentSpec;
use super::whatif::SettingsSweep;
use super::whatif::sweep::SweptSetting;
use crate::server::{Sandbox, Standby};

pub(crate) const SYNC_NAMES: &str = "synchronous_standby_names";

/// Whether the run measures a level that waits for a synchronous standby: ingest's own
/// levels; query's and growth's swept `synchronous_commit` (unswept, the server's own level
/// is left as the server has it).
fn waits_for_standby(spec: &ExperimentSpec) -> bool {
    each_kind!(spec, s => s.waits_for_standby())
}

/// Whether a swept `synchronous_commit` waits for a synchronous standby (unswept, the
/// server's own level is left as the server has it): what query and growth measure.
pub(crate) fn swept_level_waits(set: &SettingsSweep) -> bool {
    super::standby_fields::levels_of(set)
        .iter()
        .any(|l| l.waits_for_standby())
}

/// The sweep with `synchronous_standby_names` added, and the note that says so; None when the
/// run needs nothing (not an ingest run of such a level, no standby streaming, or set by the
/// run itself).
pub(crate) fn with_sync_standby(
    spec: &ExperimentSpec,
    sandbox: &Sandbox,
) -> Option<(SettingsSweep, String)> {
    let set = spec.settings();
    if !waits_for_standby(spec) || set.items.iter().any(|i| i.name == SYNC_NAMES) {
        return None;
    }
    let up: Vec<Standby> = Standby::existing(sandbox)
        .into_iter()
        .filter(Standby::running)
        .collect();
    let value = match up.as_slice() {
        [] => return None,
        [one] => one.name(),
        _ => "*".to_string(),
    };
    let names: Vec<String> = up.iter().map(Standby::name).collect();
    let mut sweep = set.clone();
    sweep.items.push(SweptSetting {
        name: SYNC_NAMES.into(),
        values: vec![value.clone()],
    });
    let note = format!(
        "the sandbox has {} streaming ({}): {SYNC_NAMES} = '{value}' for this run, so that on, remote_write and remote_apply wait for {}; put back when the run ends",
        if up.len() == 1 {
            "a standby".to_string()
        } else {
            format!("{} standbys", up.len())
        },
        names.join(", "),
        if up.len() == 1 {
            "it"
        } else {
            "the first one connected"
        }
    );
    Some((sweep, note))
}
