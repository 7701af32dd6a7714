//! The slow integration tests: tunes within a budget, streaming standbys, a Citus cluster and
//! verify windows. Built and run with `--features slow-tests` (CI and `.ci/run` always do);
//! `cargo test` alone leaves them out so the suite stays quick to run while working.

#[path = "../common/mod.rs"]
mod common;

mod citus;
mod sandbox_standby;
mod standby_kinds;
mod standby_reads;
mod tune;
mod tune_plans;
mod verify;
