//! Connection strings the libpq way: a URL (`postgresql://user@host:5432/db?sslmode=require`)
//! or `key=value` pairs (`host=/tmp port=5433 dbname='my db'`), completed from the `PG*`
//! environment variables and libpq's defaults.
//!
//! The parsed form keeps the password in a [`Secret`] whose `Debug`/`Display` never show it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use super::TargetError;
pub(crate) use super::session_attrs::SessionAttrs;

/// A password held in memory only: it prints as `********` and is never serialised.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("********")
    }
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    Disable,
    Allow,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub(crate) fn parse(s: &str) -> Result<SslMode, TargetError> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(TargetError::BadConninfo(format!(
                    "sslmode '{other}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )));
            }
        })
    }
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Everything needed to reach a server, resolved from `--db`, the environment and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnParams {
    /// Host names, IP addresses or socket directories (absolute paths), tried in order.
    pub hosts: Vec<String>,
    pub port: u16,
    pub user: String,
    pub dbname: String,
    pub password: Option<Secret>,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
    /// The client certificate and its key (libpq's default: `~/.postgresql/postgresql.crt`
    /// and `.key` when they exist), and a certificate revocation list for the server's.
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    pub sslcrl: Option<PathBuf>,
    pub target_session_attrs: SessionAttrs,
    pub application_name: String,
    pub connect_timeout_s: Option<u64>,
    pub passfile: Option<PathBuf>,
    pub options: Option<String>,
}

impl ConnParams {
    /// A description safe to show and store: `user@host:port/db`, never the password.
    pub(crate) fn redacted(&self) -> String {
        let host = self.hosts.join(",");
        if host.starts_with('/') {
            format!(
                "{}@{}/.s.PGSQL.{} db={}",
                self.user, host, self.port, self.dbname
            )
        } else {
            format!("{}@{}:{}/{}", self.user, host, self.port, self.dbname)
        }
    }
}

/// The keys this parser accepts (libpq's, minus the ones pglab cannot honour).
const KNOWN_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "user",
    "dbname",
    "password",
    "passfile",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslcrl",
    "target_session_attrs",
    "service",
    "application_name",
    "connect_timeout",
    "options",
];

/// Parse `--db`: a URL or `key=value` conninfo. Unknown keys are errors.
pub(crate) fn parse(input: &str) -> Result<BTreeMap<String, String>, TargetError> {
    let s = input.trim();
    let map = if s.starts_with("postgresql://") || s.starts_with("postgres://") {
        parse_url(s)?
    } else if s.contains('=') {
        parse_kv(s)?
    } else if s.is_empty() {
        BTreeMap::new()
    } else if s.contains(char::is_whitespace) {
        // libpq would take it as a database name with spaces; that is never what was meant.
        return Err(TargetError::BadConninfo(format!(
            "'{s}' is neither a URL (postgresql://user@host:5432/db) nor key=value pairs (host=db1 port=5432 dbname=sales); for a database name with spaces write dbname='{s}'"
        )));
    } else {
        // libpq treats a bare word as a database name.
        BTreeMap::from([("dbname".to_string(), s.to_string())])
    };
    for k in map.keys() {
        if !KNOWN_KEYS.contains(&k.as_str()) {
            return Err(TargetError::BadConninfo(format!(
                "unknown connection option '{k}' (known: {})",
                KNOWN_KEYS.join(", ")
            )));
        }
    }
    Ok(map)
}

fn parse_kv(s: &str) -> Result<BTreeMap<String, String>, TargetError> {
    let mut map = BTreeMap::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(TargetError::BadConninfo(format!(
                "'{key}' is missing '=value' (conninfo is key=value pairs, e.g. host=/tmp port=5432)"
            )));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            let mut closed = false;
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            value.push(n);
                        }
                    }
                    '\'' => {
                        closed = true;
                        break;
                    }
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(TargetError::BadConninfo(format!(
                    "the quoted value of '{key}' is not closed with a '"
                )));
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        value.push(n);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        if key.is_empty() {
            return Err(TargetError::BadConninfo(
                "a conninfo pair has no key before '='".into(),
            ));
        }
        map.insert(key, value);
    }
    Ok(map)
}

