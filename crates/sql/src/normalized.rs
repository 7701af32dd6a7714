//! A normalised statement (`pg_stat_statements.query`: `$1` for each constant) and the value
//! sets that fill it: `$1 = 42, $2 = 'x''y'`, each value a constant's own source text as a
//! client sent it. `pglab capture` writes the sets it saw; the statement reader reads them back
//! and a replay runs the statement with each in turn, so a replay spreads over the rows
//! production touched instead of running one set every time. Both directions go through
//! PostgreSQL's own lexer (libpg_query), and a filled text must have the fingerprint of the
//! statement it stands for (constants aside, the same statement): a value that carries SQL of
//! its own (`1; DROP TABLE t`) is refused, not run.

use std::collections::BTreeMap;

use pg_query::protobuf::{ScanToken, Token};

/// Tokens that are constants.
pub(crate) const CONSTANTS: [Token; 8] = [
    Token::Iconst,
    Token::Fconst,
    Token::Sconst,
    Token::Usconst,
    Token::Bconst,
    Token::Xconst,
    Token::TrueP,
    Token::FalseP,
];

/// The tokens of `sql` without comments and without the `;` that ends it.
pub fn tokens(sql: &str) -> Option<Vec<ScanToken>> {
    let scanned = pg_query::scan(sql).ok()?;
    let mut out: Vec<ScanToken> = scanned
        .tokens
        .into_iter()
        .filter(|t| t.token != Token::SqlComment as i32 && t.token != Token::CComment as i32)
        .collect();
    while out.last().is_some_and(|t| t.token == Token::Ascii59 as i32) {
        out.pop();
    }
    Some(out)
}

/// A token's source text.
pub fn text<'a>(sql: &'a str, t: &ScanToken) -> &'a str {
    sql.get(t.start as usize..t.end as usize).unwrap_or("")
}

pub fn is_constant(t: &ScanToken) -> bool {
    CONSTANTS.iter().any(|c| *c as i32 == t.token)
}

fn param_number(sql: &str, t: &ScanToken) -> Option<u32> {
    (t.token == Token::Param as i32)
        .then(|| text(sql, t).trim_start_matches('$').parse().ok())
        .flatten()
}

/// `normalized` with each `$n` replaced by its value (None when a value is missing).
pub fn fill(normalized: &str, values: &BTreeMap<u32, String>) -> Option<String> {
    let norm = tokens(normalized)?;
    let mut out = String::with_capacity(normalized.len());
    let mut at = 0;
    for n in norm.iter().filter(|n| n.token == Token::Param as i32) {
        let number = param_number(normalized, n)?;
        out.push_str(&normalized[at..n.start as usize]);
        out.push_str(values.get(&number)?);
        at = n.end as usize;
    }
    out.push_str(&normalized[at..]);
    Some(out)
}

/// The numbers of the `$n` in a normalised statement, in order, each once.
pub fn params(normalized: &str) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for n in tokens(normalized).unwrap_or_default() {
        if let Some(k) = param_number(normalized, &n)
            && !out.contains(&k)
        {
            out.push(k);
        }
    }
    out
}

