//! The integration suite: one test binary, one module per file, every test against real
//! PostgreSQL servers the tests start (each file has a sandbox of its own, see `common`). The
//! slow tests (tunes, standbys, Citus, verify windows) are in `tests/slow/`, which CI runs
//! too (`--features slow-tests`).

#[path = "../common/mod.rs"]
mod common;

mod capture;
mod checkpoint;
mod cli_generate;
mod cli_target;
mod cli_usage;
mod conn_params;
mod data_dir_lock;
mod docs;
mod experiment_growth;
mod experiment_index_build;
mod experiment_index_build_verdicts;
mod experiment_ingest;
mod experiment_query;
mod fault_disk_full;
mod faults;
mod gate;
mod history;
mod host_confounder;
mod idle_server;
mod import;
mod import_source_guard;
mod index_build_table;
mod index_build_writes;
mod leftovers_kill9;
mod loaders;
mod parsers_prop;
mod presets;
mod private_files;
mod probe_safety;
mod production;
mod query_protocol;
mod replay_skip;
mod report;
mod safety;
mod sandbox_access;
mod sandbox_lifecycle;
mod target_tls_auth;
mod tui_e2e;
mod whatif;
