//! The `checkpoint` field every experiment shares: whether a trial (a build, a load, a growth
//! step's measurements) starts right after a `CHECKPOINT`, so that dirty buffers of earlier
//! work are not written while it is timed. A `CHECKPOINT` is a write burst on the whole
//! server, felt by every session on it: on a server pglab did not start it is taken only when
//! asked (`on`). `auto`, the default, takes it on pglab's own sandbox only. Decided once per
//! run ([`CheckpointPlan`]); every trial records whether one was taken, and when none was the
//! run's confounders say what that means.

use serde::{Deserialize, Serialize};

use super::field::{FieldDef, FieldKind, FieldReader};

/// The field (flag `--checkpoint`, preset key, editor field).
pub(crate) const FIELD: FieldDef = FieldDef {
    key: "checkpoint",
    help: "CHECKPOINT before each trial: auto (on pglab's sandbox only), on, off — on another server it is a write burst for every session, so only when asked",
    default: "auto",
    kind: FieldKind::Choice(&["auto", "on", "off"]),
};

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckpointMode {
    /// On pglab's own sandbox, not elsewhere.
    #[default]
    Auto,
    On,
    Off,
}

impl CheckpointMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CheckpointMode::Auto => "auto",
            CheckpointMode::On => "on",
            CheckpointMode::Off => "off",
        }
    }

    pub(crate) fn is_auto(&self) -> bool {
        *self == CheckpointMode::Auto
    }

    /// Read the field; missing (older presets and records) is `auto`.
    pub(crate) fn read(r: &mut FieldReader) -> CheckpointMode {
        r.get("checkpoint", CheckpointMode::Auto, |s| match s {
            "" | "auto" => Ok(CheckpointMode::Auto),
            "on" => Ok(CheckpointMode::On),
            "off" => Ok(CheckpointMode::Off),
            other => Err(format!(
                "'{other}' is not one of auto, on, off (auto: a CHECKPOINT before each trial on pglab's sandbox only)"
            )),
        })
    }
}

/// What a run does about checkpoints, decided at its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointPlan {
    /// A `CHECKPOINT` before each trial.
    pub take: bool,
    /// When none is taken: the sentence for the run's confounders (what it means for the
    /// numbers, and how to get one).
    pub confounder: Option<String>,
}

impl CheckpointPlan {
    /// `owned`: the target is pglab's own sandbox; `allowed`: the role may run `CHECKPOINT`
    /// (superuser or, PostgreSQL 15+, `pg_checkpoint`).
    pub(crate) fn decide(mode: CheckpointMode, owned: bool, allowed: bool) -> CheckpointPlan {
        const EFFECT: &str = "dirty buffers left by earlier work (the data load, earlier trials, other sessions) may be written while a trial is timed and lengthen it";
        let why = match (mode, owned, allowed) {
            (CheckpointMode::Off, _, _) => {
                format!("no CHECKPOINT before trials (checkpoint = off): {EFFECT}")
            }
            (CheckpointMode::Auto, false, _) => format!(
                "no CHECKPOINT before trials: pglab did not start this server, and a CHECKPOINT is a write burst for every session on it: {EFFECT}; checkpoint = on asks for one before each trial"
            ),
            (_, _, false) => format!(
                "CHECKPOINT skipped: the role is neither superuser nor in pg_checkpoint, so {EFFECT}"
            ),
            _ => {
                return CheckpointPlan {
                    take: true,
                    confounder: None,
                };
            }
        };
        CheckpointPlan {
            take: false,
            confounder: Some(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_checkpoints_on_the_sandbox_only() {
        assert!(CheckpointPlan::decide(CheckpointMode::Auto, true, true).take);
        let elsewhere = CheckpointPlan::decide(CheckpointMode::Auto, false, true);
        assert!(!elsewhere.take);
        let c = elsewhere.confounder.unwrap();
        assert!(
            c.starts_with("no CHECKPOINT before trials: pglab did not start"),
            "{c}"
        );
        assert!(c.contains("checkpoint = on"), "{c}");
        assert!(CheckpointPlan::decide(CheckpointMode::On, false, true).take);
        let off = CheckpointPlan::decide(CheckpointMode::Off, true, true);
        assert!(!off.take && off.confounder.unwrap().contains("checkpoint = off"));
        let denied = CheckpointPlan::decide(CheckpointMode::On, false, false);
        assert!(!denied.take && denied.confounder.unwrap().contains("pg_checkpoint"));
    }

    #[test]
    fn the_field_reads_auto_on_off_and_refuses_the_rest() {
        let mut p = crate::experiment::lab::field::ParamText::new();
        for (text, want) in [
            ("", CheckpointMode::Auto),
            ("auto", CheckpointMode::Auto),
            ("on", CheckpointMode::On),
            ("off", CheckpointMode::Off),
        ] {
            p.insert("checkpoint".into(), text.into());
            let mut r = FieldReader::new(&p);
            assert_eq!(CheckpointMode::read(&mut r), want);
            assert!(r.errors.is_empty());
        }
        p.insert("checkpoint".into(), "sometimes".into());
        let mut r = FieldReader::new(&p);
        CheckpointMode::read(&mut r);
        assert_eq!(r.errors[0].0, "checkpoint");
    }
}
