//! `~/.pgpass` (or `PGPASSFILE`): `hostname:port:database:username:password` lines, `*`
//! wildcards, `\:` and `\\` escapes; ignored unless its mode is 0600 or stricter, as libpq does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::conninfo::Secret;

/// The password file libpq would read: `passfile`, `PGPASSFILE`, or `~/.pgpass`.
pub(crate) fn default_path() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().join(".pgpass"))
}

fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next()
                    && let Some(f) = fields.last_mut()
                {
                    f.push(n)
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(f) = fields.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    fields
}

/// Look up a password for (host, port, db, user). `host` is the name used to connect; for a
/// unix socket libpq matches it as `localhost`.
pub(crate) fn lookup(path: &Path, host: &str, port: u16, db: &str, user: &str) -> Option<Secret> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(
            "password file {} has group or world access; ignored (chmod 0600 it)",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let host = if host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let port = port.to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f = split_fields(line);
        if f.len() != 5 {
            continue;
        }
        let m = |pat: &str, v: &str| pat == "*" || pat == v;
        if m(&f[0], host) && m(&f[1], &port) && m(&f[2], db) && m(&f[3], user) {
            return Some(Secret::new(f[4].clone()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_with_wildcards_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(
            &p,
            "# comment\nother:5432:*:*:no\ndb\\:x:*:sales:*:pa\\:ss\nlocalhost:5433:*:bob:sock\n",
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            lookup(&p, "db:x", 1, "sales", "u").unwrap().expose(),
            "pa:ss"
        );
        assert_eq!(
            lookup(&p, "/tmp", 5433, "d", "bob").unwrap().expose(),
            "sock"
        );
        assert!(lookup(&p, "db:x", 1, "hr", "u").is_none());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(lookup(&p, "db:x", 1, "sales", "u").is_none());
    }
}
