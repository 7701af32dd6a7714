//! A captured workload's replay leaves out what it cannot run. Before the first trial each
//! statement of a file `pglab capture` wrote is checked where it will run (the server parses
//! it with its value sets; on pglab's sandbox it also runs once in a transaction that is
//! rolled back): one the server refuses — a function or table that is not there, a missing
//! extension, a privilege — is left out with a sentence naming it, its SQLSTATE and the
//! server's message, and the coverage left is said (the share of the captured statement time
//! the replay still covers). A statement failing mid-trial is not how this is found. What the
//! replay must not hide still stops it: a lost connection or a server in trouble (classes 08,
//! 53, 57, 58, XX), and a workload none of whose statements can run.

use serde::{Deserialize, Serialize};
use thiserror::Error;
use tokio_postgres::Client;

use super::guard;
use super::session::user_search_path;
use super::spec::QuerySpec;
use super::sqltext::Statement;
use crate::server::error::{describe_query_error, sqlstate};

/// One statement the replay left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Its name (`-- name:` in the captured file, else its first line).
    pub name: String,
    /// Its line in the file.
    pub line: usize,
    pub sqlstate: String,
    /// The server's message.
    pub message: String,
    /// Its captured time (production calls × mean, in ms; None without pg_stat_statements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured_ms: Option<f64>,
}

impl Skipped {
    /// "left out of the replay: orders_by_day (line 12) cannot run here (SQLSTATE 42883:
    /// function pg_stat_statements_reset() does not exist)".
    pub(crate) fn sentence(&self) -> String {
        format!(
            "left out of the replay: {} (line {}) cannot run here (SQLSTATE {}: {})",
            self.name, self.line, self.sqlstate, self.message
        )
    }
}

/// What a replay covers after what it left out, kept in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayCoverage {
    pub skipped: Vec<Skipped>,
    /// Statements replayed, of those captured.
    pub kept: usize,
    pub captured: usize,
    /// The share of the captured statement time (calls × mean on production) the replay
    /// covers, 0–1; by weight (executions seen) when the file has no production timings.
    pub time_share: f64,
    /// True: `time_share` is of production's statement time; false: of the weights.
    pub of_time: bool,
}

impl ReplayCoverage {
    /// "the replay covers 4 of 5 captured statements, 91.2 % of the captured statement time".
    pub(crate) fn sentence(&self) -> String {
        format!(
            "the replay covers {} of {} captured statements, {:.1} % of the captured {}",
            self.kept,
            self.captured,
            self.time_share * 100.0,
            if self.of_time {
                "statement time"
            } else {
                "executions (the file has no production timings)"
            }
        )
    }

    /// Every sentence the run says: one per statement left out, then the coverage.
    pub(crate) fn sentences(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(Skipped::sentence)
            .chain(std::iter::once(self.sentence()))
            .collect()
    }
}

/// Why a replay does not start.
#[derive(Debug, Clone, PartialEq, Error)]
pub(crate) enum ReplayError {
    /// The server could not be asked, or is in trouble: not something to leave out.
    #[error(
        "{name} (line {line}): {why}; the replay stops rather than leave statements out for it"
    )]
    Server {
        name: String,
        line: usize,
        why: String,
    },
    /// Nothing of the workload can run here.
    #[error("none of the {} captured statements can run here: {}", .0.len(), .0.iter().map(Skipped::sentence).collect::<Vec<_>>().join("; "))]
    Nothing(Vec<Skipped>),
}

/// Whether `spec` replays a captured workload: statements (not a script) of which at least
/// one carries what `pglab capture` writes before it (production's timings or value sets).
pub(crate) fn is_replay(spec: &QuerySpec) -> bool {
    spec.script.is_none()
        && spec
            .statements
            .iter()
            .any(|s| s.production_mean_ns.is_some() || !s.variants.is_empty())
}

/// SQLSTATE classes a replay never hides: the connection, resources, the operator, the
/// system, internal errors.
fn must_stop(code: &str) -> bool {
    matches!(&code[..2.min(code.len())], "08" | "53" | "57" | "58" | "XX")
}

