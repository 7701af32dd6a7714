//! One entry point for a capture, the same for `pglab capture` and the TUI's capture key:
//! read the server (statements, a sample of activity, statistics), refuse a capture that found
//! nothing with the reason, and write the workload file atomically. The front ends only say
//! how it went.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_postgres::Client;
use tokio_util::sync::CancellationToken;

use super::{Capture, CaptureSpec, capture, file, statements};

/// Where the workload goes.
pub enum Destination {
    /// This file (`--out`), replaced atomically.
    File(PathBuf),
    /// A new file in this directory, named after the database and the time
    /// (`<database>-<YYYYMMDD-HHMMSS>.sql`), the directory made private when missing.
    Dir(PathBuf),
}

/// A capture written to its file.
pub struct Written {
    pub capture: Capture,
    pub path: PathBuf,
}

/// Capture from `client`'s server and write the workload. `progress` hears the sample's
/// executions seen and time; `stop` ends the sample early (the capture goes on with what was
/// seen). A capture that found no statement writes nothing and says why.
pub async fn run(
    client: &Client,
    spec: &CaptureSpec,
    stop: &CancellationToken,
    progress: &mut (dyn FnMut(usize, Duration) + Send),
    to: Destination,
) -> Result<Written, String> {
    let cap = capture(client, spec, stop, progress).await?;
    nothing_to_capture(&cap)?;
    let now = chrono::Utc::now();
    let path = match to {
        Destination::File(p) => p,
        Destination::Dir(dir) => {
            crate::paths::private_dir(&dir)
                .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            dir.join(file_name(&cap.database, &now))
        }
    };
    let text = file::render(&cap, &now.format("%Y-%m-%d %H:%M UTC").to_string());
    write(&path, &text)?;
    Ok(Written { capture: cap, path })
}

/// A capture that found no statement: the reason instead (where the statements would have
/// come from, and how to get `pg_stat_statements` when it is missing).
fn nothing_to_capture(cap: &Capture) -> Result<(), String> {
    if !cap.statements.is_empty() {
        return Ok(());
    }
    Err(if cap.from_statements && cap.hidden > 0 {
        format!(
            "nothing to capture from {}: role {} sees no statement a replay can run; {} statements of other roles read <insufficient privilege> ({:.1} % of the statement time): GRANT pg_read_all_stats TO {} shows them",
            cap.database,
            cap.role,
            cap.hidden,
            cap.hidden_share * 100.0,
            crate::capture::file_window::role_name(&cap.role)
        )
    } else if cap.from_statements {
        format!(
            "nothing to capture from {}: pg_stat_statements holds no statement a replay can run ({} passed over: transaction control, settings, DDL)",
            cap.database, cap.other
        )
    } else {
        format!(
            "nothing to capture from {}: no other session ran a statement during the {:.0} s sample, and {}",
            cap.database,
            cap.sample_seconds,
            statements::ENABLE
        )
    })
}

/// `<database>-<UTC time>.sql`, the database's name cut to letters, digits and `_`.
fn file_name(database: &str, now: &chrono::DateTime<chrono::Utc>) -> String {
    let safe: String = database
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{safe}-{}.sql", now.format("%Y%m%d-%H%M%S"))
}

/// The whole file or none of it: an interrupted write leaves the old file (or no file).
fn write(path: &Path, text: &str) -> Result<(), String> {
    crate::paths::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_capture_is_a_reason_not_a_file() {
        let empty = Capture {
            database: "pglab".into(),
            sample_seconds: 10.0,
            ..Default::default()
        };
        let e = nothing_to_capture(&empty).unwrap_err();
        assert!(
            e.contains("no other session ran a statement during the 10 s sample")
                && e.contains("shared_preload_libraries"),
            "{e}"
        );
        let from_statements = Capture {
            from_statements: true,
            other: 4,
            ..empty
        };
        assert!(
            nothing_to_capture(&from_statements)
                .unwrap_err()
                .contains("4 passed over")
        );
    }
}
