//! The TUI's road to a run: the disk and connection-slot preflight, then the engine's one gate
//! ([`crate::experiment::lab::gate`]) on a fresh session, its refusal in the gate's own words.
//! `pglab run` passes the same gate, so a run the TUI refuses the command line refuses too.

use std::path::PathBuf;
use std::sync::Arc;

use crate::experiment::ExperimentSpec;
use crate::experiment::lab::gate::{self, Refusal};
use crate::experiment::lab::preflight::{self, Preflight};
use crate::server::{Sandbox, ServerSnapshot, Target, snapshot};

/// Where a TUI run would go.
#[derive(Clone)]
pub struct Road {
    pub target: Arc<Target>,
    pub sandbox: Option<Sandbox>,
    pub schema: String,
    pub local_data_dir: Option<PathBuf>,
}

/// The verdict on `spec` before it starts: free space and slots (with the Target pane's last
/// reading `server`, when there is one), then the gate.
pub async fn verdict(
    road: &Road,
    spec: &ExperimentSpec,
    server: Option<&ServerSnapshot>,
) -> Preflight {
    let dir = road.local_data_dir.clone();
    let free = tokio::task::spawn_blocking(move || preflight::free_space(dir.as_deref(), None))
        .await
        .ok()
        .flatten();
    let mut verdict = preflight::preflight(spec, free, server, preflight::CONFIRM_ABOVE);
    if verdict.refuse.is_some() {
        return verdict;
    }
    match through_gate(road, spec, server).await {
        Ok(p) => verdict.warnings.extend(p.notes()),
        Err(r) => verdict.refuse = Some(r.to_string()),
    }
    verdict
}

/// The gate on a session of its own (the pane's reading is taken when it has one).
async fn through_gate(
    road: &Road,
    spec: &ExperimentSpec,
    server: Option<&ServerSnapshot>,
) -> Result<gate::Prepared, Refusal> {
    let client = road
        .target
        .connect()
        .await
        .map_err(|e| Refusal::Unreachable(e.to_string()))?;
    let read;
    let server = match server {
        Some(s) => s,
        None => {
            read = snapshot::read(&client, &road.target)
                .await
                .map_err(|e| Refusal::Unreachable(e.to_string()))?;
            &read
        }
    };
    gate::prepare(
        &client,
        &road.target,
        server,
        spec,
        road.sandbox.as_ref(),
        &road.schema,
    )
    .await
}
