//! The captured workload as a file a DBA can read and edit, and that `pglab run query
//! --file`/`--script` and `pglab tune --workload` read as it is: one statement per block,
//! with `-- name:` (stable, from the fingerprint) and `-- weight:` (calls on production) before
//! it, production's figures, where its values came from and its normalised text as comments;
//! statements left out are listed at the end with the reason.

use std::fmt::Write;

use super::{Capture, Captured, Values};

/// Most value sets written for one statement: enough to spread a replay over the rows
/// production touched, few enough to keep the file readable.
pub(crate) const MAX_SETS: usize = 100;

/// Every line of `text` as a comment line after `prefix`.
fn comment(out: &mut String, prefix: &str, text: &str) {
    for (i, line) in text.lines().enumerate() {
        let lead = if i == 0 { prefix } else { "--   " };
        let _ = writeln!(out, "{lead}{line}");
    }
}

fn pct(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.3} ms")
    }
}

fn header(c: &Capture, out: &mut String, now: &str) {
    let kept: Vec<&Captured> = c.statements.iter().filter(|s| s.sql.is_some()).collect();
    let _ = writeln!(
        out,
        "-- pglab capture: the workload production runs, for pglab run query --file/--script and pglab tune --workload"
    );
    let _ = writeln!(
        out,
        "-- from: database {} on PostgreSQL {}, {now}",
        c.database, c.server_version
    );
    let of_what = if c.from_statements {
        "of this database's statement time (pg_stat_statements)"
    } else {
        "of the executions seen in pg_stat_activity"
    };
    let _ = writeln!(
        out,
        "-- statements: {} captured, {} written below ({} {of_what}); {} passed over (transaction control, settings, DDL: not replayed on their own)",
        c.statements.len(),
        kept.len(),
        pct(kept.iter().map(|s| s.share).sum()),
        c.other
    );
    super::file_window::header(c, out);
    if let Some(n) = &c.note {
        comment(out, "-- note: ", n);
    }
    let _ = writeln!(
        out,
        "-- values: pg_stat_activity sampled {:.0} s ({} samples, {} executions seen), else column statistics (pg_stats)",
        c.sample_seconds, c.samples, c.executions_seen
    );
    let _ = writeln!(
        out,
        "-- weights: {}; a replay draws each transaction's statement by weight, as pgbench -f file@weight does",
        if c.from_statements {
            "calls on production in the window"
        } else {
            "executions seen"
        }
    );
    if kept.iter().any(|s| s.write) {
        let _ = writeln!(
            out,
            "-- writes: statements marked \"writes\" change data; pglab runs them only on its sandbox, inside --writes rollback or on an imported copy (pglab sandbox import)"
        );
    }
    let _ = writeln!(
        out,
        "-- capture's cost on the source: {} queries in {:.1} s, all in read-only transactions",
        c.queries, c.seconds
    );
}

fn baseline(s: &Captured, out: &mut String) {
    let Some(b) = &s.baseline else {
        let _ = writeln!(
            out,
            "-- seen: {} executions ({} of those seen); no production timings without pg_stat_statements",
            s.weight,
            pct(s.share)
        );
        return;
    };
    let per = |v: f64| if b.calls > 0.0 { v / b.calls } else { 0.0 };
    let _ = writeln!(
        out,
        "-- production: {:.0} calls, {} of the time; mean {}, stddev {}; per call {:.2} rows, {:.1} shared blocks hit, {:.1} read, {:.1} temp",
        b.calls,
        pct(s.share),
        ms(b.mean_ms),
        ms(b.stddev_ms),
        per(b.rows),
        per(b.shared_hit),
        per(b.shared_read),
        per(b.temp)
    );
}

