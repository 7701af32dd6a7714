//! The vocabulary of a growth run: the two storage designs, the indexes of the snapshot table,
//! how a version is written and how a table grows between steps.

use serde::{Deserialize, Serialize};

/// How the (version, content) association is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// A row per (version, content): the original's table.
    Snapshot,
    /// A row per content with the versions it was added and removed in.
    Ranges,
    /// Citus: the snapshot table distributed by version (a version lives on one shard).
    #[serde(rename = "snapshot-by-version")]
    SnapshotByVersion,
    /// Citus: the snapshot table distributed by content (a version spreads over every shard).
    #[serde(rename = "snapshot-by-content")]
    SnapshotByContent,
}

impl Design {
    pub fn as_str(self) -> &'static str {
        match self {
            Design::Snapshot => "snapshot",
            Design::Ranges => "ranges",
            Design::SnapshotByVersion => "snapshot by version",
            Design::SnapshotByContent => "snapshot by content",
        }
    }

    /// The storage design, whatever the distribution.
    pub(crate) fn base(self) -> Design {
        match self {
            Design::Snapshot | Design::SnapshotByVersion | Design::SnapshotByContent => {
                Design::Snapshot
            }
            Design::Ranges => Design::Ranges,
        }
    }

    /// Citus: the column the table is distributed by (None: a plain table).
    pub(crate) fn distribution(self) -> Option<&'static str> {
        match self {
            Design::SnapshotByVersion => Some("version"),
            Design::SnapshotByContent => Some("content"),
            Design::Snapshot | Design::Ranges => None,
        }
    }

    /// A design distributed by `column` (None: plain); None when the design cannot be.
    pub(crate) fn distributed(self, column: Option<&str>) -> Option<Design> {
        match (self.base(), column) {
            (d, None) => Some(d),
            (Design::Snapshot, Some("version")) => Some(Design::SnapshotByVersion),
            (Design::Snapshot, Some("content")) => Some(Design::SnapshotByContent),
            _ => None,
        }
    }

    /// A short name for the design's table (shard names append `_<shard id>` to it and its
    /// indexes, which must stay within PostgreSQL's 63 bytes).
    pub(crate) fn table_key(self) -> &'static str {
        match self {
            Design::Snapshot => "snapshot",
            Design::Ranges => "ranges",
            Design::SnapshotByVersion => "snapv",
            Design::SnapshotByContent => "snapc",
        }
    }
    /// Heap bytes per row before anything is measured: the id and two keys (snapshot) or the
    /// id, a key and two int8 version bounds (ranges), plus tuple header and line pointer.
    pub(crate) fn heap_bytes_per_row(self, shape: super::key::KeyShape) -> u64 {
        let k = shape.key_bytes();
        match self.base() {
            Design::Snapshot => 28 + 3 * k,
            _ => 28 + 2 * k + 16,
        }
    }
}

/// An index of the snapshot table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexKind {
    Pk,
    Version,
    Content,
    VersionContent,
}

impl IndexKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IndexKind::Pk => "pk",
            IndexKind::Version => "version",
            IndexKind::Content => "content",
            IndexKind::VersionContent => "version_content",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteMethod {
    /// One INSERT per row in one transaction, as an ORM does.
    Insert,
    /// Multi-row INSERT … VALUES in batches of 1000 rows.
    Multi,
    /// Binary COPY.
    Copy,
}

impl WriteMethod {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WriteMethod::Insert => "insert",
            WriteMethod::Multi => "multi",
            WriteMethod::Copy => "copy",
        }
    }
    pub(crate) fn describe(self) -> &'static str {
        match self {
            WriteMethod::Insert => "single-row INSERTs in one transaction",
            WriteMethod::Multi => "multi-row INSERT … VALUES in one transaction",
            WriteMethod::Copy => "COPY in one transaction",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrowMode {
    /// Drop the indexes, COPY, rebuild them.
    Rebuild,
    /// COPY into the table with its indexes in place.
    Keep,
}

impl GrowMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GrowMode::Rebuild => "rebuild",
            GrowMode::Keep => "keep",
        }
    }
}