/// A statement's captured weight in time (calls × mean) and in calls.
fn captured_ms(s: &Statement) -> Option<f64> {
    s.production_mean_ns
        .map(|ns| s.weight.unwrap_or(1) as f64 * ns as f64 / 1e6)
}

/// The coverage of `spec`'s statements once those at `skipped` (indexes) are left out.
pub(crate) fn coverage(spec: &QuerySpec, skipped: Vec<(usize, Skipped)>) -> ReplayCoverage {
    let of_time = spec
        .statements
        .iter()
        .all(|s| s.production_mean_ns.is_some());
    let weight = |s: &Statement| match of_time {
        true => captured_ms(s).unwrap_or(0.0),
        false => s.weight.unwrap_or(1) as f64,
    };
    let total: f64 = spec.statements.iter().map(weight).sum();
    let left: f64 = skipped
        .iter()
        .map(|(i, _)| weight(&spec.statements[*i]))
        .sum();
    ReplayCoverage {
        kept: spec.statements.len() - skipped.len(),
        captured: spec.statements.len(),
        time_share: if total > 0.0 {
            (total - left) / total
        } else {
            0.0
        },
        of_time,
        skipped: skipped.into_iter().map(|(_, s)| s).collect(),
    }
}

/// The texts of statement `s` the server is asked about: its own and its value sets.
fn texts(s: &Statement) -> impl Iterator<Item = &String> {
    std::iter::once(&s.sql).chain(&s.variants)
}

/// Why the server will not run `s` (None: it will, or its error may be the setup's to
/// resolve), or the error that must stop the replay.
async fn check_one(
    client: &Client,
    s: &Statement,
    run_once: bool,
    pending_setup: bool,
) -> Result<Option<Skipped>, ReplayError> {
    let judge = |e: tokio_postgres::Error| -> Result<Option<Skipped>, ReplayError> {
        let code = sqlstate(&e).map(str::to_string);
        match code {
            Some(c) if !must_stop(&c) => {
                if pending_setup && guard::may_depend_on_setup(&e) {
                    return Ok(None);
                }
                let message = e
                    .as_db_error()
                    .map(|d| d.message().to_string())
                    .unwrap_or_else(|| describe_query_error(&e));
                Ok(Some(Skipped {
                    name: s.name.clone(),
                    line: s.line,
                    sqlstate: c,
                    message,
                    captured_ms: captured_ms(s),
                }))
            }
            _ => Err(ReplayError::Server {
                name: s.name.clone(),
                line: s.line,
                why: describe_query_error(&e),
            }),
        }
    };
    for sql in texts(s) {
        if let Err(e) = client.prepare(sql).await {
            return judge(e);
        }
    }
    if !run_once {
        return Ok(None);
    }
    // Once, in a transaction that is rolled back whatever it did: a privilege or a value the
    // executor refuses shows here, not in a trial.
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| ReplayError::Server {
            name: s.name.clone(),
            line: s.line,
            why: describe_query_error(&e),
        })?;
    let ran = client.simple_query(&s.sql).await;
    let _ = client.batch_execute("ROLLBACK").await;
    match ran {
        Ok(_) => Ok(None),
        Err(e) => judge(e),
    }
}

