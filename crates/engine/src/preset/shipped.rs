//! The presets that ship inside the binary, so an installed pglab has them without any file
//! on disk. Each reproduces (or scales down) one of the founding experiments.

/// `(name, file text)` of every shipped preset, in the order `presets list` shows them.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "cybertec-10m",
        include_str!("../../../../presets/cybertec-10m.toml"),
    ),
    (
        "cybertec-quick",
        include_str!("../../../../presets/cybertec-quick.toml"),
    ),
    (
        "couchdb-bulk",
        include_str!("../../../../presets/couchdb-bulk.toml"),
    ),
    (
        "couchdb-quick",
        include_str!("../../../../presets/couchdb-quick.toml"),
    ),
    (
        "fsync-effect",
        include_str!("../../../../presets/fsync-effect.toml"),
    ),
    ("pulp-1b", include_str!("../../../../presets/pulp-1b.toml")),
    (
        "pulp-quick",
        include_str!("../../../../presets/pulp-quick.toml"),
    ),
    (
        "wal-compression",
        include_str!("../../../../presets/wal-compression.toml"),
    ),
    (
        "checkpoint-spacing",
        include_str!("../../../../presets/checkpoint-spacing.toml"),
    ),
    (
        "shared-buffers-growth",
        include_str!("../../../../presets/shared-buffers-growth.toml"),
    ),
    (
        "pulp-citus-quick",
        include_str!("../../../../presets/pulp-citus-quick.toml"),
    ),
    (
        "work-mem-spill",
        include_str!("../../../../presets/work-mem-spill.toml"),
    ),
    (
        "random-page-cost",
        include_str!("../../../../presets/random-page-cost.toml"),
    ),
    (
        "jit-aggregate",
        include_str!("../../../../presets/jit-aggregate.toml"),
    ),
    (
        "regional-orders",
        include_str!("../../../../presets/regional-orders.toml"),
    ),
];

/// The text of the shipped preset `name`.
pub fn text(name: &str) -> Option<&'static str> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// How a shipped preset's file is named in messages.
pub fn file_label(name: &str) -> String {
    format!("presets/{name}.toml (shipped)")
}
