//! SQL text pglab writes by hand: quoted identifiers and literals, and numbers written as
//! SQL reads them. Values go as parameters wherever the protocol allows (every session setting
//! through [`super::settings::SessionSettings`]); [`literal`] is for the places it does not (DDL
//! such as `COMMENT ON`, `ALTER SYSTEM`, a `TABLESAMPLE` clause).

/// Quote an identifier for SQL.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Quote a string literal for SQL, the way `quote_literal()` does: a string holding a
/// backslash becomes an escape string (`E'…'`, backslashes doubled), which reads the same
/// whatever `standard_conforming_strings` says; a plain `'…'` would read `\` as an escape on
/// a server where it is off.
pub fn literal(s: &str) -> String {
    let quoted = s.replace('\'', "''");
    if s.contains('\\') {
        format!("E'{}'", quoted.replace('\\', "\\\\"))
    } else {
        format!("'{quoted}'")
    }
}

/// A percentage as SQL text for `TABLESAMPLE SYSTEM (…)`: clamped to 0..=100, at most six
/// decimals, no trailing zeros (`0.5`, `100`).
pub fn percent(pct: f64) -> String {
    let s = format!("{:.6}", pct.clamp(0.0, 100.0));
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_the_same_whatever_standard_conforming_strings_says() {
        assert_eq!(literal("it's"), "'it''s'");
        assert_eq!(literal(r"C:\temp"), r"E'C:\\temp'");
        assert_eq!(literal(r"a\'b"), r"E'a\\''b'");
    }

    #[test]
    fn percentages_have_at_most_six_decimals_and_no_exponent() {
        assert_eq!(percent(10.0), "10");
        assert_eq!(percent(2.5), "2.5");
        assert_eq!(percent(0.0001234567), "0.000123");
    }
}
