//! The one gate every road to a run passes. `pglab run` and the TUI's run and sweep keys both
//! call [`prepare`] on a session of the target before anything of the run is sent, and print
//! its refusal as [`Refusal`]'s `Display` gives it: what one front end refuses, the other
//! refuses in the same words. It asks, in order: may this server take the run at all (a
//! standby, a read-only database), do the swept settings apply here (and leave the sandbox's
//! own alone), do a query's statements, setup and candidates hold (the grammar, the server's
//! parser, the functions they call), is an existing table there and readable and are its
//! copies' writes asked for, and are generated tables on a server pglab did not start asked
//! for (`writes = lab`).

use thiserror::Error;
use tokio_postgres::Client;

use super::experiment::{Experiment, each_kind};
use super::lab_writes::{self, LabWrites};
use super::spec::ExperimentSpec;
use super::whatif::{self, Reach};
use crate::server::Sandbox;
use crate::server::{ServerSnapshot, Target};

/// Why a run does not start. The sentence is the `Display`, the same on every front end.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Refusal {
    /// The server cannot take what the run writes (a standby, a read-only database).
    #[error("{0}")]
    Server(String),
    /// A swept setting (`--set`) does not apply on this server.
    #[error("--set: {}", .0.join("; "))]
    Settings(Vec<String>),
    /// The sandbox's own settings, or another pglab's what-if, are in the way.
    #[error("{0}")]
    Sandbox(String),
    /// A query's statements, setup or candidates, one sentence each.
    #[error("{}", .0.join("; "))]
    Query(Vec<String>),
    /// An existing table (`--table`): not there, not readable, or its copies not asked for.
    #[error("{0}")]
    Table(String),
    /// Generated tables on a server pglab did not start without `writes = lab`.
    #[error("{0}")]
    LabWrites(LabWrites),
    /// The server could not be asked.
    #[error("the server could not be asked before the run: {0}")]
    Unreachable(String),
}

impl Refusal {
    /// Bad input the user can change (exit 2 headless), as against a server that cannot
    /// take the run or cannot be asked (exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(self, Refusal::Server(_) | Refusal::Unreachable(_))
    }
}

/// A run the gate let through, with what it will write where pglab did not start it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub on_sandbox: bool,
    /// Generated tables on a server pglab did not start (`writes = lab` given).
    pub lab_writes: Option<LabWrites>,
}

impl Prepared {
    /// What the front ends say before the run starts.
    pub fn notes(&self) -> Vec<String> {
        self.lab_writes
            .iter()
            .map(|w| {
                format!(
                    "this run writes on this server (writes = lab): {}",
                    w.sentence()
                )
            })
            .collect()
    }
}

/// Whether the run goes to pglab's own sandbox (the one place where it may write freely).
pub(crate) fn on_sandbox(target: &Target, sandbox: Option<&Sandbox>) -> bool {
    sandbox.is_some() && target.is_sandbox()
}

/// Check `spec` against the server on `client` (its snapshot `server`) before anything of the
/// run is sent. `sandbox`: pglab's sandbox when it is the target; `schema`: the lab schema.
/// Only reads the catalog: a refusal leaves the server as it was.
pub async fn prepare(
    client: &Client,
    target: &Target,
    server: &ServerSnapshot,
    spec: &ExperimentSpec,
    sandbox: Option<&Sandbox>,
    schema: &str,
) -> Result<Prepared, Refusal> {
    let on_sandbox = on_sandbox(target, sandbox);
    super::preflight::may_run(server, spec, on_sandbox).map_err(Refusal::Server)?;
    settings(client, server, spec, sandbox, on_sandbox).await?;
    each_kind!(spec, s => s.check_on_server(client, schema, on_sandbox).await)?;
    let exists = schema_exists(client, schema).await?;
    let lab_writes =
        lab_writes::check(spec, schema, exists, on_sandbox).map_err(Refusal::LabWrites)?;
    Ok(Prepared {
        on_sandbox,
        lab_writes,
    })
}

/// The `--set` sweep must apply here, and on the sandbox not clash with its own settings.
async fn settings(
    client: &Client,
    server: &ServerSnapshot,
    spec: &ExperimentSpec,
    sandbox: Option<&Sandbox>,
    on_sandbox: bool,
) -> Result<(), Refusal> {
    let reach = Reach::of(on_sandbox, server.citus.is_some());
    let plan = whatif::check(client, spec.settings(), reach)
        .await
        .map_err(Refusal::Settings)?;
    if let Some(s) = sandbox.filter(|_| on_sandbox && server.citus.is_none())
        && let Some(why) = whatif::sandbox_conflict(s, &plan)
    {
        return Err(Refusal::Sandbox(why));
    }
    Ok(())
}

/// Whether the lab schema is there already.
pub(crate) async fn schema_exists(client: &Client, schema: &str) -> Result<bool, Refusal> {
    client
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .await
        .map(|r| r.is_some())
        .map_err(|e| Refusal::Unreachable(crate::server::error::describe_query_error(&e)))
}
