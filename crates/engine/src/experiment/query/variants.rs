//! A statement's value sets, as `pglab capture` writes them before it: its normalised text
//! (`-- normalized: … $1 …`, continued on `--   ` lines) and one `-- set: $1 = 42, $2 = 'x'`
//! line per set of values seen on production. A replay runs the statement with each set in
//! turn (a timed pass: the n-th execution takes set n, the same order under every setting; a
//! throughput client: one drawn per execution from its seeded generator), so it spreads over
//! the rows production touched rather than running one set every time. The statement itself
//! (what plans, checks and warm-ups run) stays as written below the comments.
//!
//! Each filled text must be the statement below up to its constants (the same fingerprint,
//! see `sql::normalized::fill_as`), and each value one constant: an edited set that would
//! run something else is refused with its line.

use std::collections::BTreeMap;

use crate::sql::normalized::{fill_as, parse_set};

/// A captured statement as it was sent: its normalised text (`$n` for each constant) and the
/// value sets seen, each `$n`'s constant as written. The extended and prepared protocols bind
/// these values rather than run the filled texts (see `loadgen::bind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub normalized: String,
    pub sets: Vec<BTreeMap<u32, String>>,
}

/// What the comments before a statement said of its value sets.
#[derive(Default)]
pub(crate) struct Sets {
    /// The normalised text, with the offset of its first line.
    normalized: Option<(String, usize)>,
    /// The last comment read was the normalised text's: a `--   ` line continues it.
    open: bool,
    /// Each `-- set:` line's text, with its offset.
    sets: Vec<(String, usize)>,
}

impl Sets {
    /// Read a comment (`raw`: after its `--`, at byte `at`) if it is one of these.
    pub(crate) fn read(&mut self, raw: &str, at: usize) -> bool {
        let trimmed = raw.trim();
        if let Some(n) = trimmed.strip_prefix("normalized:") {
            self.normalized = Some((n.trim().to_string(), at));
            self.open = true;
            return true;
        }
        if self.open
            && let Some(more) = raw.strip_prefix("   ")
            && let Some((text, _)) = self.normalized.as_mut()
        {
            text.push('\n');
            text.push_str(more.trim_end());
            return true;
        }
        self.open = false;
        if let Some(s) = trimmed.strip_prefix("set:") {
            self.sets.push((s.trim().to_string(), at));
            return true;
        }
        false
    }

    /// The texts a replay runs in turn (empty without `-- set:` lines), or a sentence with
    /// the line (`line_of` turns an offset into a line number).
    pub(crate) fn variants(
        &self,
        sql: &str,
        line_of: impl Fn(usize) -> usize,
    ) -> Result<Vec<String>, String> {
        if self.sets.is_empty() {
            return Ok(Vec::new());
        }
        let Some((normalized, _)) = &self.normalized else {
            return Err(format!(
                "line {}: a -- set: line needs the statement's -- normalized: text before it, which its $n fill (as pglab capture writes them)",
                line_of(self.sets[0].1)
            ));
        };
        self.sets
            .iter()
            .map(|(set, at)| {
                parse_set(set)
                    .and_then(|v| fill_as(normalized, &v, sql))
                    .map_err(|e| format!("line {}: set '{set}': {e}", line_of(*at)))
            })
            .collect()
    }
}

impl Sets {
    /// The normalised text and its value sets (None without both), once `variants` accepted
    /// them.
    pub(crate) fn captured(&self) -> Option<Captured> {
        let (normalized, _) = self.normalized.as_ref()?;
        let sets: Vec<BTreeMap<u32, String>> = self
            .sets
            .iter()
            .filter_map(|(s, _)| parse_set(s).ok())
            .collect();
        (!sets.is_empty()).then(|| Captured {
            normalized: normalized.clone(),
            sets,
        })
    }
}

/// The text the `n`-th execution of a timed pass runs (0-based): set `n` of the variants in
/// turn, or the statement itself when it has none.
pub(crate) fn nth<'a>(sql: &'a str, variants: &'a [String], n: usize) -> &'a str {
    match variants.len() {
        0 => sql,
        k => &variants[n % k],
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::query::sqltext::split;

    const CAPTURED: &str = "-- name: by_aid\n-- weight: 6\n-- values: from pg_stat_activity, 3 executions seen\n-- normalized: SELECT abalance\n--   FROM acc WHERE aid = $1 AND note <> $2\n-- set: $1 = 4411, $2 = 'a, b'\n-- set: $1 = -87, $2 = 'O''Neil'\nSELECT abalance\nFROM acc WHERE aid = 4411 AND note <> 'a, b';\nSELECT 1;";

    #[test]
    fn sets_become_the_texts_a_replay_runs() {
        let s = split(CAPTURED).unwrap();
        assert_eq!(
            s[0].variants,
            [
                "SELECT abalance\nFROM acc WHERE aid = 4411 AND note <> 'a, b'",
                "SELECT abalance\nFROM acc WHERE aid = -87 AND note <> 'O''Neil'"
            ]
        );
        assert_eq!(s[0].weight, Some(6));
        assert!(s[1].variants.is_empty());
        assert_eq!(super::nth(&s[0].sql, &s[0].variants, 3), s[0].variants[1]);
        assert_eq!(super::nth(&s[1].sql, &s[1].variants, 3), "SELECT 1");
    }

    #[test]
    fn a_set_that_would_run_something_else_is_refused_with_its_line() {
        let edited = CAPTURED.replace("$1 = -87", "$1 = abalance");
        let e = split(&edited).unwrap_err();
        assert!(e.starts_with("line 7: set '$1 = abalance"), "{e}");
        let other = CAPTURED.replace("FROM acc WHERE aid = 4411", "FROM other WHERE aid = 4411");
        let e = split(&other).unwrap_err();
        assert!(e.contains("not the statement below it"), "{e}");
        let bare = "-- set: $1 = 1\nSELECT 1;";
        let e = split(bare).unwrap_err();
        assert!(e.starts_with("line 1: a -- set: line needs"), "{e}");
    }
}
