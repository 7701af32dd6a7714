//! pglab: a terminal tuning lab for PostgreSQL.
//!
//! The engine (`target`, `host`, `experiment`, `measure`, `preset`, `history`, `report`) never
//! touches the terminal; `tui` is the only module that does. The TUI and the headless commands
//! consume the same experiment event stream.

pub mod cli;
pub mod commands;
pub mod experiment;
pub mod history;
pub mod host;
pub mod measure;
pub mod paths;
pub mod preset;
pub mod report;
pub mod server;
pub mod session;
pub mod tui;
