//! A resolved target and how to open sessions on it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use tokio_postgres::{Client, Config, NoTls};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::conninfo::{ConnParams, Secret, SessionAttrs, SslMode};
use super::error::describe_connect_error;
use super::{TargetError, pgpass, session_attrs, tls};

/// Where the server is, relative to pglab.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Location {
    /// pglab's own throwaway cluster.
    Sandbox { socket_dir: PathBuf, port: u16 },
    /// A unix socket on this machine.
    Socket { dir: PathBuf, port: u16 },
    /// TCP to this machine.
    Localhost { host: String, port: u16 },
    /// TCP to another machine: the host pane then describes pglab's machine, not the server's.
    Remote { host: String, port: u16 },
}

impl Location {
    pub fn is_local(&self) -> bool {
        !matches!(self, Location::Remote { .. })
    }
    pub fn label(&self) -> String {
        match self {
            Location::Sandbox { .. } => "sandbox".into(),
            Location::Socket { dir, port } => format!("socket {}:{port}", dir.display()),
            Location::Localhost { host, port } => format!("{host}:{port} (local)"),
            Location::Remote { host, port } => format!("{host}:{port} (remote)"),
        }
    }
}

fn is_local_host(host: &str) -> bool {
    if host == "localhost" || host.starts_with("127.") || host == "::1" {
        return true;
    }
    let own = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    !own.is_empty() && host.eq_ignore_ascii_case(&own)
}

/// A server pglab can open sessions on: parameters plus what was learnt while connecting
/// (a password typed at the prompt is kept in memory only).
pub struct Target {
    pub params: ConnParams,
    pub location: Location,
    tls: Option<MakeRustlsConnect>,
    password: Mutex<Option<Secret>>,
    pub connect_timeout: Duration,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("target", &self.params.redacted())
            .field("location", &self.location)
            .finish()
    }
}

impl Target {
    /// A target from resolved parameters; `sandbox` marks pglab's own cluster.
    pub fn new(params: ConnParams, sandbox: bool) -> Result<Target, TargetError> {
        let first = params.hosts.first().cloned().unwrap_or_default();
        let location = if sandbox {
            Location::Sandbox {
                socket_dir: PathBuf::from(&first),
                port: params.port,
            }
        } else if first.starts_with('/') {
            Location::Socket {
                dir: PathBuf::from(&first),
                port: params.port,
            }
        } else if is_local_host(&first) {
            Location::Localhost {
                host: first.clone(),
                port: params.port,
            }
        } else {
            Location::Remote {
                host: first.clone(),
                port: params.port,
            }
        };
        let tls = if first.starts_with('/') {
            None
        } else {
            tls::connector(&params)?
        };
        let password = params.password.clone();
        let connect_timeout = Duration::from_secs(params.connect_timeout_s.unwrap_or(10).max(1));
        Ok(Target {
            params,
            location,
            tls,
            password: Mutex::new(password),
            connect_timeout,
        })
    }

    /// `user@host:port/db`, never the password.
    pub fn describe(&self) -> String {
        self.params.redacted()
    }

    pub fn is_sandbox(&self) -> bool {
        matches!(self.location, Location::Sandbox { .. })
    }

    fn known_password(&self, host: &str) -> Option<Secret> {
        if let Some(p) = self.password.lock().ok().and_then(|g| g.clone()) {
            return Some(p);
        }
        let file = self.params.passfile.clone().or_else(pgpass::default_path)?;
        pgpass::lookup(
            &file,
            host,
            self.params.port,
            &self.params.dbname,
            &self.params.user,
        )
    }

    /// Remember a password (typed at a prompt) for the following sessions, in memory only.
    pub(crate) fn set_password(&self, p: Secret) {
        if let Ok(mut g) = self.password.lock() {
            *g = Some(p);
        }
    }