/// `$1 = 42, $2 = 'x'`: a value set as a line of text.
pub fn set_text(values: &BTreeMap<u32, String>) -> String {
    values
        .iter()
        .map(|(n, v)| format!("${n} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Read back a line [`set_text`] wrote: each `$n = value`, the value one constant (a
/// negative number's sign goes with it), the pairs separated by commas.
pub fn parse_set(line: &str) -> Result<BTreeMap<u32, String>, String> {
    let toks = tokens(line).ok_or("it is not text PostgreSQL's lexer reads")?;
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < toks.len() {
        let n = param_number(line, &toks[i]).ok_or_else(|| {
            format!(
                "'{}' is not $n = value (write $1 = 42, $2 = 'x')",
                text(line, &toks[i])
            )
        })?;
        if toks.get(i + 1).map(|t| t.token) != Some(Token::Ascii61 as i32) {
            return Err(format!("${n} has no '= value' after it"));
        }
        let (value, used) = constant_at(line, &toks, i + 2)
            .ok_or_else(|| format!("the value of ${n} is not one constant (42, -1.5, 'text')"))?;
        if out.insert(n, value).is_some() {
            return Err(format!("${n} is given twice"));
        }
        i += 2 + used;
        match toks.get(i).map(|t| t.token) {
            None => {}
            Some(t) if t == Token::Ascii44 as i32 => i += 1,
            Some(_) => {
                return Err(format!(
                    "after ${n}'s value comes something else than a comma"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("it holds no value".into());
    }
    Ok(out)
}

/// The constant at token `i` (with a leading minus for a number) and how many tokens it took.
pub fn constant_at(sql: &str, toks: &[ScanToken], i: usize) -> Option<(String, usize)> {
    let t = toks.get(i)?;
    if is_constant(t) {
        return Some((text(sql, t).to_string(), 1));
    }
    let number = toks
        .get(i + 1)
        .filter(|c| c.token == Token::Iconst as i32 || c.token == Token::Fconst as i32)?;
    (t.token == Token::Ascii45 as i32).then(|| (format!("-{}", text(sql, number)), 2))
}

/// `normalized` filled with `values`, when the result is the statement `reference` is up to
/// its constants (the same fingerprint); a sentence otherwise.
pub fn fill_as(
    normalized: &str,
    values: &BTreeMap<u32, String>,
    reference: &str,
) -> Result<String, String> {
    let wanted = params(normalized);
    if let Some(n) = wanted.iter().find(|n| !values.contains_key(n)) {
        return Err(format!("it gives no value for ${n}"));
    }
    let filled = fill(normalized, values).ok_or("its values do not fit the statement")?;
    let print = |s: &str| {
        pg_query::fingerprint(s, 0, pg_query::FingerprintOptions::FULL_RELNAME)
            .map(|f| f.value)
            .ok()
    };
    match (print(&filled), print(reference)) {
        (Some(a), Some(b)) if a == b => Ok(filled),
        _ => Err(
            "filled in, it is not the statement below it (a value holds SQL of its own, or the normalized text was edited)"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_read_back_as_it_was_written() {
        let mut v = BTreeMap::new();
        v.insert(1, "42".to_string());
        v.insert(2, "'x''y, z'".to_string());
        v.insert(3, "-1.5".to_string());
        let line = set_text(&v);
        assert_eq!(line, "$1 = 42, $2 = 'x''y, z', $3 = -1.5");
        assert_eq!(parse_set(&line).unwrap(), v);
        assert_eq!(parse_set("$1 = E'a\\'b'").unwrap()[&1], "E'a\\'b'");
    }

    #[test]
    fn a_bad_set_is_one_sentence() {
        for (line, says) in [
            ("", "holds no value"),
            ("42", "is not $n = value"),
            ("$1 42", "no '= value'"),
            ("$1 = a", "not one constant"),
            ("$1 = 1 $2 = 2", "something else than a comma"),
            ("$1 = 1, $1 = 2", "given twice"),
            ("$1 = 'open", "lexer"),
        ] {
            let e = parse_set(line).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
    }

    #[test]
    fn a_filled_text_must_be_the_same_statement() {
        let norm = "SELECT * FROM t WHERE a = $1 AND b = $2";
        let reference = "SELECT * FROM t WHERE a = 1 AND b = 'x'";
        let set = parse_set("$1 = 7, $2 = 'y'").unwrap();
        assert_eq!(
            fill_as(norm, &set, reference).unwrap(),
            "SELECT * FROM t WHERE a = 7 AND b = 'y'"
        );
        let missing = parse_set("$1 = 7").unwrap();
        assert!(
            fill_as(norm, &missing, reference)
                .unwrap_err()
                .contains("$2")
        );
        // SQL smuggled in a value changes the statement: refused.
        let mut evil = set.clone();
        evil.insert(2, "'y'; DROP TABLE t; --".into());
        assert!(fill_as(norm, &evil, reference).is_err());
        let other = "SELECT * FROM u WHERE a = $1 AND b = $2";
        assert!(fill_as(other, &set, reference).is_err());
        assert_eq!(params("SELECT $2, $1, $2"), [2, 1]);
    }
}
