//! A query's own check at the gate (`lab::gate`), before anything of the run is sent.

use tokio_postgres::Client;

use super::QuerySpec;
use crate::experiment::lab::gate::Refusal;

/// A query's statements: by the grammar first, then by the server (its parser, the functions
/// they call, the candidates' tables).
pub(super) async fn check(
    client: &Client,
    q: &QuerySpec,
    schema: &str,
    on_sandbox: bool,
) -> Result<(), Refusal> {
    use super::{precheck, replay_skip};
    let mut problems = precheck::check_spec(q, on_sandbox);
    if problems.is_empty() {
        // A captured workload's replay leaves out what the server will not parse (the run
        // says which, and the coverage left); the rest is checked as any query's statements.
        // Only parsed here: the run itself runs each once on the sandbox, rolled back.
        let kept = match replay_skip::check(client, q, schema, false).await {
            Ok(Some(coverage)) => replay_skip::without(q, &coverage),
            Ok(None) => q.clone(),
            Err(e) => return Err(Refusal::Query(vec![e.to_string()])),
        };
        problems = precheck::check_on_server(client, &kept, schema, on_sandbox, false).await;
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Refusal::Query(problems)),
    }
}
