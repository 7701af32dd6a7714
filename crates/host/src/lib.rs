//! The machine pglab runs on: hardware snapshot, live samples, disk probes.
//!
//! Engine code: no terminal here. [`HostSnapshot::read`] describes the host once (and travels
//! with every result as a [`HostFingerprint`]); [`HostSampler`] feeds the live sparklines; the
//! [`probe`] functions measure the data directory's disk on demand.

// The module names the code uses for its own crate and its neighbours (`crate::sql::…`),
// kept from when the layers were modules of one crate.
#[allow(unused_imports)]
use crate as host;

pub mod load;
pub mod probe;
pub mod probe_site;
pub mod sampler;
pub mod snapshot;

pub use sampler::{HostSample, HostSampler};
pub use snapshot::{
    CgroupLimits, DiskInfo, HostFingerprint, HostSnapshot, disk_info, free_bytes, hostname,
};
