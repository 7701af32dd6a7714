//! A pgbench-style script, the subset DBAs already have: SQL commands (ended by `;`, may span
//! lines; one execution of the whole script is one transaction, as pgbench counts them) and
//! `\set name expression` (see [`super::expr`]). `:name` in SQL is replaced by the variable's
//! current value as text, as `pgbench -M simple` does (outside or inside quotes alike; `::`
//! casts are left alone; a `:name` no `\set` defines is left as written). `:client_id`
//! (0-based) and `:scale` (1) are set for every client. Any other meta-command is refused
//! with its line number. A SQL command may carry a `-- weight: N` comment before it (see
//! [`sqltext`]): a script with weights is a mix, where each transaction runs the `\set`
//! commands and then one SQL command drawn by weight (an unweighted one weighs 1), as
//! `pgbench -f a.sql@5 -f b.sql@3` draws one script per transaction.

use serde::{Deserialize, Serialize};

use super::expr::{self, Expr};
use super::sqltext;

/// Variables every client has before the script's own.
pub(crate) const BUILTINS: [&str; 2] = ["client_id", "scale"];

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Set {
        var: usize,
        expr: Expr,
        line: usize,
    },
    Sql {
        parts: Vec<Part>,
        line: usize,
        /// From `-- weight: N` (None: not given).
        weight: Option<u64>,
        /// The texts a replay runs in turn instead, from `-- set:` lines (see
        /// [`super::variants`]); empty: `parts` every time.
        variants: Vec<Vec<Part>>,
        /// The normalised text and value sets behind `variants` (see
        /// [`super::variants::Captured`]).
        captured: Option<super::variants::Captured>,
    },
}

/// A piece of a SQL command: text as written, or a variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    Var(usize),
}

/// A parsed script. Serialised as its text (parsed again when read back).
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub text: String,
    /// Variable names; the first are [`BUILTINS`].
    pub vars: Vec<String>,
    pub commands: Vec<Command>,
}

