//! Finding runs in the history: by id, unique prefix or `last`, and by filters.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::experiment::{ExperimentKind, RunReport};

/// Which runs to keep. Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryFilter {
    pub experiment: Option<ExperimentKind>,
    /// The preset the run started from (exact name).
    pub preset: Option<String>,
    /// A piece of the target description (`user@host:port/db`) or the server's location.
    pub target: Option<String>,
    /// Runs started at or after this moment.
    pub since: Option<DateTime<Utc>>,
    /// Runs of exactly this experiment and parameters.
    pub spec_key: Option<String>,
}

impl HistoryFilter {
    pub(crate) fn matches(&self, r: &RunReport) -> bool {
        self.experiment.is_none_or(|k| r.kind() == k)
            && self
                .preset
                .as_deref()
                .is_none_or(|p| r.preset.as_deref() == Some(p))
            && self.target.as_deref().is_none_or(|t| {
                r.target.contains(t) || r.server.as_ref().is_some_and(|s| s.location.contains(t))
            })
            && self.since.is_none_or(|s| r.started_at >= s)
            && self.spec_key.as_deref().is_none_or(|k| r.spec_key == k)
    }

    /// The matching runs, in history order.
    pub fn apply<'a>(&self, runs: &'a [RunReport]) -> Vec<&'a RunReport> {
        runs.iter().filter(|r| self.matches(r)).collect()
    }
}

/// Parse `--since`: a date (`2026-12-01`, midnight UTC), a date and time (`2026-12-01T10:00`,
/// UTC, or RFC 3339 with an offset), or an age before `now` (`90min`, `12h`, `7d`, `2w`).
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(Utc.from_utc_datetime(&t));
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Ok(Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default()));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    let bad = || {
        format!("'{s}' is not a date or an age: write e.g. 2026-12-01, 2026-12-01T10:00, 12h or 7d")
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "s" => n,
        "min" | "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        "w" => n * 7.0 * 86400.0,
        _ => return Err(bad()),
    };
    let age = chrono::Duration::try_milliseconds((secs * 1000.0) as i64).ok_or_else(bad)?;
    now.checked_sub_signed(age).ok_or_else(bad)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    #[error("the history is empty: run an experiment first (pglab run …)")]
    Empty,
    #[error("no run '{query}' in the history (see pglab history list)")]
    NotFound { query: String },
    #[error("'{query}' matches {} runs ({}): give more of the id", candidates.len(), candidates.iter().take(5).cloned().collect::<Vec<_>>().join(", "))]
    Ambiguous {
        query: String,
        candidates: Vec<String>,
    },
}

/// A run by id, unique id prefix, `last` (the newest) or `last~N` (N before the newest).
pub fn find<'a>(runs: &'a [RunReport], query: &str) -> Result<&'a RunReport, FindError> {
    let q = query.trim();
    if runs.is_empty() {
        return Err(FindError::Empty);
    }
    let not_found = || FindError::NotFound {
        query: q.to_string(),
    };
    if q == "last" {
        return runs.last().ok_or(FindError::Empty);
    }
    if let Some(n) = q.strip_prefix("last~") {
        let n: usize = n.parse().map_err(|_| not_found())?;
        return runs
            .len()
            .checked_sub(n + 1)
            .map(|i| &runs[i])
            .ok_or_else(not_found);
    }
    if q.is_empty() {
        return Err(not_found());
    }
    // The same id can appear twice only if a file was concatenated; the last record wins.
    if let Some(r) = runs.iter().rev().find(|r| r.run_id == q) {
        return Ok(r);
    }
    let matches: Vec<&RunReport> = runs.iter().filter(|r| r.run_id.starts_with(q)).collect();
    match matches.as_slice() {
        [] => Err(not_found()),
        [one] => Ok(one),
        many => Err(FindError::Ambiguous {
            query: q.to_string(),
            candidates: many.iter().map(|r| r.run_id.clone()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_and_ages() {
        let now = Utc.with_ymd_and_hms(2026, 12, 10, 12, 0, 0).unwrap();
        assert_eq!(
            parse_since("2026-12-01", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
        );
        assert_eq!(
            parse_since("2026-12-01T10:30", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 10, 30, 0).unwrap()
        );
        assert_eq!(
            parse_since("2026-12-01T10:30:00+01:00", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 9, 30, 0).unwrap()
        );
        assert_eq!(
            parse_since("7d", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 3, 12, 0, 0).unwrap()
        );
        assert_eq!(
            parse_since("12h", now).unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 10, 0, 0, 0).unwrap()
        );
        assert!(parse_since("yesterday", now).is_err());
        assert!(parse_since("7y", now).is_err());
    }
}
