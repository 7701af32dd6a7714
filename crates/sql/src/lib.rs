//! The SQL foundation, below everything that talks to a server: SQL as PostgreSQL's own parser
//! reads it (libpg_query, through the `pg_query` crate: what a statement is and what it may do,
//! decided by the server's grammar rather than by keywords), and the SQL pglab writes (quoted
//! identifiers and literals, table names, setting lines with one quoting rule, the lab's marker
//! and run ids, the record an imported table carries). It knows nothing of experiments,
//! imports, servers or front ends; `import` and `experiment` both sit on it and neither imports
//! the other (`.ci/layering` checks).

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as sql;
#[allow(unused_imports)]
use pglab_paths as paths;

pub mod calls;
pub mod classify;
mod classify_setup;
pub mod error;
pub mod functions;
pub mod imported;
pub mod lab;
pub mod names;
pub mod normalized;
pub mod quote;
pub mod settings;
pub mod tree;
pub mod volatile;

pub use classify::{Frame, Place, Rules, check, explainable};

#[cfg(test)]
mod tests;
