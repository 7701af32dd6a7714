//! A captured statement that calls a function whose body may write (a VOLATILE function
//! outside PostgreSQL's read-only built-ins, directly or through a view it reads) is left out
//! of the workload with the reason, as `pglab run query` would refuse it on a server pglab did
//! not start: the file then says which function and how a replay could allow it.

use tokio_postgres::Client;

use super::Captured;
use crate::sql::volatile::Lookup;

/// Leave `c` out when it calls such a function (a statement already left out stays as it is).
pub async fn leave_out(client: &Client, c: &mut Captured, lookup: &mut Lookup) {
    if c.left_out.is_some() {
        return;
    }
    let why = match lookup.refused(client, &c.normalized, &[]).await {
        Ok(refused) if refused.is_empty() => return,
        Ok(refused) => refused
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => format!(
            "the catalog could not say which functions it calls ({})",
            crate::sql::error::describe_query_error(&e)
        ),
    };
    c.sql = None;
    c.left_out = Some(why);
}
