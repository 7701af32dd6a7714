//! Whose process a sandbox's files name: `postmaster.pid` read against the process table
//! (this sandbox's own postmaster, a crash's leftover, or someone else's process), and the
//! socket lock files a crashed postmaster left behind.

use std::fs;
use std::path::{Path, PathBuf};

/// What `postmaster.pid` says, checked against the process table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PidFile {
    /// No pid file (or one that cannot be read).
    Missing,
    /// The process it names is gone (or a zombie): a crash left the file.
    Stale,
    /// This sandbox's own postmaster.
    Ours { pid: i32, port: u16 },
    /// A live process that is not this sandbox's postmaster (the PID was reused, or the
    /// file was tampered with); what it is, for the sentence. `certain` is false when its
    /// command line could not be read: then the file is left alone too.
    Foreign {
        pid: i32,
        what: String,
        certain: bool,
    },
}

/// Read `postmaster.pid` in `data` and check the process it names: alive, a postmaster (not a
/// backend, whose command line PostgreSQL rewrites), started with `-D` on `data`.
pub(super) fn read(data: &Path) -> PidFile {
    let Ok(text) = fs::read_to_string(data.join("postmaster.pid")) else {
        return PidFile::Missing;
    };
    let mut lines = text.lines();
    let Some(pid) = lines.next().and_then(|l| l.trim().parse::<i32>().ok()) else {
        return PidFile::Stale;
    };
    // A killed server whose parent does not reap it lingers as a zombie: that is dead.
    if pid <= 0 || !process_alive(pid) {
        return PidFile::Stale;
    }
    match postmaster_of(pid, data) {
        Ok(()) => match lines.nth(2).and_then(|l| l.trim().parse::<u16>().ok()) {
            Some(port) => PidFile::Ours { pid, port },
            None => PidFile::Foreign {
                pid,
                what: "its postmaster.pid names no port".into(),
                certain: false,
            },
        },
        Err((what, certain)) => PidFile::Foreign { pid, what, certain },
    }
}

/// Remove the socket lock files in `root` whose process is gone, with their sockets:
/// PostgreSQL checks their PID with `kill(pid, 0)`, which a zombie (a killed server nobody
/// reaped) still answers, and would refuse to start.
pub(super) fn clear_stale_socket_locks(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !(name.starts_with(".s.PGSQL.") && name.ends_with(".lock")) {
            continue;
        }
        let pid: Option<i32> = fs::read_to_string(e.path())
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()));
        if pid.is_none_or(|p| !process_alive(p)) {
            tracing::warn!("removing stale socket lock {}", e.path().display());
            fs::remove_file(e.path()).ok();
            fs::remove_file(root.join(name.trim_end_matches(".lock"))).ok();
        }
    }
}

/// Ok when `pid` is a postmaster started with `-D` on `data` (a relative `-D` is taken from
/// the process's working directory); otherwise what the process is, for a sentence, and
/// whether that is certain (false: its command line could not be read).
fn postmaster_of(pid: i32, data: &Path) -> Result<(), (String, bool)> {
    let raw = fs::read(format!("/proc/{pid}/cmdline"))
        .map_err(|e| (format!("its command line cannot be read: {e}"), false))?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let shown = args.join(" ");
    let shown = if shown.chars().count() > 80 {
        format!("{}…", shown.chars().take(80).collect::<String>())
    } else {
        shown
    };
    let program = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if program != "postgres" && program != "postmaster" {
        return Err((format!("it runs `{shown}`"), true));
    }
    let dir = args
        .windows(2)
        .find(|w| w[0] == "-D")
        .map(|w| PathBuf::from(&w[1]))
        .ok_or_else(|| {
            (
                format!("it is not a postmaster started with -D: `{shown}`"),
                true,
            )
        })?;
    let dir = if dir.is_absolute() {
        dir
    } else {
        fs::read_link(format!("/proc/{pid}/cwd"))
            .map_err(|e| (format!("its working directory cannot be read: {e}"), false))?
            .join(dir)
    };
    let same = match (fs::canonicalize(&dir), fs::canonicalize(data)) {
        (Ok(a), Ok(b)) => a == b,
        _ => dir == data,
    };
    if same {
        Ok(())
    } else {
        Err((format!("a postmaster of {}", dir.display()), true))
    }
}

/// True when `pid` runs and is not a zombie (nor being reaped).
pub fn process_alive(pid: i32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}