fn percent_decode(s: &str) -> Result<String, TargetError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or_else(|| {
                TargetError::BadConninfo(format!("bad %-escape in the URL near '{}'", &s[i..]))
            })?;
            let b = u8::from_str_radix(hex, 16).map_err(|_| {
                TargetError::BadConninfo(format!("bad %-escape '%{hex}' in the URL"))
            })?;
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| TargetError::BadConninfo("the URL is not valid UTF-8 after decoding".into()))
}

fn parse_url(s: &str) -> Result<BTreeMap<String, String>, TargetError> {
    let mut map = BTreeMap::new();
    let rest = s.split_once("://").map(|x| x.1).unwrap_or_default();
    let (rest, query) = match rest.split_once('?') {
        Some((a, q)) => (a, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match rest.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (rest, None),
    };
    let (userinfo, hostports) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if let Some(u) = userinfo {
        match u.split_once(':') {
            Some((user, pw)) => {
                map.insert("user".into(), percent_decode(user)?);
                map.insert("password".into(), percent_decode(pw)?);
            }
            None => {
                map.insert("user".into(), percent_decode(u)?);
            }
        }
    }
    if !hostports.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for hp in hostports.split(',') {
            let (h, p) = if let Some(stripped) = hp.strip_prefix('[') {
                // [::1]:5432
                let (h, rest) = stripped.split_once(']').ok_or_else(|| {
                    TargetError::BadConninfo(format!("unclosed '[' in host '{hp}'"))
                })?;
                (h.to_string(), rest.strip_prefix(':').map(str::to_string))
            } else {
                match hp.rsplit_once(':') {
                    Some((h, p)) => (h.to_string(), Some(p.to_string())),
                    None => (hp.to_string(), None),
                }
            };
            if !h.is_empty() {
                hosts.push(percent_decode(&h)?);
            }
            if let Some(p) = p {
                ports.push(p);
            }
        }
        if !hosts.is_empty() {
            map.insert("host".into(), hosts.join(","));
        }
        if !ports.is_empty() {
            map.insert("port".into(), ports.join(","));
        }
    }
    if let Some(p) = path.filter(|p| !p.is_empty()) {
        map.insert("dbname".into(), percent_decode(p)?);
    }
    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| {
                TargetError::BadConninfo(format!("URL parameter '{pair}' has no '=value'"))
            })?;
            map.insert(percent_decode(k)?, percent_decode(v)?);
        }
    }
    Ok(map)
}

/// Where to read environment variables from (the process environment, or a map in tests).
pub trait Env {
    fn var(&self, key: &str) -> Option<String>;
}

/// The real process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, key: &str) -> Option<String> {
        std::env::var(key).ok().filter(|v| !v.is_empty())
    }
}

impl Env for BTreeMap<&str, &str> {
    fn var(&self, key: &str) -> Option<String> {
        self.get(key).map(|s| s.to_string())
    }
}

/// True when the environment names a target (`PGHOST`, `PGPORT`, `PGDATABASE` or
/// `PGSERVICE`), so that pglab should not default to its sandbox.
pub(crate) fn env_names_target(env: &dyn Env) -> bool {
    ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE"]
        .iter()
        .any(|k| env.var(k).is_some())
}

