//! How throughput clients send the workload's statements, with pgbench's `-M` meanings:
//! `simple` (the text with the values written in, one `Query` message), `extended` (an unnamed
//! statement parsed on every execution, the values bound: `PQsendQueryParams`) and `prepared`
//! (each statement parsed once per session, `PQsendPrepare`, then bound and executed:
//! `PQsendQueryPrepared`). `prepared` is the default, since it is what drivers send for short
//! statements. Single timed executions (`--clients off`) always go as psql sends them, on the
//! simple protocol. Which protocol ran is a condition of a comparison: a record from before
//! the field ran `simple`.

use serde::{Deserialize, Serialize};

use crate::experiment::lab::field::{FieldDef, FieldKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Simple,
    Extended,
    Prepared,
}

/// The choices, as the flag and the editor take them.
pub(crate) const PROTOCOLS: &[(&str, Protocol)] = &[
    ("simple", Protocol::Simple),
    ("extended", Protocol::Extended),
    ("prepared", Protocol::Prepared),
];

pub(crate) const FIELD: FieldDef = FieldDef {
    key: "protocol",
    help: "throughput mode: how clients send each statement, as pgbench -M: prepared (parsed once per session, then bound and executed; the default), extended (parsed every time, values bound) or simple (values written into the text)",
    default: "prepared",
    kind: FieldKind::Choice(&["simple", "extended", "prepared"]),
};

impl Protocol {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }

    /// A record written before the field existed ran the simple protocol.
    pub(crate) fn recorded_before() -> Protocol {
        Protocol::Simple
    }

    /// Whether values are bound (extended, prepared) rather than written into the text.
    pub(crate) fn binds(self) -> bool {
        self != Protocol::Simple
    }

    /// What the run's note says of how the clients sent the statements.
    pub(crate) fn sentence(self) -> String {
        let how = match self {
            Protocol::Simple => {
                "on the simple protocol, the values written into the text (pgbench -M simple)"
            }
            Protocol::Extended => {
                "on the extended protocol, each execution parsed again as an unnamed statement with its values bound (pgbench -M extended)"
            }
            Protocol::Prepared => {
                "prepared: each statement parsed once per session, then bound and executed with its values (pgbench -M prepared)"
            }
        };
        format!(
            "clients sent the statements {how}; --protocol {} ran (default prepared)",
            self.as_str()
        )
    }
}

/// The note of a run of single timed executions: how they were sent.
pub(crate) const SINGLE_NOTE: &str = "each timed execution is sent as psql sends it, on the simple protocol (--protocol applies to throughput mode)";

/// Read the `protocol` field (empty: the default).
pub(crate) fn read(s: &str) -> Result<Protocol, String> {
    if s.is_empty() {
        return Ok(Protocol::Prepared);
    }
    PROTOCOLS
        .iter()
        .find(|(name, _)| *name == s)
        .map(|(_, p)| *p)
        .ok_or_else(|| format!("'{s}' is not a protocol: give simple, extended or prepared"))
}
