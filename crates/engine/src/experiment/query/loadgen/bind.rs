//! The workload's statements as the extended and prepared protocols send them: each a text
//! with `$n` and where each parameter's value comes from. A script's `:name` becomes `$n`
//! (each variable one parameter, however often it appears, so `BETWEEN :lo AND :lo + :w`
//! types `$1` from the column and `$2` from `$1`), bound to the variable's value on every
//! execution. A captured statement is its normalised text (what production sent) with one of
//! its value sets bound, each constant turned into the value it stands for (`'O''Neil'` is
//! `O'Neil`). Values go as text with no type: the server types each from its own parse, and
//! a statement whose parameter it cannot type is refused before the run with its name.

use std::collections::BTreeMap;
use std::ffi::CString;

use crate::experiment::query::script::{Command, Part, Script};
use crate::experiment::query::variants::Captured;

/// Where a bound statement's values come from.
pub(super) enum Values {
    /// No parameters.
    None,
    /// `$k+1` is the script variable of index `vars[k]`.
    Vars(Vec<usize>),
    /// A captured statement's value sets, one drawn per execution: each parameter's text, or
    /// None for a missing one (sent as NULL; the refusal before the run names it).
    Sets(Vec<Vec<Option<CString>>>),
}

/// A statement sent with its values bound.
pub(super) struct Bound {
    /// Its name in the session, prepared.
    pub name: CString,
    pub sql: CString,
    /// How messages name it (`line 3`).
    pub label: String,
    pub values: Values,
}

impl Bound {
    /// Parameters bound on every execution.
    pub(crate) fn params(&self) -> usize {
        match &self.values {
            Values::None => 0,
            Values::Vars(v) => v.len(),
            Values::Sets(s) => s.first().map_or(0, Vec::len),
        }
    }
}

/// A command's `:name`s as `$n`: the text, and each parameter's variable in order.
pub(crate) fn parameterized(parts: &[Part]) -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut vars: Vec<usize> = Vec::new();
    for p in parts {
        match p {
            Part::Text(t) => text.push_str(t),
            Part::Var(v) => {
                let n = match vars.iter().position(|x| x == v) {
                    Some(at) => at + 1,
                    None => {
                        vars.push(*v);
                        vars.len()
                    }
                };
                text.push('$');
                text.push_str(&n.to_string());
            }
        }
    }
    (text, vars)
}

/// The value a constant as written stands for, as text the type's input function reads
/// (None for NULL), or why it cannot be bound.
pub(crate) fn literal_value(lit: &str) -> Result<Option<String>, String> {
    let lower = lit.to_ascii_lowercase();
    fn quoted(s: &str) -> Option<&str> {
        s.strip_prefix('\'').and_then(|s| s.strip_suffix('\''))
    }
    if lower == "null" {
        return Ok(None);
    }
    if lower == "true" || lower == "false" {
        return Ok(Some(lower));
    }
    if let Some(inner) = quoted(lit) {
        return Ok(Some(inner.replace("''", "'")));
    }
    if let Some(inner) = lower.strip_prefix('b').and_then(quoted) {
        return Ok(Some(inner.to_string()));
    }
    if let Some(inner) = lower.strip_prefix('x').and_then(quoted) {
        return Ok(Some(format!("x{inner}")));
    }
    if let Some(inner) = lit.strip_prefix(['e', 'E']).and_then(quoted) {
        return unescape(inner).map(Some);
    }
    if let Some(after) = lit.strip_prefix('$') {
        let tag_end = after.find('$').map(|i| i + 2).unwrap_or(lit.len());
        let tag = &lit[..tag_end];
        if let Some(inner) = lit[tag_end..].strip_suffix(tag) {
            return Ok(Some(inner.to_string()));
        }
    }
    let number = lit.trim_start_matches('-');
    if !number.is_empty() && number.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Ok(Some(lit.to_string()));
    }
    Err(format!(
        "the constant {lit} is not one pglab turns into a value (a number, 'text', E'text', b'…', x'…', true, false)"
    ))
}

/// An `E'…'` string's escapes.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\'' {
            // `''` inside the quotes.
            chars.next();
            out.push('\'');
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some(c @ ('\\' | '\'')) => out.push(c),
            Some(other) => {
                return Err(format!(
                    "the escape \\{other} in E'{s}' is not one pglab turns into a value"
                ));
            }
            None => out.push('\\'),
        }
    }
    Ok(out)
}

/// A captured statement's value sets as the values of `$1 … $n` (n: the highest number).
pub(crate) fn set_values(c: &Captured) -> Result<Vec<Vec<Option<String>>>, String> {
    let highest = c
        .sets
        .iter()
        .flat_map(BTreeMap::keys)
        .copied()
        .max()
        .unwrap_or(0) as usize;
    c.sets
        .iter()
        .map(|set| {
            (1..=highest as u32)
                .map(|n| match set.get(&n) {
                    Some(lit) => literal_value(lit),
                    None => Ok(None),
                })
                .collect()
        })
        .collect()
}