    fn config_for(&self, host: &str) -> Config {
        let mut c = Config::new();
        if host.starts_with('/') {
            c.host_path(host);
            c.ssl_mode(tokio_postgres::config::SslMode::Disable);
        } else {
            c.host(host);
            c.ssl_mode(match self.params.sslmode {
                SslMode::Disable => tokio_postgres::config::SslMode::Disable,
                SslMode::Allow | SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
                _ => tokio_postgres::config::SslMode::Require,
            });
        }
        c.port(self.params.port)
            .user(&self.params.user)
            .dbname(&self.params.dbname)
            .application_name(&self.params.application_name)
            .connect_timeout(self.connect_timeout)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30));
        c.options(self.options());
        if let Some(p) = self.known_password(host) {
            c.password(p.expose());
        }
        c
    }

    /// The startup options every session pglab opens gets: the user's (`options`), then
    /// `search_path=pg_catalog` — names resolve in the system catalog only (experiment
    /// sessions add their lab schema after it): a function or operator someone put in
    /// `public` with a better-matching signature than the built-in one would otherwise run as
    /// pglab's role, often a superuser (the CVE-2018-1058 pattern). A startup option, not a
    /// `SET`: no transaction, so an idle server's commit rate stays pglab-free. (A pooler
    /// such as pgbouncer must pass or ignore `options`: `ignore_startup_parameters`.)
    pub(crate) fn options(&self) -> String {
        const PIN: &str = "-c search_path=pg_catalog";
        match &self.params.options {
            Some(o) if !o.trim().is_empty() => format!("{o} {PIN}"),
            _ => PIN.to_string(),
        }
    }

    /// The same target as a libpq connection string (for the libpq loader): every host, the
    /// port, user, database, application name, TLS mode and root certificate, options, the
    /// connect timeout, and a password pglab holds (typed at the prompt, from the connection
    /// string or `PGPASSWORD`); otherwise libpq reads the password file itself. Keepalives as
    /// pglab's own sessions have them; GSS encryption off, whatever `PGGSSENCMODE` says;
    /// the client certificate, revocation list and `target_session_attrs` as resolved.
    pub fn libpq_conninfo(&self) -> String {
        use super::libpq::conninfo_value as v;
        let p = &self.params;
        let sslmode = p.sslmode.as_str();
        let mut s = format!(
            "host={} port={} user={} dbname={} application_name={} sslmode={sslmode} connect_timeout={} \
             keepalives=1 keepalives_idle=30 gssencmode=disable target_session_attrs={}",
            v(&p.hosts.join(",")),
            p.port,
            v(&p.user),
            v(&p.dbname),
            v(&p.application_name),
            // libpq takes whole seconds and treats 1 as 2.
            (self.connect_timeout.as_secs_f64().ceil() as u64).max(2),
            p.target_session_attrs.as_str(),
        );
        for (k, f) in [
            ("sslrootcert", &p.sslrootcert),
            ("sslcert", &p.sslcert),
            ("sslkey", &p.sslkey),
            ("sslcrl", &p.sslcrl),
        ] {
            if let Some(f) = f {
                s.push_str(&format!(" {k}={}", v(&f.to_string_lossy())));
            }
        }
        s.push_str(&format!(" options={}", v(&self.options())));
        if let Some(f) = &p.passfile {
            s.push_str(&format!(" passfile={}", v(&f.to_string_lossy())));
        }
        if let Some(pw) = self.password.lock().ok().and_then(|g| g.clone()) {
            s.push_str(&format!(" password={}", v(pw.expose())));
        }
        s
    }

    /// Open a session. The connection's I/O runs on its own tokio task; the returned client
    /// reports `is_closed()` once that task ends (server gone, terminated, network).
    pub async fn connect(&self) -> Result<Client, TargetError> {
        self.connect_inner(None).await
    }

    /// Open a session whose server notices (e.g. `trace_sort` LOG lines with
    /// `client_min_messages = log`) arrive on the returned channel.
    pub async fn connect_with_notices(
        &self,
    ) -> Result<(Client, tokio::sync::mpsc::UnboundedReceiver<String>), TargetError> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let client = self.connect_inner(Some(tx)).await?;
        Ok((client, rx))
    }

    /// Try the hosts in order; with `target_session_attrs` other than `any`, keep a session
    /// only on a server that is what it asks for (`prefer-standby`: a standby, else any).
    async fn connect_inner(
        &self,
        notices: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    ) -> Result<Client, TargetError> {
        let attrs = self.params.target_session_attrs;
        let mut last = None;
        for &strict in attrs.passes() {
            for host in &self.params.hosts {
                let whom = if host.starts_with('/') {
                    format!("{}/.s.PGSQL.{}", host, self.params.port)
                } else {
                    format!("{}:{}", host, self.params.port)
                };
                let client = match self.connect_host(host, &whom, notices.clone()).await {
                    Ok(c) => c,
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                if attrs == SessionAttrs::Any {
                    return Ok(client);
                }
                match session_attrs::state(&client).await {
                    Ok(st) if attrs.accepts(st, strict) => return Ok(client),
                    Ok(st) => last = Some(TargetError::Connect(attrs.rejects(&whom, st))),
                    Err(e) => {
                        last = Some(TargetError::Connect(format!(
                            "{whom}: cannot tell what the server is for target_session_attrs={}: {e}",
                            attrs.as_str()
                        )))
                    }
                }
            }
        }
        Err(last.unwrap_or_else(|| TargetError::Connect("no host to connect to".into())))
    }

    /// One connection attempt to one host.
    async fn connect_host(
        &self,
        host: &str,
        whom: &str,
        notices: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    ) -> Result<Client, TargetError> {
        let config = self.config_for(host);
        let attempt = async {
            match &self.tls {
                Some(tls) if !host.starts_with('/') => {
                    let (client, conn) = config.connect(tls.clone()).await?;
                    tokio::spawn(drive(conn, notices.clone()));
                    Ok::<_, tokio_postgres::Error>(client)
                }
                _ => {
                    let (client, conn) = config.connect(NoTls).await?;
                    tokio::spawn(drive(conn, notices.clone()));
                    Ok(client)
                }
            }
        };
        match tokio::time::timeout(self.connect_timeout + Duration::from_secs(1), attempt).await {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(e)) => {
                tracing::info!("connect to {whom} failed: {e:?}");
                Err(describe_connect_error(
                    &e,
                    whom,
                    &self.params.user,
                    &self.params.dbname,
                ))
            }
            Err(_) => Err(TargetError::Connect(format!(
                "timed out after {} s connecting to {whom}: check the host, port and firewall",
                self.connect_timeout.as_secs()
            ))),
        }
    }

    /// The socket file of the first host when it is a local unix socket directory: where
    /// [`Target::connect_lean`] can open a session.
    pub fn lean_socket(&self) -> Option<PathBuf> {
        // A choice among hosts by what they are goes through [`Target::connect`].
        if self.params.target_session_attrs != SessionAttrs::Any {
            return None;
        }
        let host = self.params.hosts.first().filter(|h| h.starts_with('/'))?;
        Some(PathBuf::from(format!(
            "{host}/.s.PGSQL.{}",
            self.params.port
        )))
    }

    /// A session over [`crate::server::lean::LeanStream`] to the first host, when that is a
    /// local unix socket (`None` otherwise: use [`Target::connect`]). Its connection task
    /// runs on the calling runtime; cancel its queries with [`Target::cancel_query_at`].
    pub async fn connect_lean(&self) -> Option<Result<Client, TargetError>> {
        let path = self.lean_socket()?;
        let host = self.params.hosts.first()?.clone();
        let whom = path.display().to_string();
        let config = self.config_for(&host);
        let attempt = async {
            let stream = super::lean::LeanStream::connect(&path)
                .map_err(|e| TargetError::Connect(format!("cannot connect to {whom}: {e}")))?;
            let (client, conn) = config.connect_raw(stream, NoTls).await.map_err(|e| {
                describe_connect_error(&e, &whom, &self.params.user, &self.params.dbname)
            })?;
            tokio::spawn(drive(conn, None));
            Ok(client)
        };
        Some(
            match tokio::time::timeout(self.connect_timeout + Duration::from_secs(1), attempt).await
            {
                Ok(r) => r,
                Err(_) => Err(TargetError::Connect(format!(
                    "timed out after {} s connecting to {whom}",
                    self.connect_timeout.as_secs()
                ))),
            },
        )
    }

    /// [`Target::cancel_query`] for a session opened by [`Target::connect_lean`] (its token
    /// does not know the socket): the cancel request goes to `socket`.
    pub async fn cancel_query_at(&self, token: &tokio_postgres::CancelToken, socket: &Path) {
        let r = match tokio::net::UnixStream::connect(socket).await {
            Ok(s) => token.cancel_query_raw(s, NoTls).await,
            Err(e) => {
                tracing::warn!("cancel request failed: {e}");
                return;
            }
        };
        if let Err(e) = r {
            tracing::warn!("cancel request failed: {e}");
        }
    }

    /// Ask the server to cancel the query running on the session `token` came from
    /// (dropping a future does not: the backend would go on). Errors are logged only: the
    /// caller waits for the query to end either way.
    pub async fn cancel_query(&self, token: &tokio_postgres::CancelToken) {
        let r = match &self.tls {
            Some(tls)
                if !self
                    .params
                    .hosts
                    .first()
                    .is_some_and(|h| h.starts_with('/')) =>
            {
                token.cancel_query(tls.clone()).await
            }
            _ => token.cancel_query(NoTls).await,
        };
        if let Err(e) = r {
            tracing::warn!("cancel request failed: {e}");
        }
    }

    /// Connect the first time, asking for a password on the terminal when the server wants
    /// one and none is known (only when `ask` is given, i.e. a terminal is attached).
    pub async fn connect_first(&self, ask: Option<&AskPassword>) -> Result<Client, TargetError> {
        match self.connect().await {
            Err(TargetError::NeedPassword) => {
                let Some(ask) = ask else {
                    return Err(TargetError::NeedPassword);
                };
                let prompt = format!("Password for {}: ", self.describe());
                let Some(p) = ask(&prompt) else {
                    return Err(TargetError::NeedPassword);
                };
                self.set_password(p);
                self.connect().await
            }
            other => other,
        }
    }
}

