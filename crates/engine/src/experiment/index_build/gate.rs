//! An index-build's own check at the gate (`lab::gate`), before anything of the run is sent.

use tokio_postgres::Client;

use super::{IndexBuildSpec, own_table, own_writes};
use crate::experiment::lab::gate::Refusal;

/// An index-build on an existing table: the table must be there and readable, and on a
/// server pglab did not start its copies' writes must be asked for.
pub(super) async fn check(
    client: &Client,
    s: &IndexBuildSpec,
    on_sandbox: bool,
) -> Result<(), Refusal> {
    let Some(own) = &s.table else {
        return Ok(());
    };
    match own_table::check(client, own).await {
        // The flag at fault, as the command line names it: `--table: there is no table …`.
        Err(e @ own_table::TableProblem::Field { .. }) => {
            return Err(Refusal::Table(format!("--{e}")));
        }
        Err(e) => return Err(Refusal::Table(e.to_string())),
        Ok(_) => {}
    }
    if on_sandbox {
        return Ok(());
    }
    let info = own_table::inspect(client, own, false)
        .await
        .map_err(Refusal::Table)?;
    own_writes::plan(client, s, own, &info)
        .await
        .map(|_| ())
        .map_err(Refusal::Table)
}
