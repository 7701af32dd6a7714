//! Keeping `history.jsonl` small without losing a record: once it passes [`ROTATE_AT`], an
//! append first moves every record in it to the archive of its year, `history-YYYY.jsonl`
//! beside it, and empties it. Readers read the archives (oldest year first), then the file,
//! as one history.
//!
//! Crash safety: each archive is rewritten whole through a temp file and a rename, and only
//! after every archive is on disk is the file truncated (in place, under the same exclusive
//! lock every append takes, so no append lands in a file being replaced). A crash between
//! the two leaves the records in both places; readers keep the first of each run id.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use chrono::Datelike;

/// `history.jsonl` is rotated when an append finds it at least this large.
pub(crate) const ROTATE_AT: u64 = 1 << 20;

/// The archive of `year` beside the history file `path`.
pub(crate) fn archive_path(path: &Path, year: i32) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "history".into());
    path.with_file_name(format!("{stem}-{year}.jsonl"))
}

/// The archives beside `path`, oldest year first.
pub(crate) fn archives(path: &Path) -> Vec<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "history".into());
    let mut years: Vec<(i32, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let year = name
                .strip_prefix(&format!("{stem}-"))?
                .strip_suffix(".jsonl")?
                .parse::<i32>()
                .ok()?;
            Some((year, e.path()))
        })
        .collect();
    years.sort();
    years.into_iter().map(|(_, p)| p).collect()
}

/// With `f` (the history file at `path`) locked exclusively: when it holds at least `limit`
/// bytes, move its records to their years' archives and empty it. Lines that do not read
/// as a run go to the newest archive unchanged, so nothing is dropped.
pub(crate) fn rotate_locked(f: &mut File, path: &Path, limit: u64) -> std::io::Result<bool> {
    if f.metadata()?.len() < limit {
        return Ok(false);
    }
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(0))?;
    f.read_to_end(&mut bytes)?;
    let mut by_year: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
    let mut year = chrono::Utc::now().year();
    for line in bytes.split(|b| *b == b'\n') {
        if line.trim_ascii().is_empty() {
            continue;
        }
        if let Ok(r) = serde_json::from_slice::<StartedAt>(line) {
            year = r.started_at.year();
        }
        let out = by_year.entry(year).or_default();
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    for (year, lines) in by_year {
        let archive = archive_path(path, year);
        let mut text = match std::fs::read(&archive) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        if !text.is_empty() && !text.ends_with(b"\n") {
            text.push(b'\n');
        }
        text.extend_from_slice(&lines);
        crate::paths::write_atomic(&archive, &text)?;
    }
    f.set_len(0)?;
    f.sync_all()?;
    Ok(true)
}

/// The one field rotation needs of a record.
#[derive(serde::Deserialize)]
struct StartedAt {
    started_at: chrono::DateTime<chrono::Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::example::cybertec_10m;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pglab-rotate-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_large_history_moves_to_archives_by_year_and_reads_back_whole() {
        let path = dir("years").join("history.jsonl");
        let mut ids = Vec::new();
        for i in 0..7 {
            let mut r = cybertec_10m(&format!("run-{i}"));
            // Two years: the first three runs are from 2025.
            let year = if i < 3 { 2025 } else { 2026 };
            r.started_at = format!("{year}-06-0{}T10:00:00Z", i + 1).parse().unwrap();
            ids.push(r.run_id.clone());
            // A limit of one record: every append after the first rotates.
            let one = serde_json::to_vec(&r).unwrap().len() as u64;
            crate::history::append_rotating(&path, &r, one).unwrap();
        }
        // The file holds only the newest record; every other is in its year's archive.
        let main = std::fs::read_to_string(&path).unwrap();
        assert_eq!(main.lines().count(), 1, "{main}");
        assert_eq!(
            archives(&path),
            [archive_path(&path, 2025), archive_path(&path, 2026)]
        );
        let a2025 = std::fs::read_to_string(archive_path(&path, 2025)).unwrap();
        assert_eq!(a2025.lines().count(), 3);
        // Read back as one history, oldest first, nothing lost, nothing twice.
        let (runs, warnings) = crate::history::read(&path);
        assert!(warnings.is_empty(), "{warnings:?}");
        let got: Vec<_> = runs.iter().map(|r| r.run_id.clone()).collect();
        assert_eq!(got, ids);
    }

    #[test]
    fn a_rotation_cut_short_by_a_crash_loses_nothing_and_shows_nothing_twice() {
        let path = dir("crash").join("crash.jsonl");
        for i in 0..3 {
            crate::history::append(&path, &cybertec_10m(&format!("c-{i}"))).unwrap();
        }
        // The archives were written, then the crash: the file was never emptied.
        let year = chrono::Utc::now().year();
        std::fs::write(archive_path(&path, year), std::fs::read(&path).unwrap()).unwrap();
        let (runs, warnings) = crate::history::read(&path);
        assert!(warnings.is_empty(), "{warnings:?}");
        let got: Vec<_> = runs.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(got, ["c-0", "c-1", "c-2"]);
    }
}
