//! The query experiment's fields: what the editor, the flags (`--sql`, `--index`, …) and the
//! presets set, each with its help and default.

use crate::experiment::lab::decision;
use crate::experiment::lab::field::{FieldDef, FieldKind};

pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        key: "sql",
        help: "statements to measure: SQL (repeat --sql, or separate with ;), or @FILE",
        default: "",
        kind: FieldKind::Sql,
    },
    FieldDef {
        key: "file",
        help: "a file of statements, each measured on its own and named by a `-- name: …` line before it (else by its first line)",
        default: "",
        kind: FieldKind::Text,
    },
    FieldDef {
        key: "setup",
        help: "SQL (or @FILE) run once before the trials with the lab schema first on the search_path; what it creates is dropped after",
        default: "",
        kind: FieldKind::Text,
    },
    FieldDef {
        key: "keep-setup",
        help: "keep what setup created for the next run with the same setup, which then skips it (on/off)",
        default: "off",
        kind: FieldKind::Bool,
    },
    FieldDef {
        key: "index",
        help: "candidate indexes, CREATE INDEX … ON t (…) (repeat --index, or separate with ;): the values are none and each candidate",
        default: "",
        kind: FieldKind::Sql,
    },
    crate::experiment::lab::whatif::SET,
    crate::experiment::lab::standby_fields::SYNC_FIELD,
    crate::experiment::lab::standby_rtt::FIELD,
    crate::experiment::lab::standby_fault::FIELD,
    FieldDef {
        key: "cache",
        help: "warm: one untimed execution per combination first; cold (sandbox only): a restart and the OS page cache dropped before every trial",
        default: "warm",
        kind: FieldKind::Choice(&["warm", "cold"]),
    },
    FieldDef {
        key: "allow-function",
        help: "on a server pglab did not start: a VOLATILE function (SCHEMA.NAME) you know only reads, which statements may then call (repeat the flag, or a comma list); every other VOLATILE function outside PostgreSQL's own read-only built-ins is refused",
        default: "",
        kind: FieldKind::Names,
    },
    FieldDef {
        key: "writes",
        help: "auto: as written on the sandbox, READ ONLY transactions elsewhere; read-only; rollback: every execution in a transaction that is rolled back",
        default: "auto",
        kind: FieldKind::Choice(&["auto", "read-only", "rollback"]),
    },
    decision::repeat_field(
        "timed executions (or throughput trials) per combination, interleaved, or auto: until the verdicts are decided",
        "5",
    ),
    decision::MAX_REPEAT,
    decision::MIN_EFFECT,
    decision::CONFIDENCE,
    FieldDef {
        key: "clients",
        help: "throughput mode: concurrent clients running the statements (or --script) in a loop, a list 1,4,16 (off: time single executions)",
        default: "off",
        kind: FieldKind::CountList,
    },
    FieldDef {
        key: "duration",
        help: "throughput mode and --on-standby: how long each trial runs",
        default: "10s",
        kind: FieldKind::Duration,
    },
    FieldDef {
        key: "script",
        help: "throughput mode: a pgbench-style script file (\\set name expr with random(lo, hi), :name, SQL commands; one run of it is one transaction)",
        default: "",
        kind: FieldKind::Text,
    },
    super::protocol::FIELD,
    FieldDef {
        key: "seed",
        help: "seed of the script's random() draws",
        default: "42",
        kind: FieldKind::Number,
    },
    super::standby_reads::ON_STANDBY,
    super::standby_reads::CHURN,
    super::standby_reads::CHURN_VACUUM,
];
