//! Headless commands, one file per command. What they share with the TUI (the context,
//! opening the target, exit codes, user errors, signals) lives in [`crate::session`].

pub mod capture;
pub mod clean;
pub mod generate;
pub mod history;
pub mod presets;
pub mod probe;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod sandbox_citus;
pub mod sandbox_import;
pub mod sandbox_imports;
pub mod sandbox_standby;
pub mod stderr_line;
pub mod tune;
pub mod verify;
