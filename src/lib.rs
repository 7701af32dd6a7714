//! pglab: a terminal tuning lab for PostgreSQL.
//!
//! The layers are the workspace's crates (docs/architecture.md), so the compiler keeps the
//! layering: the engine (`pglab-engine` and the crates under it) names neither the terminal nor
//! the command line; `pglab-tui` is the only crate that knows the terminal; `pglab-session`
//! holds what both front ends share. This package is the binary with its headless front end
//! (`commands`); the library re-exports every layer under the module name tests, benches and
//! the commands use (`pglab::experiment`, `pglab::tui`, …).

pub mod commands;

pub use pglab_capture as capture;
pub use pglab_capture::verify;
pub use pglab_engine::{experiment, fault, history, preset, report, tune};
pub use pglab_host as host;
pub use pglab_import as import;
pub use pglab_measure as measure;
pub use pglab_paths as paths;
pub use pglab_server as server;
pub use pglab_session::{cli, cli_sandbox, closed_stdout, outputs, session};
pub use pglab_sql as sql;
pub use pglab_tui as tui;
