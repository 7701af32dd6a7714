//! The machine pglab runs on: hardware snapshot, live samples, disk probes.
