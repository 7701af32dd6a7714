//! `pglab probe` (lands with the host module).
use super::Ctx;
use crate::cli::ProbeArgs;
use color_eyre::eyre::Result;
pub async fn run(_ctx: &Ctx, _a: ProbeArgs) -> Result<i32> {
    Err(color_eyre::eyre::eyre!("probe is not in this build yet"))
}
