//! The DBA's SQL as text: split into statements the way the server's lexer sees them
//! (PostgreSQL's own lexer through pg_query's scanner: quotes, `E''` strings, quoted
//! identifiers, dollar quotes, `--` and nested `/* */` comments; `BEGIN ATOMIC … END`
//! bodies), each named by a `-- name: …` comment before it or by its first line, weighted by a
//! `-- weight: N` comment before it (how often a throughput replay draws it, as
//! `pgbench -f file@N` weighs a script; what a timed pass counts it as), and `@FILE`
//! references read. The server's own parser has the last word (see `guard`), so a piece that
//! holds two commands never runs.

use serde::{Deserialize, Serialize};

/// One statement of the DBA's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// From a `-- name: …` comment before it, else its first line (shortened).
    pub name: String,
    /// The statement without its terminating `;` and without the comments before it.
    pub sql: String,
    /// 1-based line of its first token in the text it came from.
    pub line: usize,
    /// From a `-- weight: N` comment before it (None: none given, which weighs 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
    /// Production's mean time per call in nanoseconds, from the `-- production: … mean
    /// 0.042 ms, …` line `pglab capture` writes before it: what a replay is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub production_mean_ns: Option<u64>,
    /// The texts a replay runs in turn, from the `-- set:` lines (and the `-- normalized:`
    /// text) `pglab capture` writes before it: the first is `sql`. Empty: `sql` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// The normalised text and value sets behind `variants`, which the extended and prepared
    /// protocols bind as values. Not recorded: the file (or `variants`) is the record.
    #[serde(skip)]
    pub captured: Option<super::variants::Captured>,
}

/// Longest name taken from a statement's first line.
const NAME_CHARS: usize = 48;

/// A piece of text between two top-level `;`, with the comments before its first token.
#[derive(Default)]
struct Piece {
    end: usize,
    /// Byte offset of the first token (None: only comments and space).
    first: Option<usize>,
    /// `-- name: x` seen before the first token.
    name: Option<String>,
    /// `-- weight: n` seen before the first token, as written, with its offset.
    weight: Option<(String, usize)>,
    /// The mean of a `-- production:` line before the first token, in nanoseconds.
    production_mean_ns: Option<u64>,
    /// The `-- normalized:` text and `-- set:` lines (see `variants`).
    sets: super::variants::Sets,
}

impl Piece {
    /// A `--` comment before the first token (at byte `at`, `raw` after the `--`): `name:`,
    /// `weight:`, `production:`, or what `variants` reads.
    fn read_comment(&mut self, raw: &str, at: usize) {
        if self.sets.read(raw, at) {
            return;
        }
        let comment = raw.trim();
        if let Some(n) = comment.strip_prefix("name:") {
            let n = n.trim();
            if !n.is_empty() {
                self.name = Some(n.to_string());
            }
        } else if let Some(w) = comment.strip_prefix("weight:") {
            self.weight = Some((w.trim().to_string(), at));
        } else if let Some(p) = comment.strip_prefix("production:") {
            self.production_mean_ns = production_mean(p);
        }
    }
}

/// `… mean 0.042 ms, …` (or `mean 120 ms`) in a `-- production:` line: the mean in
/// nanoseconds.
fn production_mean(line: &str) -> Option<u64> {
    let after = &line[line.find("mean ")? + 5..];
    let (number, rest) = after.split_once(' ')?;
    rest.starts_with("ms")
        .then(|| number.parse::<f64>().ok())
        .flatten()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| (v * 1e6).round() as u64)
}

/// Split `text` at top-level semicolons, as PostgreSQL's own lexer reads it (pg_query's
/// scanner): quotes, `E''` strings, quoted identifiers, dollar quotes and nested comments are
/// the server's, not a second lexer's. A `BEGIN ATOMIC` body holds semicolons up to its `END`
/// (a `CASE` inside it closes its own `END`). A text the lexer cannot read (an unterminated
/// quote or comment) is the lexer's sentence.
fn pieces(text: &str) -> Result<Vec<Piece>, String> {
    use pg_query::protobuf::Token;
    let tokens = pg_query::scan_tokens(text).map_err(|e| match e {
        pg_query::Error::Scan(m) => m,
        other => other.to_string(),
    })?;
    let mut out = Vec::new();
    let mut cur = Piece::default();
    let mut atomic = 0u32;
    let mut prev = None;
    for t in &tokens {
        let (start, end) = (t.start as usize, t.end as usize);
        let token = t.token();
        match token {
            Token::SqlComment => {
                if cur.first.is_none() {
                    cur.read_comment(&text[start + 2..end], start);
                }
                continue;
            }
            Token::CComment => continue,
            Token::Ascii59 if atomic == 0 => {
                cur.end = start;
                out.push(std::mem::take(&mut cur));
                prev = None;
                continue;
            }
            Token::Atomic if prev == Some(Token::BeginP) => atomic += 1,
            Token::EndP if atomic > 0 => atomic -= 1,
            Token::Case if atomic > 0 => atomic += 1,
            _ => {}
        }
        cur.first.get_or_insert(start);
        prev = Some(token);
    }
    cur.end = text.len();
    out.push(cur);
    Ok(out)
}