/// Drive a connection's I/O until it ends, passing server notices on when asked to.
async fn drive<S, T>(
    mut conn: tokio_postgres::Connection<S, T>,
    notices: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures_util::StreamExt;
    let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
    while let Some(m) = messages.next().await {
        match m {
            Ok(tokio_postgres::AsyncMessage::Notice(n)) => {
                if let Some(tx) = &notices {
                    let _ = tx.send(n.message().to_string());
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::debug!("connection ended: {e}");
                break;
            }
        }
    }
}

/// A way to ask the user for a password (None: no answer).
pub type AskPassword = dyn Fn(&str) -> Option<Secret> + Sync;

/// Ask for a password on the controlling terminal without echo; None when there is none.
pub fn ask_password_on_tty(prompt: &str) -> Option<Secret> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return None;
    }
    rpassword::prompt_password(prompt)
        .ok()
        .filter(|p| !p.is_empty())
        .map(Secret::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_pins_its_search_path_after_the_users_options() {
        let env: std::collections::BTreeMap<&str, &str> = Default::default();
        let mine = |conninfo: &str| {
            let p = super::super::conninfo::resolve(Some(conninfo), &env).unwrap();
            Target::new(p, false).unwrap()
        };
        assert_eq!(
            mine("host=/tmp port=5432").options(),
            "-c search_path=pg_catalog"
        );
        // A search_path of the user's own comes first and is overridden.
        let t = mine("host=/tmp options='-c work_mem=64MB -c search_path=public'");
        assert_eq!(
            t.options(),
            "-c work_mem=64MB -c search_path=public -c search_path=pg_catalog"
        );
        assert!(
            t.libpq_conninfo().contains(
                "options='-c work_mem=64MB -c search_path=public -c search_path=pg_catalog'"
            ),
            "{}",
            t.libpq_conninfo()
        );
    }
}
