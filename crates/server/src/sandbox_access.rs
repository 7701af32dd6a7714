//! Who may connect to the sandbox: pglab's account, and nobody else on the host. The role
//! `pglab` is a superuser (it can `COPY … TO PROGRAM` as the server's OS account), so:
//!
//! - the socket directory (the sandbox directory) is mode 0700, owned by the server's account;
//! - `pg_hba.conf` lets the unix socket in by `peer` authentication through the map `pglab`
//!   of `pg_ident.conf`, which names only the account running pglab and the server's own;
//! - TCP on 127.0.0.1 wants a password (`scram-sha-256`): a random one pglab generates and
//!   keeps in `pgpass` (libpq's password-file format, mode 0600), which pglab's connections
//!   read and the `connect:` line names with `PGPASSFILE`. A Citus sandbox's nodes share one
//!   such file; each node's postmaster gets it as `PGPASSFILE`, so the nodes' connections to
//!   each other (TCP) find the password.
//!
//! A sandbox made by an older pglab (`initdb -A trust`) is locked down by the next start:
//! the rules are rewritten (and read with a reload, or a restart for a Citus node, whose
//! postmaster must get `PGPASSFILE`), then the role gets the password.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::Stdio;

use nix::unistd::{Uid, User};

use super::TargetError;
use super::sandbox::{SANDBOX_DB, SANDBOX_USER, Sandbox, tail_lines};

fn err(s: impl Into<String>) -> TargetError {
    TargetError::Sandbox(s.into())
}

/// The first line of pglab's `pg_hba.conf`: while it is there the rules are pglab's (lines a
/// DBA adds below or above are kept); without it the next start writes them again. v2 added
/// the replication rules a sandbox standby connects by (a v1 file is rewritten).
const HBA_MARK: &str = "# pglab sandbox access v2";

/// The `pg_ident.conf` map the socket rule uses.
const MAP: &str = "pglab";

impl Sandbox {
    fn hba_file(&self) -> std::path::PathBuf {
        self.data().join("pg_hba.conf")
    }
    fn ident_file(&self) -> std::path::PathBuf {
        self.data().join("pg_ident.conf")
    }
    /// Which password file the role's password was last set from (see `ensure_password`).
    fn access_marker(&self) -> std::path::PathBuf {
        self.root.join("access")
    }

    /// The OS accounts that may use the socket: the one running pglab and the server's.
    fn local_accounts(&self) -> Result<Vec<String>, TargetError> {
        let me = User::from_uid(Uid::effective())
            .ok()
            .flatten()
            .map(|u| u.name)
            .ok_or_else(|| {
                err(format!(
                    "the account running pglab (uid {}) has no name in the user database, which the sandbox's socket rule needs",
                    Uid::effective()
                ))
            })?;
        let mut names = vec![me];
        if let Some((_, _, server)) = &self.run_as
            && !names.contains(server)
        {
            names.push(server.clone());
        }
        Ok(names)
    }