impl Serialize for Script {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Script {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Script, D::Error> {
        let text = String::deserialize(d)?;
        Script::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn var_index(vars: &mut Vec<String>, name: &str) -> usize {
    match vars.iter().position(|v| v == name) {
        Some(i) => i,
        None => {
            vars.push(name.to_string());
            vars.len() - 1
        }
    }
}

/// The names `\set` defines anywhere in the script (so a SQL command may use a variable set
/// further down on a later transaction, as pgbench allows).
fn set_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        if w.next() == Some("\\set")
            && let Some(n) = w.next()
            && !names.iter().any(|x| x == n)
        {
            names.push(n.to_string());
        }
    }
    names
}

/// `:name` replaced by the variable's value as the script runs: the parts of a SQL command.
pub(crate) fn template(sql: &str, vars: &[String]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = sql;
    while let Some(at) = rest.find(':') {
        text.push_str(&rest[..at]);
        let after = &rest[at..];
        let colons = after.len() - after.trim_start_matches(':').len();
        if colons > 1 {
            // A `::` cast.
            text.push_str(&after[..colons]);
            rest = &after[colons..];
            continue;
        }
        let name_len = after[1..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len() - 1);
        let name = &after[1..1 + name_len];
        match vars.iter().position(|v| v == name).filter(|_| name_len > 0) {
            Some(i) => {
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(Part::Var(i));
            }
            None => text.push_str(&after[..1 + name_len]),
        }
        rest = &after[1 + name_len..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    parts
}

impl Script {
    /// Parse a script; one sentence (with the line) for the first problem.
    pub fn parse(text: &str) -> Result<Script, String> {
        let mut vars = set_names(text);
        let mut commands = Vec::new();
        let mut sql = String::new();
        let mut sql_line = 1;
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line_no = i + 1;
            let trimmed = lines[i].trim_start();
            if !trimmed.starts_with('\\') || sql_pending(&sql) {
                if sql.trim().is_empty() {
                    sql.clear();
                    sql_line = line_no;
                }
                sql.push_str(lines[i]);
                sql.push('\n');
                i += 1;
                continue;
            }
            // A meta-command: flush the SQL before it, then read it (with `\` continuations).
            flush_sql(&mut sql, sql_line, &vars, &mut commands)?;
            let mut meta = trimmed.to_string();
            while meta.ends_with('\\') && i + 1 < lines.len() {
                meta.pop();
                i += 1;
                meta.push(' ');
                meta.push_str(lines[i].trim());
            }
            commands.push(meta_command(&meta, line_no, &mut vars)?);
            i += 1;
        }
        flush_sql(&mut sql, sql_line, &vars, &mut commands)?;
        if !commands.iter().any(|c| matches!(c, Command::Sql { .. })) {
            return Err("the script has no SQL command".into());
        }
        Ok(Script {
            text: text.to_string(),
            vars,
            commands,
        })
    }

    /// A script of plain statements, one transaction running each in turn (what `--sql` runs
    /// in throughput mode), each with its value sets. Its text shows the statements only:
    /// it is what a run of them is recorded as, and the statements keep their sets.
    pub(crate) fn of_statements(statements: &[sqltext::Statement]) -> Script {
        let vars: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
        let commands = statements
            .iter()
            .map(|s| Command::Sql {
                parts: vec![Part::Text(s.sql.clone())],
                line: s.line,
                weight: s.weight,
                variants: s
                    .variants
                    .iter()
                    .map(|v| vec![Part::Text(v.clone())])
                    .collect(),
                captured: s.captured.clone(),
            })
            .collect();
        let text = statements
            .iter()
            .map(|s| match s.weight {
                Some(w) => format!("-- weight: {w}\n{};\n", s.sql),
                None => format!("{};\n", s.sql),
            })
            .collect::<String>();
        Script {
            text,
            vars,
            commands,
        }
    }

    /// The SQL commands' texts as written (variables still `:name`), with their lines.
    pub(crate) fn sql_commands(&self) -> Vec<(usize, String)> {
        self.commands
            .iter()
            .filter_map(|c| match c {
                Command::Sql { parts, line, .. } => Some((*line, self.render(parts, None))),
                Command::Set { .. } => None,
            })
            .collect()
    }

    /// A mix (some command has a weight): each SQL command's index among the commands with
    /// its weight, of which a transaction runs one. None: every transaction runs them all.
    pub fn mix(&self) -> Option<Vec<(usize, u64)>> {
        let weighted = self.commands.iter().any(|c| {
            matches!(
                c,
                Command::Sql {
                    weight: Some(_),
                    ..
                }
            )
        });
        weighted.then(|| {
            self.commands
                .iter()
                .enumerate()
                .filter_map(|(i, c)| match c {
                    Command::Sql { weight, .. } => Some((i, weight.unwrap_or(1))),
                    Command::Set { .. } => None,
                })
                .collect()
        })
    }

    /// A SQL command's text with the variables' values (`None`: as `:name`).
    pub(crate) fn render(&self, parts: &[Part], values: Option<&[i64]>) -> String {
        let mut s = String::new();
        for p in parts {
            match (p, values) {
                (Part::Text(t), _) => s.push_str(t),
                (Part::Var(i), Some(v)) => s.push_str(&v.get(*i).copied().unwrap_or(0).to_string()),
                (Part::Var(i), None) => {
                    s.push(':');
                    s.push_str(self.vars.get(*i).map_or("", String::as_str));
                }
            }
        }
        s
    }
}

/// True while `sql` holds the start of a command not yet ended by `;` (outside quotes and
/// comments): a backslash line then belongs to the SQL, as in pgbench.
fn sql_pending(sql: &str) -> bool {
    if sql.trim().is_empty() {
        return false;
    }
    if sqltext::unterminated(sql) {
        return true;
    }
    let Ok(stmts) = sqltext::split(sql) else {
        return false;
    };
    // The last piece after the final `;` holds a statement: the command is not finished.
    let ended = sql.trim_end().ends_with(';');
    !stmts.is_empty() && !ended && {
        let last = stmts.last().map(|s| s.sql.as_str()).unwrap_or("");
        !last.is_empty()
    }
}

fn flush_sql(
    sql: &mut String,
    first_line: usize,
    vars: &[String],
    commands: &mut Vec<Command>,
) -> Result<(), String> {
    if sql.trim().is_empty() {
        sql.clear();
        return Ok(());
    }
    let stmts = sqltext::split(sql).map_err(|e| shift_line(&e, first_line))?;
    for s in stmts {
        commands.push(Command::Sql {
            parts: template(&s.sql, vars),
            line: first_line + s.line - 1,
            weight: s.weight,
            variants: s.variants.iter().map(|v| template(v, vars)).collect(),
            captured: s.captured,
        });
    }
    sql.clear();
    Ok(())
}

/// "line 2: …" of a piece that starts at `first_line` as a line of the whole script.
fn shift_line(e: &str, first_line: usize) -> String {
    if let Some(rest) = e.strip_prefix("line ")
        && let Some((n, msg)) = rest.split_once(':')
        && let Ok(n) = n.parse::<usize>()
    {
        return format!("line {}:{msg}", first_line + n - 1);
    }
    e.to_string()
}

fn meta_command(meta: &str, line: usize, vars: &mut Vec<String>) -> Result<Command, String> {
    let cmd = meta.split_whitespace().next().unwrap_or("\\");
    if cmd != "\\set" {
        return Err(format!(
            "line {line}: {cmd} is not supported: pglab runs \\set and SQL commands (the pgbench subset)"
        ));
    }
    let rest = meta[cmd.len()..].trim();
    let (name, expr_text) = rest.split_once(char::is_whitespace).ok_or_else(|| {
        format!(
            "line {line}: \\set needs a name and an expression, e.g. \\set aid random(1, 100000)"
        )
    })?;
    if name.is_empty()
        || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(format!(
            "line {line}: \\set: '{name}' is not a variable name"
        ));
    }
    let known = vars.clone();
    let parsed = expr::parse(expr_text, &mut |v| {
        known
            .iter()
            .position(|n| n == v)
            .ok_or_else(|| format!(":{v} is never set"))
    })
    .map_err(|e| format!("line {line}: \\set {name}: {e}"))?;
    Ok(Command::Set {
        var: var_index(vars, name),
        expr: parsed,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TPCB_SELECT: &str = "\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\nBEGIN;\nSELECT abalance FROM pgbench_accounts\n  WHERE aid = :aid;\nSELECT :bid::int, ':aid';\nEND;\n";

    #[test]
    fn reads_sets_and_multi_line_sql() {
        let s = Script::parse(TPCB_SELECT).unwrap();
        assert_eq!(s.vars, ["client_id", "scale", "aid", "bid"]);
        assert_eq!(s.commands.len(), 6);
        let sql = s.sql_commands();
        assert_eq!(sql[0], (3, "BEGIN".to_string()));
        assert_eq!(
            sql[1],
            (
                4,
                "SELECT abalance FROM pgbench_accounts\n  WHERE aid = :aid".to_string()
            )
        );
        let Command::Sql { parts, .. } = &s.commands[4] else {
            panic!()
        };
        // Variables are replaced inside quotes too (as pgbench -M simple does); casts stay.
        assert_eq!(s.render(parts, Some(&[0, 1, 42, 7])), "SELECT 7::int, '42'");
        let back: Script = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn other_meta_commands_are_refused_with_their_line() {
        let e = Script::parse("SELECT 1;\n\n\\sleep 10 ms\n").unwrap_err();
        assert_eq!(
            e,
            "line 3: \\sleep is not supported: pglab runs \\set and SQL commands (the pgbench subset)"
        );
        let e = Script::parse("\\set x random(1, 10.5)\nSELECT :x;").unwrap_err();
        assert!(
            e.starts_with("line 1: \\set x: 10.5 is not an integer"),
            "{e}"
        );
        let e = Script::parse("\\set x\nSELECT 1;").unwrap_err();
        assert!(e.starts_with("line 1: \\set needs a name"), "{e}");
        let e = Script::parse("\\set x :y + 1\nSELECT 1;").unwrap_err();
        assert_eq!(e, "line 1: \\set x: :y is never set");
        assert_eq!(
            Script::parse("\\set x 1\n").unwrap_err(),
            "the script has no SQL command"
        );
        let e = Script::parse("SELECT 1;\nSELECT 2;\n\\timing\n").unwrap_err();
        assert!(e.starts_with("line 3: \\timing"), "{e}");
    }

    #[test]
    fn continuation_lines_and_unknown_variables() {
        let s = Script::parse("\\set n 1 + \\\n  2\nSELECT :n, :other;").unwrap();
        let Command::Sql { parts, line, .. } = &s.commands[1] else {
            panic!()
        };
        assert_eq!(*line, 3);
        assert_eq!(s.render(parts, Some(&[0, 1, 3])), "SELECT 3, :other");
        let plain = Script::of_statements(&sqltext::split("SELECT 1; SELECT 2").unwrap());
        assert_eq!(plain.sql_commands().len(), 2);
        assert_eq!(plain.mix(), None);
    }

    #[test]
    fn weights_make_a_mix() {
        let s = Script::parse(
            "-- the capture's header\n\\set a random(1, 9)\n-- name: q1\n-- weight: 5\nSELECT :a;\n-- weight: 3\nSELECT 2;\nSELECT 3;\n",
        )
        .unwrap();
        assert_eq!(s.mix(), Some(vec![(1, 5), (2, 3), (3, 1)]));
        let back: Script = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back.mix(), s.mix());
        let stmts = sqltext::split("-- weight: 2\nSELECT 1; SELECT 2").unwrap();
        let plain = Script::parse(&Script::of_statements(&stmts).text).unwrap();
        assert_eq!(plain.mix(), Some(vec![(0, 2), (1, 1)]));
    }
}
