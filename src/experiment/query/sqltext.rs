//! The DBA's SQL as text: split into statements the way the server's lexer sees them
//! (quotes, `E''` strings, quoted identifiers, dollar quotes, `--` and nested `/* */`
//! comments, `BEGIN ATOMIC … END` bodies), each named by a `-- name: …` comment before it or
//! by its first line, weighted by a `-- weight: N` comment before it (how often a throughput
//! replay draws it, as `pgbench -f file@N` weighs a script; what a timed pass counts it as),
//! and `@FILE` references read. Splitting more eagerly than the server
//! would is harmless (the pieces fail to parse); the server's own parser has the last word
//! (see `guard`), so a piece that holds two commands never runs.

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
}

/// Longest name taken from a statement's first line.
const NAME_CHARS: usize = 48;

#[derive(Clone, Copy, PartialEq)]
enum State {
    Normal,
    Quote { escapes: bool },
    Ident,
    Dollar,
    LineComment,
    Block(u32),
}

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

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The dollar-quote tag starting at `i` (`$tag$` or `$$`), if one starts there.
fn dollar_tag(s: &str, i: usize) -> Option<&str> {
    let rest = &s[i + 1..];
    let close = rest.find('$')?;
    let tag = &rest[..close];
    let ok = tag.is_empty()
        || (!tag.starts_with(|c: char| c.is_ascii_digit())
            && tag.chars().all(|c| c.is_alphanumeric() || c == '_'));
    ok.then(|| &s[i..i + close + 2])
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

/// Split `text` at top-level semicolons.
fn pieces(text: &str) -> Vec<Piece> {
    let mut splitter = Splitter::new(text);
    let mut i = 0;
    while i < text.len() {
        i += splitter.step(i);
    }
    splitter.finish()
}

/// The lexer `pieces` runs over the text: its state, the pieces so far and the one being read.
struct Splitter<'t> {
    text: &'t str,
    state: State,
    out: Vec<Piece>,
    cur: Piece,
    /// The tag that closes the open dollar quote (`$x$`).
    dollar: String,
    /// The words of the current piece: `BEGIN ATOMIC` bodies hold semicolons up to their `END`.
    words: Vec<String>,
    /// `BEGIN ATOMIC` bodies (and `CASE`s inside them) open.
    atomic: u32,
}

impl<'t> Splitter<'t> {
    fn new(text: &'t str) -> Self {
        Splitter {
            text,
            state: State::Normal,
            out: Vec::new(),
            cur: Piece::default(),
            dollar: String::new(),
            words: Vec::new(),
            atomic: 0,
        }
    }

    /// Read the character at byte `i`; the bytes it takes (with what it opens or closes).
    fn step(&mut self, i: usize) -> usize {
        let c = self.text[i..].chars().next().unwrap_or(' ');
        let next = self.text.as_bytes().get(i + 1).copied().unwrap_or(0);
        match self.state {
            State::Normal => self.normal(i, c, next),
            State::Quote { escapes } => self.quote(i, c, next, escapes),
            State::Ident => self.ident(c, next),
            State::Dollar => self.dollar_body(i, c),
            State::LineComment => {
                if c == '\n' {
                    self.state = State::Normal;
                }
                c.len_utf8()
            }
            State::Block(depth) => self.block(c, next, depth),
        }
    }

    /// Outside quotes and comments: a comment opens (a `--` one before the first token is
    /// read), a `;` outside `BEGIN ATOMIC` ends the piece, or a token starts.
    fn normal(&mut self, i: usize, c: char, next: u8) -> usize {
        if c == '-' && next == b'-' {
            self.state = State::LineComment;
            let text = self.text;
            let line_end = text[i..].find('\n').map_or(text.len(), |e| i + e);
            if self.cur.first.is_none() {
                self.cur.read_comment(&text[i + 2..line_end], i);
            }
            2
        } else if c == '/' && next == b'*' {
            self.state = State::Block(1);
            2
        } else if c == ';' && self.atomic == 0 {
            self.cur.end = i;
            self.out.push(std::mem::take(&mut self.cur));
            self.words.clear();
            c.len_utf8()
        } else if !c.is_whitespace() {
            if self.cur.first.is_none() {
                self.cur.first = Some(i);
            }
            self.token(i, c)
        } else {
            c.len_utf8()
        }
    }

