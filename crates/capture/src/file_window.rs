//! The window a captured file carries, for people and for `pglab verify`: header lines that
//! say what the figures stand for (the window's start, end and length, or the totals since
//! the last reset), its load and settings, what was hidden from the role and what was left
//! out as pglab's own or the DBA's; and, at the end of the file, one `-- window-json:` line
//! with the window and one `-- statement-json:` line per application statement of the window
//! (not only those written above them), which `verify` reads back.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::Capture;
use super::statements::Baseline;
use super::window::Window;

const WINDOW_TAG: &str = "-- window-json: ";
const STATEMENT_TAG: &str = "-- statement-json: ";

/// One statement of a window, as `verify` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowStatement {
    pub name: String,
    #[serde(flatten)]
    pub figures: Baseline,
}

/// What a file carries for `verify`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Carried {
    pub database: String,
    pub server_version: String,
    pub role: String,
    pub window: Window,
    /// Entries hidden from the role and their share of the statement time.
    pub hidden: usize,
    pub hidden_share: f64,
    pub statements: Vec<WindowStatement>,
}

/// A role as a GRANT names it: bare when it needs no quotes.
pub fn role_name(role: &str) -> String {
    let plain = role.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && role
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        role.to_string()
    } else {
        crate::sql::quote::ident(role)
    }
}

fn pct(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// The header lines about the window, what was hidden and what was left out.
pub fn header(c: &Capture, out: &mut String) {
    if let Some(w) = &c.window {
        if w.differenced {
            let _ = writeln!(
                out,
                "-- window: {} .. {} ({:.1} s): each statement's figures are the difference of two reads of pg_stat_statements around the sample, not its history since the last reset",
                w.start, w.end, w.seconds
            );
            let hit = w
                .load
                .cache_hit
                .map_or("none read".to_string(), |h| format!("{:.2} %", h * 100.0));
            let _ = writeln!(
                out,
                "-- load: {:.1} calls/s, {:.1} transactions/s, {} sessions, cache hit {hit}, {:.0} temp bytes",
                w.load.calls_per_s, w.load.xacts_per_s, w.load.sessions, w.load.temp_bytes
            );
        } else {
            let _ = writeln!(
                out,
                "-- window: none: each statement's figures are its totals since pg_stat_statements was last reset ({}), up to {} (--since-reset, or --sample 0)",
                w.stats_reset
                    .as_deref()
                    .unwrap_or("reset time unknown before PostgreSQL 14"),
                w.end
            );
        }
        let _ = writeln!(
            out,
            "-- window's cost on the source: {} queries in {:.1} ms (reads of pg_stat_statements, pg_stat_database, pg_settings; the sample apart)",
            c.window_queries,
            c.window_seconds * 1000.0
        );
        if let Some(n) = w.evicted.filter(|n| *n > 0) {
            let _ = writeln!(
                out,
                "-- evicted: pg_stat_statements dropped {n} entries (pg_stat_statements.max) in this time: a statement evicted and seen again counts from its return"
            );
        }
        for s in &w.settings {
            let pending = if s.pending_restart {
                " (pending restart)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "-- setting: {} = {} (boot value {}){pending}",
                s.name, s.value, s.boot
            );
        }
    }
    hidden_and_left_out(c, out);
}

fn hidden_and_left_out(c: &Capture, out: &mut String) {
    if c.hidden > 0 {
        let _ = writeln!(
            out,
            "-- hidden: {} statements of other roles read <insufficient privilege> for role {} ({} of the statement time): not captured; GRANT pg_read_all_stats TO {} shows them",
            c.hidden,
            c.role,
            pct(c.hidden_share),
            crate::capture::file_window::role_name(&c.role)
        );
    }
    if c.went_back > 0 {
        let _ = writeln!(
            out,
            "-- reset: {} statements' counters went back inside the window (reset or evicted): left out",
            c.went_back
        );
    }
    if c.own.count > 0 {
        let _ = writeln!(
            out,
            "-- not captured: {} of pglab's own statements (marked /* pglab … */, whatever session ran them), {:.1} ms, not in the statement time",
            c.own.count, c.own.ms
        );
    }
    if c.monitoring.count > 0 {
        let _ = writeln!(
            out,
            "-- not captured: {} administration and monitoring calls (catalog and statistics reads, pg_* functions: {}), {:.1} ms, not in the statement time",
            c.monitoring.count,
            c.monitoring.examples.join("; "),
            c.monitoring.ms
        );
    }
}

/// The lines `verify` reads, at the end of the file.
pub fn trailer(c: &Capture, out: &mut String) {
    let Some(w) = &c.window else { return };
    let carried = Carried {
        database: c.database.clone(),
        server_version: c.server_version.clone(),
        role: c.role.clone(),
        window: w.clone(),
        hidden: c.hidden,
        hidden_share: c.hidden_share,
        statements: Vec::new(),
    };
    let _ = writeln!(
        out,
        "\n-- every application statement of the window, for pglab verify (one JSON object a line):"
    );
    let _ = writeln!(
        out,
        "{WINDOW_TAG}{}",
        serde_json::to_string(&carried).unwrap_or_default()
    );
    for b in &c.all {
        let name = super::shape::of(&b.query)
            .map_or_else(|| format!("statement_{}", b.query_id), |s| s.name);
        let s = WindowStatement {
            name,
            figures: b.clone(),
        };
        let _ = writeln!(
            out,
            "{STATEMENT_TAG}{}",
            serde_json::to_string(&s).unwrap_or_default()
        );
    }
}

/// Why a file gives no window.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    #[error(
        "it carries no window: capture it again with this pglab (pglab capture --db … --sample 60s --out FILE)"
    )]
    NoWindow,
    #[error("line {line}: {why}")]
    Bad { line: usize, why: String },
}

/// The window a captured file carries.
pub fn parse(text: &str) -> Result<Carried, ReadError> {
    let mut carried: Option<Carried> = None;
    let mut statements = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |e: serde_json::Error| ReadError::Bad {
            line: i + 1,
            why: e.to_string(),
        };
        if let Some(j) = line.strip_prefix(WINDOW_TAG) {
            carried = Some(serde_json::from_str(j).map_err(bad)?);
        } else if let Some(j) = line.strip_prefix(STATEMENT_TAG) {
            statements.push(serde_json::from_str(j).map_err(bad)?);
        }
    }
    let mut c = carried.ok_or(ReadError::NoWindow)?;
    c.statements = statements;
    Ok(c)
}
