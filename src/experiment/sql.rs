//! SQL text pglab builds by hand: quoted identifiers and literals, and the lab schema's name
//! rule. Values go as parameters wherever the protocol allows; these are for the places it
//! does not (DDL, `SET`).

/// Quote an identifier for SQL.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quote a string literal for SQL.
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
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
