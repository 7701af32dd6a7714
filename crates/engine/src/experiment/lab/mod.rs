//! The lab: the machinery every experiment kind shares. A run's context on the server
//! (`context`: its schema, sessions, cancel), the runner that frames every run, the spec
//! vocabulary (`spec`, `field`), the event stream, what-if settings, findings and decisions,
//! ETAs, preflight refusals, leftovers, checkpoints, cold caches and the load generator's CPU.
//! The kinds themselves (`index_build`, `ingest`, `growth`, `query`) live beside this folder,
//! one folder each, and meet the lab through [`experiment::Experiment`].

pub mod big_run;
pub mod checkpoint;
pub mod commit_cost;
pub mod context;
pub mod cpu;
pub mod data_dir_lock;
pub mod decision;
pub mod distribute;
pub mod eta;
pub mod event;
pub mod experiment;
pub mod fault_report;
pub mod field;
pub mod findings;
pub mod gate;
pub mod kind_info;
pub mod kind_report;
pub mod lab_writes;
pub mod leftovers;
pub mod leftovers_dead;
pub mod leftovers_elsewhere;
pub mod live_eta;
pub mod page_cache;
pub mod preflight;
pub mod record;
#[cfg(any(test, feature = "fixtures"))]
pub mod record_schema;
pub mod run_error;
pub mod runner;
pub mod samples;
pub mod spec;
pub mod standby_beside;
pub mod standby_fault;
pub mod standby_fields;
pub mod standby_rtt;
pub mod standby_settings;
pub mod sync_commit;
pub mod sync_standby;
pub mod whatif;

pub use context::*;
