//! pglab: a terminal tuning lab for PostgreSQL.
//!
//! The engine (`server`, `host`, `experiment`, `import`, `measure`, `preset`, `history`,
//! `report`, `paths`) never touches the terminal nor the command line; `tui` is the only module that
//! knows the terminal, `cli` the only one that knows clap. The two front ends, `tui` and
//! `commands` (headless), share `session` and consume the same experiment event stream;
//! neither imports the other. `.ci/layering` checks these rules.

pub mod capture;
pub mod cli;
pub mod cli_sandbox;
pub mod closed_stdout;
pub mod commands;
pub mod experiment;
pub mod fault;
pub mod history;
pub mod host;
pub mod import;
pub mod measure;
pub mod outputs;
pub mod paths;
pub mod preset;
pub mod report;
pub mod server;
pub mod session;
pub mod sql;
pub mod tui;
pub mod tune;
