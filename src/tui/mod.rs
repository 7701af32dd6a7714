//! The terminal UI (temporary contract; the tui branch replaces this file).
use crate::commands::Ctx;
use color_eyre::eyre::Result;
pub async fn run(_ctx: Ctx) -> Result<i32> {
    Err(color_eyre::eyre::eyre!("the TUI is not in this build yet"))
}