    /// A token's first character: a string, a quoted identifier, a dollar quote or a word
    /// starts here.
    fn token(&mut self, i: usize, c: char) -> usize {
        let text = self.text;
        if c == '\'' {
            let prev = text[..i].chars().next_back();
            let e = matches!(prev, Some('e' | 'E'))
                && !text[..i - 1].chars().next_back().is_some_and(is_ident_char);
            self.state = State::Quote { escapes: e };
        } else if c == '"' {
            self.state = State::Ident;
        } else if c == '$'
            && !text[..i].chars().next_back().is_some_and(is_ident_char)
            && let Some(tag) = dollar_tag(text, i)
        {
            self.dollar = tag.to_string();
            self.state = State::Dollar;
            return tag.len();
        } else if c.is_alphabetic() || c == '_' {
            return self.word(i);
        }
        c.len_utf8()
    }

    /// A word: `BEGIN ATOMIC` opens a body, `END` closes one, and a `CASE` inside one opens
    /// its own `END`.
    fn word(&mut self, i: usize) -> usize {
        let text = self.text;
        let end = text[i..]
            .find(|ch: char| !is_ident_char(ch))
            .map_or(text.len(), |e| i + e);
        let w = text[i..end].to_ascii_uppercase();
        if w == "ATOMIC" && self.words.last().is_some_and(|p| p == "BEGIN") {
            self.atomic += 1;
        } else if w == "END" && self.atomic > 0 {
            self.atomic -= 1;
        } else if w == "CASE" && self.atomic > 0 {
            // CASE … END inside an atomic body closes its own END.
            self.atomic += 1;
        }
        self.words.push(w);
        end - i
    }

    /// Inside a string: `''` stays in it, a backslash escapes in an `E''` one, `'` closes it.
    fn quote(&mut self, i: usize, c: char, next: u8, escapes: bool) -> usize {
        if escapes && c == '\\' {
            return 1 + self.text[i + 1..].chars().next().map_or(0, char::len_utf8);
        }
        if c == '\'' {
            if next == b'\'' {
                return 2;
            }
            self.state = State::Normal;
        }
        c.len_utf8()
    }

    /// Inside a quoted identifier: `""` stays in it, `"` closes it.
    fn ident(&mut self, c: char, next: u8) -> usize {
        if c == '"' {
            if next == b'"' {
                return 2;
            }
            self.state = State::Normal;
        }
        c.len_utf8()
    }

    /// Inside a dollar quote: only its own tag closes it.
    fn dollar_body(&mut self, i: usize, c: char) -> usize {
        if self.text[i..].starts_with(self.dollar.as_str()) {
            self.state = State::Normal;
            return self.dollar.len();
        }
        c.len_utf8()
    }

    /// Inside a block comment: `/*` nests, `*/` closes one level.
    fn block(&mut self, c: char, next: u8, depth: u32) -> usize {
        if c == '*' && next == b'/' {
            self.state = if depth == 1 {
                State::Normal
            } else {
                State::Block(depth - 1)
            };
            2
        } else if c == '/' && next == b'*' {
            self.state = State::Block(depth + 1);
            2
        } else {
            c.len_utf8()
        }
    }

    /// The last piece ends with the text.
    fn finish(mut self) -> Vec<Piece> {
        self.cur.end = self.text.len();
        self.out.push(self.cur);
        self.out
    }
}

/// 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The statements of `text` (empty pieces dropped), named. A psql meta-command (`\timing`)
/// is refused with its line: the text is SQL only.
pub fn split(text: &str) -> Result<Vec<Statement>, String> {
    let mut out: Vec<Statement> = Vec::new();
    for p in pieces(text) {
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

/// The first keyword of a statement, upper case (after comments, space and opening
/// parentheses): `SELECT`, `WITH`, `DELETE`, …
pub fn first_keyword(sql: &str) -> String {
    words(sql, 1).into_iter().next().unwrap_or_default()
}

/// The first `n` words of a statement outside comments, upper case.
pub fn words(sql: &str, n: usize) -> Vec<String> {
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
pub fn resolve(value: &str) -> Result<String, String> {
    let v = value.trim();
    match v.strip_prefix('@') {
        Some(path) => read_file(path.trim()),
        None => Ok(v.to_string()),
    }
}

/// Read a file of SQL (one sentence when it cannot be).
pub fn read_file(path: &str) -> Result<String, String> {
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
pub fn digest(text: &str) -> String {
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
