//! `pglab capture`'s flags.

use std::path::PathBuf;

use clap::Args;

/// `pglab capture --db CONNINFO [--top N | --coverage P%] [--sample DURATION] [--since-reset] --out FILE`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Keep the top N statements by total execution time (default: 20).
    #[arg(long, value_name = "N", conflicts_with = "coverage")]
    pub top: Option<usize>,
    /// Keep as many statements as cover this share of the total execution time: 90%.
    #[arg(long, value_name = "PERCENT")]
    pub coverage: Option<String>,
    /// How long to sample pg_stat_activity for real parameter values (0: not at all; values
    /// then come from the columns' statistics).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub sample: String,
    /// Take each statement's figures since pg_stat_statements was last reset instead of the
    /// window (the difference of two reads around --sample).
    #[arg(long)]
    pub since_reset: bool,
    /// Where to write the workload.
    #[arg(long, value_name = "FILE", default_value = "workload.sql")]
    pub out: PathBuf,
}