/// Check each statement of a captured workload on `client` (a session of the target, given
/// the DBA's search path here): Ok(None) when `spec` is no replay or everything runs, else
/// the coverage left. `on_sandbox`: each statement also runs once, rolled back.
pub(crate) async fn check(
    client: &Client,
    spec: &QuerySpec,
    schema: &str,
    on_sandbox: bool,
) -> Result<Option<ReplayCoverage>, ReplayError> {
    if !is_replay(spec) {
        return Ok(None);
    }
    let server = |e: tokio_postgres::Error| ReplayError::Server {
        name: "the replay's check".into(),
        line: 0,
        why: describe_query_error(&e),
    };
    client
        .batch_execute(&format!("SET search_path = {}", user_search_path(schema)))
        .await
        .map_err(server)?;
    let pending_setup = !spec.setup_sql.trim().is_empty();
    let run_once = on_sandbox && !pending_setup;
    let mut skipped = Vec::new();
    for (i, s) in spec.statements.iter().enumerate() {
        if let Some(why) = check_one(client, s, run_once, pending_setup).await? {
            skipped.push((i, why));
        }
    }
    client
        .batch_execute("RESET search_path")
        .await
        .map_err(server)?;
    if skipped.is_empty() {
        return Ok(None);
    }
    if skipped.len() == spec.statements.len() {
        return Err(ReplayError::Nothing(
            skipped.into_iter().map(|(_, s)| s).collect(),
        ));
    }
    Ok(Some(coverage(spec, skipped)))
}

/// `spec` without the statements `coverage` left out.
pub(crate) fn without(spec: &QuerySpec, coverage: &ReplayCoverage) -> QuerySpec {
    let mut out = spec.clone();
    out.statements.retain(|s| {
        !coverage
            .skipped
            .iter()
            .any(|k| k.line == s.line && k.name == s.name)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(name: &str, line: usize, calls: u64, mean_ms: Option<f64>) -> Statement {
        Statement {
            name: name.into(),
            sql: format!("SELECT {line}"),
            line,
            weight: Some(calls),
            production_mean_ns: mean_ms.map(|m| (m * 1e6) as u64),
            variants: Vec::new(),
            captured: None,
        }
    }

    fn skipped(name: &str, line: usize) -> Skipped {
        Skipped {
            name: name.into(),
            line,
            sqlstate: "42883".into(),
            message: "function pg_stat_statements_reset() does not exist".into(),
            captured_ms: None,
        }
    }

    #[test]
    fn the_coverage_is_the_share_of_captured_time_left() {
        let mut spec = crate::experiment::query::test_spec(&[("sql", "SELECT 1")]);
        spec.statements = vec![
            statement("a", 3, 100, Some(1.0)),
            statement("b", 7, 10, Some(2.0)),
            statement("reset", 11, 5, Some(4.0)),
        ];
        assert!(is_replay(&spec));
        let c = coverage(&spec, vec![(2, skipped("reset", 11))]);
        assert_eq!((c.kept, c.captured), (2, 3));
        assert!((c.time_share - 120.0 / 140.0).abs() < 1e-9, "{c:?}");
        assert_eq!(
            c.sentence(),
            "the replay covers 2 of 3 captured statements, 85.7 % of the captured statement time"
        );
        assert_eq!(
            c.skipped[0].sentence(),
            "left out of the replay: reset (line 11) cannot run here (SQLSTATE 42883: function pg_stat_statements_reset() does not exist)"
        );
        let kept = without(&spec, &c);
        let names: Vec<&str> = kept.statements.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn without_production_timings_the_weights_are_the_coverage() {
        let mut spec = crate::experiment::query::test_spec(&[("sql", "SELECT 1")]);
        spec.statements = vec![statement("a", 1, 3, None), statement("b", 2, 1, None)];
        spec.statements[0].variants = vec!["SELECT 2".into()];
        assert!(is_replay(&spec));
        let c = coverage(&spec, vec![(1, skipped("b", 2))]);
        assert!((c.time_share - 0.75).abs() < 1e-9);
        assert!(
            c.sentence().ends_with(
                "75.0 % of the captured executions (the file has no production timings)"
            )
        );
    }

    #[test]
    fn a_hand_written_file_is_no_replay_and_trouble_is_never_left_out() {
        let mut spec = crate::experiment::query::test_spec(&[("sql", "SELECT 1")]);
        spec.statements = vec![statement("a", 1, 1, None)];
        assert!(!is_replay(&spec));
        for code in ["08006", "53100", "57P01", "57014", "58030", "XX000"] {
            assert!(must_stop(code), "{code}");
        }
        for code in ["42883", "42P01", "42501", "22012", "0A000", "25006"] {
            assert!(!must_stop(code), "{code}");
        }
    }
}
