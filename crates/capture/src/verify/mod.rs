//! `pglab verify before.sql after.sql`: did a change help production, statement by statement.
//! Each file carries a window of `pg_stat_statements` (`pglab capture`, [`crate::capture::
//! file_window`]); per statement that ran enough in both, the time per call after over before
//! with Welch's interval on the windows' own means, spreads and calls
//! ([`crate::measure::welch_means`]), every interval at the family-wise level across the
//! statements compared (Bonferroni). Beside it, what moved with it: rows, shared blocks read
//! and temp blocks per call. Production is not a lab, so what else moved is said where it
//! did (load, cache, a statement's rows per call, its query id) and such statements are
//! flagged and left out of the headline. Read only: two files, nothing on any server.

mod between;
pub mod compare;
pub mod expect;
pub mod render;
pub mod svg;

pub use compare::{Options, Verification, verify};

#[cfg(test)]
mod simulate_tests;
