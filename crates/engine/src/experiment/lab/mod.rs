//! The lab: the machinery every experiment kind shares. A run's context on the server
//! (`context`: its schema, sessions, cancel), the runner that frames every run, the spec
//! vocabulary (`spec`, `field`), the event stream, what-if settings, findings and decisions,
//! ETAs, preflight refusals, leftovers, checkpoints, cold caches and the load generator's CPU.
//! The kinds themselves (`index_build`, `ingest`, `growth`, `query`) live beside this folder,
//! one folder each, and meet the lab through [`experiment::Experiment`].

pub mod big_run;
pub(crate) mod checkpoint;
pub(crate) mod commit_cost;
pub(crate) mod context;
pub(crate) mod cpu;
pub mod data_dir_lock;
pub mod decision;
pub(crate) mod distribute;
pub mod eta;
pub(crate) mod event;
pub(crate) mod experiment;
pub(crate) mod fault_report;
pub mod field;
pub mod findings;
pub mod gate;
pub(crate) mod kind_info;
pub(crate) mod kind_report;
pub(crate) mod lab_writes;
pub mod leftovers;
pub(crate) mod leftovers_dead;
pub mod leftovers_elsewhere;
pub mod live_eta;
pub(crate) mod page_cache;
pub mod preflight;
pub mod record;
#[cfg(any(test, feature = "fixtures"))]
pub mod record_schema;
pub(crate) mod run_error;
pub(crate) mod runner;
pub(crate) mod samples;
pub mod spec;
pub(crate) mod standby_beside;
pub(crate) mod standby_fault;
pub(crate) mod standby_fields;
pub(crate) mod standby_rtt;
pub(crate) mod standby_settings;
pub(crate) mod sync_commit;
pub(crate) mod sync_standby;
pub mod whatif;

pub use context::*;
