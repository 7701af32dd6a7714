//! The query spec's field values read from their text, and written back: each reader
//! returns the value or the sentence `FieldReader` records for its field. Files named with
//! `@FILE`, `--file` and `--script` are read here, when the parameters are parsed.

use super::script::Script;
use super::spec::{Cache, MAX_CANDIDATES, MAX_CLIENTS, Writes};
use super::sqltext::{self, Statement};
use crate::experiment::lab::field::ParamText;
use crate::measure::units::parse_duration;

/// Read the `sql` field: SQL or `@FILE`, split into statements.
pub(super) fn read_statements(raw: &str) -> Result<Vec<Statement>, String> {
    if raw.trim().is_empty() {
        return Ok(Vec::new());
    }
    sqltext::split(&sqltext::resolve(raw)?)
}

/// Read the `index` field: the candidates, each a `CREATE INDEX` statement.
pub(super) fn read_candidates(raw: &str) -> Result<Vec<String>, String> {
    let stmts = read_statements(raw)?;
    if stmts.len() > MAX_CANDIDATES {
        return Err(format!(
            "{} candidates: at most {MAX_CANDIDATES} (each is built and measured on its own)",
            stmts.len()
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for s in stmts {
        super::candidate::Candidate::parse(&s.sql)?;
        if out.contains(&s.sql) {
            return Err(format!("'{}' is listed twice", s.sql));
        }
        out.push(s.sql);
    }
    Ok(out)
}

/// Read the `file` field: a file of statements (`@` optional), split.
pub(super) fn read_file_statements(f: &str) -> Result<Vec<Statement>, String> {
    if f.is_empty() {
        return Ok(Vec::new());
    }
    sqltext::split(&sqltext::read_file(f.trim_start_matches('@'))?)
}

/// Read the `clients` field: `off`, or client counts (each once, in order).
pub(super) fn clients_of(s: &str) -> Result<Vec<u32>, String> {
    match s {
        "" | "off" => Ok(Vec::new()),
        "0" => Err(
            "0 clients would run nothing: write off to time single executions, or 1.. for throughput".into(),
        ),
        s => {
            let v = crate::measure::units::parse_count_list(s).map_err(|e| e.0)?;
            if let Some(bad) = v.iter().find(|n| **n < 1 || **n > MAX_CLIENTS) {
                return Err(format!("{bad} clients: give 1..{MAX_CLIENTS}, or off"));
            }
            let mut out: Vec<u32> = Vec::new();
            for n in v {
                if !out.contains(&(n as u32)) {
                    out.push(n as u32);
                }
            }
            Ok(out)
        }
    }
}

/// Read the `duration` field: seconds of a throughput trial, at least 0.1.
pub(super) fn duration_of(s: &str) -> Result<f64, String> {
    let d = parse_duration(s).map_err(|e| e.0)?.as_secs_f64();
    if d < 0.1 {
        return Err("a trial needs at least 100ms".into());
    }
    Ok(d)
}

/// Read the `script` field: a pgbench-style script file (`@` optional), parsed.
pub(super) fn read_script(f: &str) -> Result<Option<Script>, String> {
    if f.is_empty() {
        return Ok(None);
    }
    let text = sqltext::read_file(f.trim_start_matches('@'))?;
    Script::parse(&text).map(Some)
}

/// A field's text as given, trimmed: what the spec keeps beside what it read from it.
pub(super) fn given(p: &ParamText, key: &str) -> String {
    p.get(key).cloned().unwrap_or_default().trim().to_string()
}

/// The `cache` field's values.
pub(super) const CACHES: &[(&str, Cache)] = &[("warm", Cache::Warm), ("cold", Cache::Cold)];

/// The `writes` field's values.
pub(super) const WRITES: &[(&str, Writes)] = &[
    ("auto", Writes::Auto),
    ("read-only", Writes::ReadOnly),
    ("rollback", Writes::Rollback),
];

/// Seconds as the duration field writes them: `10s`, `250ms`, `2min`.
pub(crate) fn format_duration(s: f64) -> String {
    if s < 1.0 {
        format!("{}ms", (s * 1000.0).round())
    } else if s >= 60.0 && (s / 60.0).fract() == 0.0 {
        format!("{}min", s / 60.0)
    } else if s.fract() == 0.0 {
        format!("{s}s")
    } else {
        format!("{}ms", (s * 1000.0).round())
    }
}