/// True when `text` ends inside a quote, a quoted identifier, a dollar quote or a comment
/// (the lexer's own judgement): the command goes on on the next line.
pub(crate) fn unterminated(text: &str) -> bool {
    matches!(pg_query::scan_tokens(text), Err(pg_query::Error::Scan(m)) if m.starts_with("unterminated"))
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The statements of `text` (empty pieces dropped), named. A psql meta-command (`\timing`)
/// is refused with its line: the text is SQL only.
pub fn split(text: &str) -> Result<Vec<Statement>, String> {
    let mut out: Vec<Statement> = Vec::new();
    for p in pieces(text)? {
        let Some(first) = p.first else { continue };
        let sql = text[first..p.end].trim_end().to_string();
        let line = line_of(text, first);
        if sql.starts_with('\\') {
            let cmd = sql.split_whitespace().next().unwrap_or("\\");
            return Err(format!(
                "line {line}: {cmd} is a psql meta-command, not SQL: leave it out"
            ));
        }
        let name = p.name.unwrap_or_else(|| first_line_name(&sql));
        let weight = match p.weight {
            None => None,
            Some((w, at)) => Some(match w.parse::<u64>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(format!(
                        "line {}: weight '{w}' is not a whole number of at least 1 (write -- weight: 5)",
                        line_of(text, at)
                    ));
                }
            }),
        };
        let variants = p.sets.variants(&sql, |at| line_of(text, at))?;
        out.push(Statement {
            name,
            sql,
            line,
            weight,
            production_mean_ns: p.production_mean_ns,
            variants,
            captured: p.sets.captured(),
        });
    }
    // Names are how findings and trials refer to statements: make them unique.
    for i in 1..out.len() {
        let base = out[i].name.clone();
        let mut n = 2;
        while out[..i].iter().any(|s| s.name == out[i].name) {
            out[i].name = format!("{base} ({n})");
            n += 1;
        }
    }
    Ok(out)
}

/// A statement's first line, shortened: its name when no comment gives one.
fn first_line_name(sql: &str) -> String {
    let line = sql.lines().next().unwrap_or("").trim();
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= NAME_CHARS {
        line
    } else {
        let cut: String = line.chars().take(NAME_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
/// The first keyword of a statement, upper case (after comments, space and opening
/// parentheses): `SELECT`, `WITH`, `DELETE`, …
pub(crate) fn first_keyword(sql: &str) -> String {
    words(sql, 1).into_iter().next().unwrap_or_default()
}

#[cfg(test)]
/// The first `n` words of a statement outside comments, upper case.
pub(crate) fn words(sql: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = sql;
    while out.len() < n {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |e| &r[e..]);
            continue;
        }
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_ascii_uppercase());
        rest = &rest[end..];
    }
    out
}

/// A field's text: SQL as written, or `@FILE` read from disk (one sentence when it cannot be).
pub(crate) fn resolve(value: &str) -> Result<String, String> {
    let v = value.trim();
    match v.strip_prefix('@') {
        Some(path) => read_file(path.trim()),
        None => Ok(v.to_string()),
    }
}

/// Read a file of SQL (one sentence when it cannot be).
pub(crate) fn read_file(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err("@ needs a file name after it, e.g. @setup.sql".into());
    }
    std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            std::io::ErrorKind::InvalidData => "it is not UTF-8 text".to_string(),
            _ => e.to_string(),
        };
        format!("cannot read {path}: {why}")
    })
}

/// A short stable digest of a text (FNV-1a, 64 bits, hex): how records tell whether two runs
/// measured the same statement or setup without storing it twice.
pub(crate) fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
#[path = "sqltext_tests.rs"]
mod tests;
