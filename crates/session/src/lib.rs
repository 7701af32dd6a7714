//! What both front ends share: the command line (`cli`, the only place that knows clap besides
//! the binary), the session (context, opening the target or the sandbox, exit codes, user
//! errors, signals, logging), and where results are written (`outputs`).

pub mod cli;
pub mod cli_sandbox;
pub mod closed_stdout;
pub mod session;

/// Where results are written: it lives in `pglab-paths`, below the engine, which writes reports too.
pub use pglab_paths::outputs;

// The module names the code uses for its neighbours (`crate::experiment::…`), kept from when
// the layers were modules of one crate.
#[allow(unused_imports)]
use pglab_engine::{experiment, report};
#[allow(unused_imports)]
use pglab_host as host;
#[allow(unused_imports)]
use pglab_measure as measure;
#[allow(unused_imports)]
use pglab_paths as paths;
#[allow(unused_imports)]
use pglab_server as server;
#[allow(unused_imports)]
use pglab_sql as sql;