    /// Write a file the server reads (owned by its account, mode 0600), atomically.
    fn write_server_file(&self, path: &Path, text: &str) -> Result<(), TargetError> {
        let tmp = path.with_extension("pglab-tmp");
        let write = || -> std::io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600))?;
            if let Some((uid, gid, _)) = &self.run_as {
                nix::unistd::chown(&tmp, Some(*uid), Some(*gid)).map_err(std::io::Error::from)?;
            }
            fs::rename(&tmp, path)
        };
        write().map_err(|e| {
            fs::remove_file(&tmp).ok();
            err(format!("cannot write {}: {e}", path.display()))
        })
    }

    /// Before the server runs (or while it runs, for a sandbox an older pglab left open):
    /// pglab's `pg_hba.conf` and `pg_ident.conf`, unless its rules are already there. True
    /// when they were written (a running server must read them again).
    pub(super) fn write_access_rules(&self) -> Result<bool, TargetError> {
        let hba = fs::read_to_string(self.hba_file()).unwrap_or_default();
        if hba.lines().any(|l| l.trim_start().starts_with(HBA_MARK)) {
            return Ok(false);
        }
        let accounts = self.local_accounts()?;
        let ident: String = accounts
            .iter()
            .map(|a| format!("{MAP}  {a:<20} {SANDBOX_USER}\n"))
            .collect();
        self.write_server_file(
            &self.ident_file(),
            &format!(
                "# pglab sandbox: the OS accounts that may connect over the unix socket (map {MAP})\n{ident}"
            ),
        )?;
        self.write_server_file(
            &self.hba_file(),
            &format!(
                "{HBA_MARK}: only pglab's account may connect (pglab writes these rules again when this line is missing)\n\
                 # unix socket (a directory only the server's account may enter): the accounts of pg_ident.conf's map {MAP}\n\
                 local   all   all                   peer map={MAP}\n\
                 local   replication   {SANDBOX_USER}        peer map={MAP}\n\
                 # TCP on this host: the password pglab keeps in {}\n\
                 host    all   all   127.0.0.1/32    scram-sha-256\n\
                 host    all   all   ::1/128         scram-sha-256\n\
                 # a sandbox standby (pglab sandbox start --standbys N): the role pglab, on this host only\n\
                 host    replication   {SANDBOX_USER}   127.0.0.1/32    scram-sha-256\n",
                self.passfile.display()
            ),
        )?;
        tracing::info!(
            "sandbox {}: access rules written (socket: {}; TCP: password)",
            self.root.display(),
            accounts.join(", ")
        );
        Ok(true)
    }

    /// A running server reads rules written by [`Sandbox::write_access_rules`]: a reload, or
    /// a restart for a Citus node (its postmaster needs `PGPASSFILE` in its environment).
    /// Returns the port it runs on.
    pub(super) fn apply_access_rules(&self, port: u16) -> Result<u16, TargetError> {
        if self.root.join("citus").is_file() {
            self.restart()?;
            return Ok(self.live_postmaster().map(|(_, p)| p).unwrap_or(port));
        }
        self.psql(port, "SELECT pg_reload_conf();")?;
        Ok(port)
    }

    /// The role `pglab` has the password of the password file: generated on first use (shared
    /// by a Citus sandbox's nodes), set with a SCRAM verifier (the password itself never goes
    /// to the server, its log or a command line) whenever the file changed since.
    pub(super) fn ensure_password(&self, port: u16) -> Result<(), TargetError> {
        let lock_path = self.passfile.with_extension("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| err(format!("cannot open {}: {e}", lock_path.display())))?;
        lock.lock()
            .map_err(|e| err(format!("cannot lock {}: {e}", lock_path.display())))?;
        let result = self.ensure_password_locked(port);
        lock.unlock().ok();
        result
    }

    fn ensure_password_locked(&self, port: u16) -> Result<(), TargetError> {
        let password = match read_password(&self.passfile) {
            Some(p) => p,
            None => {
                let p = new_password();
                self.write_server_file(&self.passfile, &pgpass_text(&p))?;
                p
            }
        };
        let meta = fs::metadata(&self.passfile)
            .map_err(|e| err(format!("cannot read {}: {e}", self.passfile.display())))?;
        let identity = format!("{}:{}.{}", meta.ino(), meta.mtime(), meta.mtime_nsec());
        if fs::read_to_string(self.access_marker()).is_ok_and(|m| m.trim() == identity) {
            return Ok(());
        }
        // "SCRAM-SHA-256$4096:<salt>$<stored key>:<server key>", base64 parts: nothing to
        // quote, checked all the same.
        let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
        if !verifier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "$:+/=-".contains(c))
        {
            return Err(err(
                "internal: an unexpected character in the SCRAM verifier",
            ));
        }
        self.psql(
            port,
            &format!("ALTER ROLE {SANDBOX_USER} PASSWORD '{verifier}';"),
        )?;
        fs::write(self.access_marker(), identity)
            .map_err(|e| err(format!("cannot mark the sandbox's password as set: {e}")))?;
        Ok(())
    }

    /// Run SQL (given on stdin, never on the command line) with `psql` as the server's
    /// account over the socket.
    pub(super) fn psql(&self, port: u16, sql: &str) -> Result<(), TargetError> {
        if !self.bin.tool("psql").is_file() {
            return Err(err(format!(
                "psql is missing beside pg_ctl in {}: pglab needs it to set up its sandbox",
                self.bin.dir.display()
            )));
        }
        // The lab database may not exist yet (the first start creates it afterwards).
        let db = if self.root.join("ready").is_file() {
            SANDBOX_DB
        } else {
            "postgres"
        };
        let mut c = self.command("psql");
        c.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.root)
            .args(["-p", &port.to_string(), "-U", SANDBOX_USER, "-d", db])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c
            .spawn()
            .map_err(|e| err(format!("cannot run psql: {e}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(sql.as_bytes())
                .map_err(|e| err(format!("cannot talk to psql: {e}")))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| err(format!("psql did not finish: {e}")))?;
        if !out.status.success() {
            return Err(err(format!(
                "setting up the sandbox's access failed: {}",
                tail_lines(&String::from_utf8_lossy(&out.stderr), 2)
            )));
        }
        Ok(())
    }

    /// How the account running pglab connects with `psql`, as shell commands: over the
    /// socket, and over TCP with the password file.
    pub fn connect_lines(&self, port: u16) -> Vec<(&'static str, String)> {
        vec![
            (
                "connect",
                format!(
                    "psql -h {} -p {port} -U {SANDBOX_USER} {SANDBOX_DB}",
                    shell_word(&self.root.to_string_lossy())
                ),
            ),
            (
                "over TCP",
                format!(
                    "PGPASSFILE={} psql -h 127.0.0.1 -p {port} -U {SANDBOX_USER} {SANDBOX_DB}",
                    shell_word(&self.passfile.to_string_lossy())
                ),
            ),
        ]
    }
}

/// 256 random bits as 64 hex digits (from the thread's CSPRNG, seeded by the OS).
fn new_password() -> String {
    (0..4)
        .map(|_| format!("{:016x}", rand::random::<u64>()))
        .collect()
}

/// The password file: the role's password for 127.0.0.1 and localhost (libpq matches a
/// unix-socket connection as localhost), any port (a restarted sandbox may move), any
/// database.
fn pgpass_text(password: &str) -> String {
    format!(
        "# the pglab sandbox role password (generated by pglab)\n127.0.0.1:*:*:{SANDBOX_USER}:{password}\nlocalhost:*:*:{SANDBOX_USER}:{password}\n"
    )
}

/// The password in a file pglab wrote (None when missing, unreadable or not pglab's form).
fn read_password(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&format!("127.0.0.1:*:*:{SANDBOX_USER}:")))
        .map(str::to_string)
        .filter(|p| p.len() >= 32 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A path as one shell word: as it is when it holds only safe characters, else quoted.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_random_and_read_back() {
        let a = new_password();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_password());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        fs::write(&f, pgpass_text(&a)).unwrap();
        assert_eq!(read_password(&f).as_deref(), Some(a.as_str()));
        fs::write(&f, "127.0.0.1:*:*:pglab:short\n").unwrap();
        assert_eq!(read_password(&f), None);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("/tmp/pglab/sandbox"), "/tmp/pglab/sandbox");
        assert_eq!(shell_word("/tmp/my dir"), "'/tmp/my dir'");
        assert_eq!(shell_word("/tmp/it's"), r"'/tmp/it'\''s'");
    }
}
