//! SQL as PostgreSQL's own parser reads it (libpg_query, through the `pg_query` crate): what a
//! statement is and what it may do, decided by the server's grammar rather than by keywords.
//! A foundation module: it knows nothing of experiments, servers or front ends.

pub mod classify;
mod classify_setup;
pub mod functions;
pub mod tree;

pub use classify::{Frame, Place, Rules, check, explainable};

#[cfg(test)]
mod tests;
