//! The vocabulary of `synchronous_commit`, shared by the experiments that sweep it (ingest's
//! own axis; query's and growth's setting): the five levels, what a commit at each waits for,
//! and what durability each buys once it has returned.

use serde::{Deserialize, Serialize};

/// A `synchronous_commit` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncCommit {
    On,
    Off,
    Local,
    RemoteWrite,
    RemoteApply,
}

impl SyncCommit {
    /// The levels that wait for the primary's WAL flush, from the one that waits for nothing
    /// more to the one that waits for the most (a synchronous standby's replay). A fact about
    /// the local disk is read at the first of these a run measured.
    pub(crate) const BY_REACH: [SyncCommit; 4] = [
        SyncCommit::Local,
        SyncCommit::On,
        SyncCommit::RemoteWrite,
        SyncCommit::RemoteApply,
    ];

    pub(crate) const ALL: [SyncCommit; 5] = [
        SyncCommit::On,
        SyncCommit::Off,
        SyncCommit::Local,
        SyncCommit::RemoteWrite,
        SyncCommit::RemoteApply,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SyncCommit::On => "on",
            SyncCommit::Off => "off",
            SyncCommit::Local => "local",
            SyncCommit::RemoteWrite => "remote_write",
            SyncCommit::RemoteApply => "remote_apply",
        }
    }

    pub fn parse(s: &str) -> Result<SyncCommit, String> {
        SyncCommit::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "'{s}' is not a synchronous_commit value: use on, off, local, remote_write or remote_apply"
                )
            })
    }

    /// A commit waits for a synchronous standby (when `synchronous_standby_names` names one).
    pub(crate) fn waits_for_standby(self) -> bool {
        matches!(
            self,
            SyncCommit::On | SyncCommit::RemoteWrite | SyncCommit::RemoteApply
        )
    }

    /// Every commit waits for its WAL to reach the local disk.
    pub(crate) fn waits_for_flush(self) -> bool {
        self != SyncCommit::Off
    }
}

/// What a commit at `level` survives once it has returned, with a synchronous standby
/// (`synchronous_standby_names` naming a connected one) or without.
pub(crate) fn durability(level: SyncCommit, sync_standby: bool) -> &'static str {
    match (level, sync_standby) {
        (SyncCommit::Off, _) => {
            "off: returns before its WAL is on disk; a crash of the primary loses the last commits (up to 3 × wal_writer_delay, 600 ms by default), without corruption"
        }
        (SyncCommit::Local, _) => {
            "local: on the primary's disk; survives a crash of the primary, not the loss of its disk or a failover to a standby that had not received it"
        }
        (_, false) => {
            "on, remote_write, remote_apply without a synchronous standby: the same as local (on the primary's disk only)"
        }
        (SyncCommit::RemoteWrite, true) => {
            "remote_write: also written (not flushed) by the synchronous standby; survives losing the primary, not losing the primary together with a crash of the standby's OS"
        }
        (SyncCommit::On, true) => {
            "on: also flushed to the synchronous standby's disk; survives losing the primary, even with a crash of the standby"
        }
        (SyncCommit::RemoteApply, true) => {
            "remote_apply: also applied on the synchronous standby: a read there sees it (read-your-writes on the standby), with on's durability"
        }
    }
}
