//! `pglab verify`'s flags.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// How the comparison is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerifyFormat {
    Table,
    Json,
    Md,
}

/// `pglab verify BEFORE AFTER [--format table|json|md] [--out FILE] [--expect tune.sql]`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The capture of the window before the change (pglab capture --sample … --out FILE).
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The capture of the window after it.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// table, json or md (md writes an SVG of the ratios beside --out).
    #[arg(long, value_enum, default_value = "table")]
    pub format: VerifyFormat,
    /// Write to this file instead of stdout (with --format md, the SVG goes beside it).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// A tune's tune.sql: its predicted ratio beside production's, per statement.
    #[arg(long, value_name = "TUNE_SQL")]
    pub expect: Option<PathBuf>,
    /// The family-wise confidence across the statements compared.
    #[arg(long, value_name = "PERCENT", default_value = "95%")]
    pub confidence: String,
    /// The smallest change worth naming (and the equivalence threshold).
    #[arg(long, value_name = "PERCENT", default_value = "10%")]
    pub min_effect: String,
    /// Statements with fewer calls in either window are listed apart, not compared.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub min_calls: u64,
}
