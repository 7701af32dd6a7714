//! `pglab tune`: a workload and a time budget in, a reviewed settings script out, every line
//! with its evidence.
//!
//! The search starts from a prior ([`candidates`]: the pgtune formula for this host, the
//! current values, a few around them), screens the settings at the ends of their values and
//! ranks them by effect ([`screen`]), races those that moved, largest first, at an error split
//! over the tune's races ([`family`]; known pairs as one, [`pair`]), racing the values of one setting at a time with
//! interleaved trials ([`race`]), carries the value each race shows into the next, keeps to
//! the budget ([`budget`]) and saves what it learnt after every round ([`state`]; where it is,
//! [`phase`]), then
//! confirms the tuned set against the starting configuration ([`confirm`]). Every round is an
//! ordinary run of the workload's experiment ([`rounds`]) — the what-if machinery applies and
//! restores the settings, the history records every trial. [`output`] writes the script.

pub(crate) mod budget;
pub mod candidates;
pub mod confirm;
mod confirm_staged;
mod confirming;
pub mod decide;
pub(crate) mod design;
pub(crate) mod engine;
pub(crate) mod family;
pub(crate) mod formula;
pub(crate) mod looks;
pub(crate) mod memory;
pub mod objective;
pub mod output;
pub(crate) mod pair;
pub(crate) mod phase;
pub(crate) mod plan;
pub mod plan_advice;
pub mod plan_check;
pub mod plan_facts;
pub(crate) mod plan_phase;
pub(crate) mod plan_report;
pub mod race;
mod racing;
pub mod rounds;
pub(crate) mod sampled;
pub mod screen;
pub mod screen_report;
mod screening;
#[cfg(test)]
mod sentences_tests;
pub mod session;
pub mod setup;
pub mod state;
mod state_v2;
pub(crate) mod statements;
pub(crate) mod warm;

pub use engine::{End, TuneEvent, Tuner};
pub(crate) use state::TuneState;
