//! Whether the server the clients connect to has a free connection slot for each of them: the
//! target for a run on it (read from its snapshot), the standby for a run on a standby. A
//! standby has its own `max_connections` and its own sessions, which the primary's figures say
//! nothing of, so there they are read on the standby itself when the trial starts.

use tokio_postgres::Client;

/// Slots free for a non-superuser on the server `c` is connected to: `max_connections` minus
/// `superuser_reserved_connections` minus the client sessions in use, `c`'s own left out (it
/// is closed before the clients connect).
pub(crate) async fn free_on(c: &Client) -> Result<i64, tokio_postgres::Error> {
    let row = c
        .query_one(
            "SELECT current_setting('max_connections')::int8
                  - current_setting('superuser_reserved_connections')::int8
                  - (SELECT count(*) FROM pg_stat_activity
                      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

/// The server the clients connect to, in the refusal's words.
pub(crate) enum Server<'a> {
    /// The run's target.
    Target,
    /// A standby of the sandbox the clients read on, by name.
    Standby(&'a str),
}

/// The refusal when `n` clients, needing `need` connections, do not fit in the `free` slots
/// of `server` (None: they fit).
pub(crate) fn short(n: usize, need: usize, free: i64, server: Server) -> Option<String> {
    if need as i64 <= free {
        return None;
    }
    let free = free.max(0);
    Some(match server {
        Server::Target => format!(
            "{n} clients need {need} connections but the server has only {free} free: use fewer clients or raise max_connections"
        ),
        Server::Standby(name) => format!(
            "{n} clients need {need} connections on {name}, the standby they read on, but it has only {free} free (its max_connections minus its sessions in use minus superuser_reserved_connections): use fewer clients, end sessions on {name}, or raise its max_connections (on a standby at least the primary's)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_server_that_is_short() {
        assert_eq!(short(4, 6, 6, Server::Target), None);
        assert_eq!(
            short(4, 6, 5, Server::Target).as_deref(),
            Some(
                "4 clients need 6 connections but the server has only 5 free: use fewer clients or raise max_connections"
            )
        );
        let s = short(8, 8, -2, Server::Standby("pglab_standby_1")).unwrap();
        assert!(
            s.starts_with(
                "8 clients need 8 connections on pglab_standby_1, the standby they read on, but it has only 0 free"
            ),
            "{s}"
        );
        assert_eq!(short(8, 8, 8, Server::Standby("pglab_standby_1")), None);
    }
}