/// The texts a bound run prepares, with their line: each SQL command of the script
/// parameterized (a captured one: its normalised text). Shared with the check before the run.
pub(crate) fn texts(script: &Script) -> Vec<(usize, String)> {
    script
        .commands
        .iter()
        .filter_map(|c| match c {
            Command::Sql {
                line,
                captured: Some(c),
                ..
            } => Some((*line, c.normalized.clone())),
            Command::Sql { line, parts, .. } => Some((*line, parameterized(parts).0)),
            Command::Set { .. } => None,
        })
        .collect()
}

/// A workload command that makes the session forget its prepared statements: sent on the
/// simple protocol, and the statements prepared again before the next one runs.
pub(crate) fn forgets_prepared(sql: &str) -> bool {
    let first = sql.split_whitespace().next().unwrap_or("");
    first.eq_ignore_ascii_case("deallocate") || first.eq_ignore_ascii_case("discard")
}

/// SQLSTATE of a parameter whose type the server's parse cannot infer (indeterminate_datatype).
pub(crate) const INDETERMINATE_DATATYPE: &str = "42P18";

/// The sentence of a statement the server would not prepare: its name, what the server said,
/// and for a parameter it cannot type, the ways on.
pub(crate) fn refusal_sentence(label: &str, code: Option<&str>, text: &str) -> String {
    if code == Some(INDETERMINATE_DATATYPE) {
        format!(
            "{label}: the server cannot tell the type of a parameter ({text}), which the extended and prepared protocols bind as a value: write a cast (:id::int), or run with --protocol simple"
        )
    } else {
        format!("{label}: the server would not prepare it: {text}")
    }
}

pub(super) fn refusal(b: &Bound, e: &crate::server::libpq::Refused) -> String {
    refusal_sentence(&b.label, e.code.as_deref(), &e.text)
}

/// A SQL command (`parts`, maybe `captured`) at `line` as a bound statement, the `slot`-th.
pub(super) fn bound(
    slot: usize,
    line: usize,
    parts: &[Part],
    captured: Option<&Captured>,
) -> Result<Bound, String> {
    let label = format!("line {line}");
    let c_text =
        |s: String| CString::new(s).map_err(|_| format!("{label}: the command holds a NUL byte"));
    let (sql, values) = match captured {
        Some(c) => {
            let sets = set_values(c).map_err(|e| format!("{label}: {e}"))?;
            let sets = sets
                .into_iter()
                .map(|set| {
                    set.into_iter()
                        .map(|v| v.map(&c_text).transpose())
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            (c.normalized.clone(), Values::Sets(sets))
        }
        None => {
            let (sql, vars) = parameterized(parts);
            let values = if vars.is_empty() {
                Values::None
            } else {
                Values::Vars(vars)
            };
            (sql, values)
        }
    };
    Ok(Bound {
        name: c_text(format!("pglab_{slot}"))?,
        sql: c_text(sql)?,
        label,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_become_parameters_once_each() {
        let s = Script::parse(
            "\\set lo random(1, 10)\n\\set w 3\nSELECT * FROM t WHERE id BETWEEN :lo AND :lo + :w AND c = :client_id::int;\n",
        )
        .unwrap();
        let t = texts(&s);
        assert_eq!(
            t[0].1,
            "SELECT * FROM t WHERE id BETWEEN $1 AND $1 + $2 AND c = $3::int"
        );
        let Command::Sql { parts, .. } = &s.commands[2] else {
            panic!()
        };
        let (_, vars) = parameterized(parts);
        assert_eq!(vars, [2, 3, 0]);
    }

    #[test]
    fn constants_become_the_values_they_stand_for() {
        let v = |s: &str| literal_value(s).unwrap();
        assert_eq!(v("42"), Some("42".into()));
        assert_eq!(v("-1.5"), Some("-1.5".into()));
        assert_eq!(v("'O''Neil'"), Some("O'Neil".into()));
        assert_eq!(v("E'a\\nb\\\\'"), Some("a\nb\\".into()));
        assert_eq!(v("b'0101'"), Some("0101".into()));
        assert_eq!(v("X'1F'"), Some("x1f".into()));
        assert_eq!(v("TRUE"), Some("true".into()));
        assert_eq!(v("$q$it's$q$"), Some("it's".into()));
        assert_eq!(v("NULL"), None);
        let e = literal_value("U&'d\\0061t'").unwrap_err();
        assert!(e.contains("not one pglab turns into a value"), "{e}");
    }

    #[test]
    fn a_captured_statement_binds_its_sets() {
        let st = crate::experiment::query::sqltext::split(
            "-- normalized: SELECT a FROM acc WHERE aid = $1 AND note <> $2\n-- set: $1 = 4411, $2 = 'a, b'\n-- set: $1 = -87, $2 = 'O''Neil'\nSELECT a FROM acc WHERE aid = 4411 AND note <> 'a, b';",
        )
        .unwrap();
        let c = st[0].captured.as_ref().unwrap();
        assert_eq!(
            set_values(c).unwrap(),
            [
                [Some("4411".to_string()), Some("a, b".to_string())],
                [Some("-87".to_string()), Some("O'Neil".to_string())]
            ]
        );
        let s = Script::of_statements(&st);
        assert_eq!(
            texts(&s)[0].1,
            "SELECT a FROM acc WHERE aid = $1 AND note <> $2"
        );
        assert!(forgets_prepared("  DEALLOCATE ALL") && forgets_prepared("discard all"));
        assert!(!forgets_prepared("SELECT 1"));
    }
}