/// The distinct sets, in the order first seen.
fn distinct(sets: &[String]) -> Vec<&String> {
    let mut out: Vec<&String> = Vec::new();
    for s in sets {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// At most [`MAX_SETS`] of the executions' sets, spread evenly over the sample (the first
/// always among them: the statement is written with it).
fn spread(sets: &[String]) -> Vec<&String> {
    let n = sets.len();
    let k = n.min(MAX_SETS);
    (0..k).map(|i| &sets[i * n / k]).collect()
}

fn values(s: &Captured, out: &mut String) {
    match &s.values {
        Values::None => {
            let _ = writeln!(out, "-- values: none needed");
        }
        Values::Activity { seen, sets } => {
            let distinct = distinct(sets);
            if distinct.len() == 1 {
                let _ = writeln!(
                    out,
                    "-- values: from pg_stat_activity, {seen} executions seen, all with {}",
                    distinct[0]
                );
                return;
            }
            let written = spread(sets).len();
            let _ = writeln!(
                out,
                "-- values: from pg_stat_activity, {seen} executions seen ({} distinct value sets); the {written} -- set: lines below are their values (spread over the sample, repeats kept), which a replay runs in turn; the statement itself runs for plans and checks",
                distinct.len()
            );
        }
        Values::Statistics { sources, sets } => {
            let each: Vec<String> = sources.iter().map(|(n, w)| format!("${n} {w}")).collect();
            let paged = |w: &str| w.starts_with("LIMIT ") || w.starts_with("OFFSET ");
            let from = if sources.iter().all(|(_, w)| paged(w)) {
                "production's figures"
            } else if sources.iter().any(|(_, w)| paged(w)) {
                "column statistics (pg_stats) and production's figures"
            } else {
                "column statistics (pg_stats)"
            };
            let drawn = if sets.len() > 1 {
                format!(
                    "; the {} -- set: lines below draw each equality's value as the column's values are spread (a most common value as often as its frequency, else a histogram bound), which a replay runs in turn; the statement itself runs for plans and checks",
                    sets.len()
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "-- values: from {from}, none seen in pg_stat_activity: {}{drawn}",
                each.join("; ")
            );
        }
    }
}

/// The `-- set:` lines a statement's values give (none for a single set).
fn set_lines(s: &Captured) -> Vec<&String> {
    match &s.values {
        Values::Activity { sets, .. } if distinct(sets).len() > 1 => spread(sets),
        Values::Statistics { sets, .. } if sets.len() > 1 => sets.iter().collect(),
        _ => Vec::new(),
    }
}

/// The workload text; `now` is the time written in its header.
pub fn render(c: &Capture, now: &str) -> String {
    let mut out = String::new();
    header(c, &mut out, now);
    for s in &c.statements {
        let Some(sql) = &s.sql else { continue };
        out.push('\n');
        let _ = writeln!(out, "-- name: {}", s.name);
        let _ = writeln!(out, "-- weight: {}", s.weight);
        if s.write {
            let _ = writeln!(
                out,
                "-- writes: replayed only on pglab's sandbox, inside --writes rollback or on an imported copy"
            );
        }
        baseline(s, &mut out);
        values(s, &mut out);
        if s.sql.as_deref() != Some(s.normalized.as_str()) {
            comment(&mut out, "-- normalized: ", &s.normalized);
        }
        for set in set_lines(s) {
            let _ = writeln!(out, "-- set: {set}");
        }
        let _ = writeln!(out, "{}", terminated(sql));
    }
    let left: Vec<&Captured> = c.statements.iter().filter(|s| s.sql.is_none()).collect();
    if !left.is_empty() {
        let _ = writeln!(out, "\n-- left out, with the reason:");
        for s in left {
            let _ = writeln!(
                out,
                "-- {} ({} of the time): {}",
                s.name,
                pct(s.share),
                s.left_out.as_deref().unwrap_or("no values")
            );
            comment(&mut out, "--   ", &s.normalized);
        }
    }
    super::file_window::trailer(c, &mut out);
    out
}

/// The statement with its `;`, written so that the file's reader takes it back as itself: on
/// a line of its own when the text ends in a `--` comment (which would swallow it).
pub fn terminated(sql: &str) -> String {
    // PostgreSQL's own scanner (libpg_query) splits, as the file's reader does: a `;` inside
    // a comment, a string or dollar quotes ends nothing. The round trip through the reader
    // itself is tested in `file_tests`.
    let split = |text: &str| -> Option<Vec<String>> {
        pg_query::split_with_scanner(text)
            .ok()
            .map(|v| v.iter().map(|s| s.trim().to_string()).collect())
    };
    let body = sql.trim_end();
    let body = match split(body) {
        Some(one) if one.len() == 1 => one[0].clone(),
        _ => body.to_string(),
    };
    let same = |text: &str| split(text).is_some_and(|v| v.len() == 1 && v[0] == body);
    let inline = format!("{body};");
    if same(&inline) {
        inline
    } else {
        format!("{body}\n;")
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
