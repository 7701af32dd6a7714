//! The command line of `pglab sandbox …`: its actions, `start`'s standbys, `import`'s
//! arguments, and the hidden relay process a standby at a distance runs through.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Where it lives, which binaries, whether it runs and on which port.
    Status,
    /// Create if needed and start; it stays up until `pglab sandbox stop`.
    Start(StartArgs),
    /// Stop the server (the cluster stays for next time).
    Stop,
    /// Stop and delete the cluster and everything in it.
    Destroy,
    /// Copy tables of a real server (whole or sampled, read-only there) into the sandbox.
    Import(ImportArgs),
}

/// `pglab sandbox start [--standbys N] [--standby-rtt 2ms]`.
#[derive(Debug, Clone, Default, Args)]
pub struct StartArgs {
    /// Physical streaming standbys of the sandbox (0-4), each its own cluster made with
    /// pg_basebackup through a replication slot; 0 removes them. Default: the ones it has.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=4))]
    pub standbys: Option<u32>,
    /// Emulated round trip between the sandbox and its standbys (e.g. 2ms; 0 = none): a
    /// relay on 127.0.0.1 holds each packet RTT/2 each way. Latency only: no bandwidth limit,
    /// no loss. Default: the last one chosen.
    #[arg(long, value_name = "DURATION")]
    pub standby_rtt: Option<String>,
}

/// The standby relay process (`pglab __standby-relay`), spawned by pglab itself.
#[derive(Debug, Clone, Args)]
pub struct RelayArgs {
    #[arg(long)]
    pub listen_port: u16,
    #[arg(long)]
    pub to_port: u16,
    #[arg(long)]
    pub one_way_us: u64,
    #[arg(long)]
    pub ready_file: PathBuf,
}

/// `pglab sandbox import --from CONNINFO --table SCHEMA.NAME …`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The server to read from: a URL or key=value conninfo. It is only read, in one
    /// REPEATABLE READ READ ONLY transaction; nothing is created or changed there.
    #[arg(long, value_name = "CONNINFO")]
    pub from: String,
    /// A table to import, SCHEMA.NAME (repeat for more; foreign keys between them are kept).
    #[arg(long = "table", value_name = "SCHEMA.NAME", required = true)]
    pub tables: Vec<String>,
    /// Import about PCT percent of each table's rows (TABLESAMPLE BERNOULLI, in the table's
    /// physical order).
    #[arg(long, value_name = "PCT")]
    pub sample: Option<String>,
    /// Import about N rows of each table (BERNOULLI at N over its row estimate).
    #[arg(long, value_name = "N")]
    pub rows: Option<String>,
    /// Seed of the sample (REPEATABLE): the same seed picks the same rows.
    #[arg(long, default_value_t = 42, value_name = "N")]
    pub seed: u64,
    /// Recreate the tables' indexes (keys and unique constraints come along either way).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = ["on", "off"])]
    pub indexes: String,
}
