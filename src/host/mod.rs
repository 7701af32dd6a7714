//! The machine pglab runs on: hardware snapshot, live samples, disk probes.
//! (The snapshot and probes land from their own branch; this is the contract.)

pub mod snapshot;
pub use snapshot::{HostFingerprint, HostSnapshot, free_bytes};