/// Resolve `--db` (maybe empty) with the environment and libpq's defaults into [`ConnParams`].
/// As libpq: what the string says, then the service (`service=` or `PGSERVICE`, from
/// `pg_service.conf`), then the environment, then the defaults. The password, if any, comes
/// from those; the password file is consulted later by the connector, which knows the host.
pub fn resolve(db: Option<&str>, env: &dyn Env) -> Result<ConnParams, TargetError> {
    let map = parse(db.unwrap_or(""))?;
    let service = match map.get("service").cloned().or_else(|| env.var("PGSERVICE")) {
        Some(name) => {
            let s = super::service::lookup(&name, env)?;
            if let Some(k) = s.keys().find(|k| !KNOWN_KEYS.contains(&k.as_str())) {
                return Err(TargetError::BadConninfo(format!(
                    "service '{name}' sets '{k}', which pglab does not know (known: {})",
                    KNOWN_KEYS.join(", ")
                )));
            }
            s
        }
        None => BTreeMap::new(),
    };
    let get = |key: &str, var: &str| {
        map.get(key)
            .or_else(|| service.get(key))
            .cloned()
            .or_else(|| env.var(var))
    };
    let hosts: Vec<String> = get("host", "PGHOST")
        .or_else(|| get("hostaddr", "PGHOSTADDR"))
        .map(|h| h.split(',').map(str::to_string).collect())
        .unwrap_or_else(|| vec![default_socket_dir()]);
    let port = match get("port", "PGPORT") {
        None => 5432,
        Some(p) => {
            let first = p.split(',').next().unwrap_or_default();
            first
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| {
                    TargetError::BadConninfo(format!(
                        "port '{p}' is not a TCP port number (1-65535)"
                    ))
                })?
        }
    };
    let user = get("user", "PGUSER").unwrap_or_else(current_os_user);
    let dbname = get("dbname", "PGDATABASE").unwrap_or_else(|| user.clone());
    let sslmode = match get("sslmode", "PGSSLMODE") {
        Some(m) => SslMode::parse(&m)?,
        None => SslMode::Prefer,
    };
    let connect_timeout_s = match get("connect_timeout", "PGCONNECT_TIMEOUT") {
        None => None,
        Some(t) => Some(t.parse::<u64>().map_err(|_| {
            TargetError::BadConninfo(format!("connect_timeout '{t}' is not a number of seconds"))
        })?),
    };
    Ok(ConnParams {
        hosts,
        port,
        user,
        dbname,
        password: get("password", "PGPASSWORD").map(Secret::new),
        sslmode,
        sslrootcert: get("sslrootcert", "PGSSLROOTCERT").map(PathBuf::from),
        sslcert: get("sslcert", "PGSSLCERT").map(PathBuf::from),
        sslkey: get("sslkey", "PGSSLKEY").map(PathBuf::from),
        sslcrl: get("sslcrl", "PGSSLCRL").map(PathBuf::from),
        target_session_attrs: match get("target_session_attrs", "PGTARGETSESSIONATTRS") {
            Some(v) => SessionAttrs::parse(&v)?,
            None => SessionAttrs::Any,
        },
        application_name: get("application_name", "PGAPPNAME").unwrap_or_else(|| "pglab".into()),
        connect_timeout_s,
        passfile: get("passfile", "PGPASSFILE").map(PathBuf::from),
        options: get("options", "PGOPTIONS"),
    })
}

fn default_socket_dir() -> String {
    for d in ["/var/run/postgresql", "/run/postgresql", "/tmp"] {
        if std::path::Path::new(d).is_dir() {
            return d.to_string();
        }
    }
    "/tmp".into()
}

/// The name of the user running pglab (libpq's default role name).
pub(crate) fn current_os_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "postgres".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn url_with_everything() {
        let p = resolve(
            Some("postgresql://al%40ice:s3cr%3At@db.example.com:6543/sales?sslmode=verify-full&application_name=x"),
            &env(&[]),
        )
        .unwrap();
        assert_eq!(p.user, "al@ice");
        assert_eq!(p.password.as_ref().unwrap().expose(), "s3cr:t");
        assert_eq!(p.hosts, ["db.example.com"]);
        assert_eq!(p.port, 6543);
        assert_eq!(p.dbname, "sales");
        assert_eq!(p.sslmode, SslMode::VerifyFull);
        assert!(!format!("{p:?}").contains("s3cr"));
        assert!(!p.redacted().contains("s3cr"));
    }

    #[test]
    fn kv_with_quotes_and_env_defaults() {
        let p = resolve(
            Some("host=/tmp/sock dbname='my db' password='it\\'s'"),
            &env(&[("PGPORT", "5433"), ("PGUSER", "bob")]),
        )
        .unwrap();
        assert_eq!(p.hosts, ["/tmp/sock"]);
        assert_eq!(p.dbname, "my db");
        assert_eq!(p.password.unwrap().expose(), "it's");
        assert_eq!((p.port, p.user.as_str()), (5433, "bob"));
        assert_eq!(p.application_name, "pglab");
    }

    #[test]
    fn bad_input_is_a_sentence() {
        for bad in [
            "host=x port=notaport",
            "postgresql://h:99999/db",
            "sslmode=sometimes",
            "host='unclosed",
            "bogus=1",
            "=x",
        ] {
            let e = resolve(Some(bad), &env(&[]))
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(!e.is_empty(), "{bad}");
        }
        let e = resolve(Some("bogus=1"), &env(&[])).unwrap_err().to_string();
        assert!(e.contains("unknown connection option 'bogus'"), "{e}");
    }

    #[test]
    fn env_target_detection() {
        assert!(env_names_target(&env(&[("PGHOST", "x")])));
        assert!(!env_names_target(&env(&[("PGUSER", "x")])));
    }
}
