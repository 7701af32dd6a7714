//! Finding the PostgreSQL server programs (`initdb`, `pg_ctl`, `postgres`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::TargetError;

/// A directory holding `initdb`, `pg_ctl` and `postgres`, and the version they report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgBin {
    pub dir: PathBuf,
    pub version: String,
}

impl PgBin {
    pub fn tool(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

const TOOLS: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

fn complete(dir: &Path) -> bool {
    TOOLS.iter().all(|t| dir.join(t).is_file())
}

fn version_of(dir: &Path) -> Option<String> {
    let out = Command::new(dir.join("postgres"))
        .arg("--version")
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout);
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    s.split_whitespace().nth(2).map(str::to_string)
}

fn major(v: &str) -> u32 {
    v.split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}

/// Candidate directories in the documented order: `--pg-bin`, `PATH`, `pg_config --bindir`,
/// `/usr/lib/postgresql/<newest>/bin`.
fn candidates(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = explicit {
        out.push(d.to_path_buf());
        return out;
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let pg_ctl = dir.join("pg_ctl");
            if pg_ctl.is_file() {
                // Debian links /usr/local/bin/pg_ctl to the versioned directory: follow it.
                if let Ok(real) = std::fs::canonicalize(&pg_ctl)
                    && let Some(parent) = real.parent()
                {
                    out.push(parent.to_path_buf());
                }
                out.push(dir);
            }
        }
    }
    if let Ok(o) = Command::new("pg_config").arg("--bindir").output()
        && o.status.success()
    {
        out.push(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    }
    if let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<PathBuf> = rd.flatten().map(|e| e.path().join("bin")).collect();
        versions.sort_by_key(|p| {
            std::cmp::Reverse(
                p.parent()
                    .and_then(|v| v.file_name())
                    .and_then(|v| v.to_str())
                    .map(major)
                    .unwrap_or(0),
            )
        });
        out.extend(versions);
    }
    out
}

/// Find the server programs, or say how to install them.
pub fn find(explicit: Option<&Path>) -> Result<PgBin, TargetError> {
    for dir in candidates(explicit) {
        if complete(&dir) {
            let version = version_of(&dir).unwrap_or_else(|| "unknown".into());
            return Ok(PgBin { dir, version });
        }
    }
    Err(TargetError::Sandbox(match explicit {
        Some(d) => format!(
            "{} does not hold initdb, pg_ctl and postgres: point --pg-bin at PostgreSQL's bin directory (e.g. /usr/lib/postgresql/15/bin)",
            d.display()
        ),
        None => "no PostgreSQL server programs found (initdb, pg_ctl, postgres) for the sandbox: install them (Debian/Ubuntu: apt-get install postgresql) or pass --pg-bin DIR, or point pglab at a server with --db".into(),
    }))
}
