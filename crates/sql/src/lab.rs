//! The names pglab gives what it makes: the comment marker every pglab object carries (`pglab
//! clean` only touches what starts with it), run ids, and the lab schema's name rule.

/// The prefix of every pglab object comment. `pglab clean` only ever touches objects whose
/// comment starts with it.
pub const MARK: &str = "pglab:";

/// A fresh run id: UTC time to the second plus 4 random hex digits (sortable, unique enough
/// for two pglab processes starting in the same second).
pub fn new_run_id() -> String {
    format!(
        "{}-{:04x}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
        rand::random::<u16>()
    )
}

/// A valid lab schema name: letters, digits, underscores; not a system schema.
pub fn check_schema_name(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 63 {
        return Err("the lab schema name must be 1-63 characters".into());
    }
    if !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || s.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!(
            "'{s}' is not a plain schema name (letters, digits, _)"
        ));
    }
    if s == "public" || s.starts_with("pg_") || s == "information_schema" {
        return Err(format!(
            "'{s}' is not pglab's to use: choose a schema of its own, e.g. pglab"
        ));
    }
    Ok(())
}

/// A run id as a plain identifier part: ASCII letters and digits lowercased, anything else
/// `_` (run ids look like `20250101T120000Z-ab12`).
pub fn plain_name(run_id: &str) -> String {
    run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}
