//! Errors a user can cause or meet while reaching a server, each a sentence with a way on.

/// What went wrong with the target, said so a DBA knows what to do next.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("bad connection string: {0}")]
    BadConninfo(String),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("{0}")]
    Connect(String),
    #[error(
        "the server wants a password and none is known: set PGPASSWORD, add it to ~/.pgpass, or run pglab in a terminal to be asked"
    )]
    NeedPassword,
    #[error("{0}")]
    Sandbox(String),
    #[error("{0}")]
    Query(String),
}

/// The chain of sources of an error, joined, for pattern matching and for the log.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Turn a failed connection attempt into a sentence naming where and what to do.
pub fn describe_connect_error(
    e: &tokio_postgres::Error,
    whom: &str,
    user: &str,
    db: &str,
) -> TargetError {
    if let Some(db_err) = e.as_db_error() {
        let code = db_err.code().code();
        let msg = db_err.message();
        return TargetError::Connect(match code {
            "28P01" => format!(
                "password authentication failed for user \"{user}\" at {whom}: check the password (PGPASSWORD, ~/.pgpass or the prompt)"
            ),
            "28000" => {
                format!("{whom} refused the login: {msg} (check pg_hba.conf, the user and sslmode)")
            }
            "3D000" => format!(
                "database \"{db}\" does not exist on {whom}: create it or choose another with dbname=…"
            ),
            "53300" => format!("{whom} has no free connection slots: {msg}"),
            "57P03" => format!("{whom} is starting up or shutting down: try again in a moment"),
            _ => format!("{whom} refused the connection: {msg} (SQLSTATE {code})"),
        });
    }
    let text = chain(e);
    let lower = text.to_lowercase();
    if lower.contains("password missing") {
        return TargetError::NeedPassword;
    }
    TargetError::Connect(if lower.contains("server does not support tls") {
        format!(
            "{whom} does not offer TLS but sslmode requires it: enable ssl on the server or use sslmode=prefer"
        )
    } else if lower.contains("tls") || lower.contains("certificate") {
        format!(
            "TLS handshake with {whom} failed: {text} (check sslrootcert and the server certificate, or use sslmode=require to skip verification)"
        )
    } else if lower.contains("connection refused") {
        format!(
            "connection refused by {whom}: is PostgreSQL running and listening there (listen_addresses, port)?"
        )
    } else if lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("no address")
    {
        format!("unknown host in {whom}: check the host name (it did not resolve)")
    } else if lower.contains("no such file or directory") {
        format!(
            "no PostgreSQL socket at {whom}: is a server running on this machine with that socket directory and port?"
        )
    } else if lower.contains("timeout") || lower.contains("timed out") {
        format!("timed out connecting to {whom}: check the host, port and firewall")
    } else if lower.contains("permission denied") {
        format!(
            "permission denied opening {whom}: the socket directory is not accessible to this user"
        )
    } else {
        format!("cannot connect to {whom}: {text}")
    })
}

/// A query error as one line: the server's message and SQLSTATE, with plain words for the
/// states a run can meet (cancel, disk full, terminated, lost connection).
pub fn describe_query_error(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return describe_server_error(db.code().code(), db.message());
    }
    if e.is_closed() {
        return "the connection to the server was lost".into();
    }
    let text = chain(e);
    if text.contains("error communicating with the server") || text.contains("connection closed") {
        return format!("the connection to the server was lost: {text}");
    }
    text
}

/// A server's error (SQLSTATE `code`, message `msg`) as one line, with plain words for the
/// states a run can meet.
pub fn describe_server_error(code: &str, msg: &str) -> String {
    match code {
        "57014" => format!("cancelled by request: {msg}"),
        "53100" => {
            format!("disk full on the server: {msg} (SQLSTATE 53100); free space or use fewer rows")
        }
        "57P01" => {
            format!("the server ended the session (administrator command or shutdown): {msg}")
        }
        "57P02" | "57P03" => format!("the server is shutting down or restarting: {msg}"),
        "25006" => format!("the server is read-only here: {msg}"),
        "55P03" => format!("gave up waiting for a lock (lock_timeout): {msg}"),
        "42501" => format!("permission denied: {msg}"),
        _ => format!("{msg} (SQLSTATE {code})"),
    }
}

/// The SQLSTATE of an error, if the server sent one.
pub fn sqlstate(e: &tokio_postgres::Error) -> Option<&str> {
    e.code().map(|c| c.code())
}
