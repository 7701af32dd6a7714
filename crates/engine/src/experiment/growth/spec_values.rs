//! The growth spec's field values read from their text: each parser returns the value or
//! the sentence `FieldReader` records for its field.

use super::kinds::{Design, IndexKind};
use super::spec::MAX_PAIRS;
use crate::experiment::lab::field::FieldReader;
use crate::measure::units::{format_count, parse_count, parse_count_list};

/// A count, or none for an empty value, `none` or `off`.
pub(super) fn optional_count(s: &str) -> Result<Option<u64>, String> {
    match s {
        "" | "none" | "off" => Ok(None),
        _ => parse_count(s).map(Some).map_err(|e| e.0),
    }
}

/// `N` versions or `rows:N`: the version count (rows rounded up to whole versions).
pub(super) fn versions_of(s: &str, units: u64) -> Result<(Vec<u64>, bool), String> {
    let (list, as_rows) = match s.strip_prefix("rows:") {
        Some(rest) => (rest, true),
        None => (s, false),
    };
    let values = parse_count_list(list).map_err(|e| e.0)?;
    let versions = if as_rows {
        values.iter().map(|r| r.div_ceil(units.max(1))).collect()
    } else {
        values
    };
    Ok((versions, as_rows))
}

/// `steps`: increasing version counts (or rows), the last within [`MAX_PAIRS`].
pub(super) fn steps_of(s: &str, units: u64) -> Result<(Vec<u64>, bool), String> {
    let (v, rows) = versions_of(s, units)?;
    if v.windows(2).any(|w| w[0] >= w[1]) {
        return Err("steps must increase: e.g. 0,100,1000,10000".into());
    }
    if let Some(last) = v.last()
        && last.saturating_mul(units) > MAX_PAIRS
    {
        return Err(format!(
            "the last step is {} rows; at most {} are supported",
            format_count(last.saturating_mul(units) as f64),
            format_count(MAX_PAIRS as f64)
        ));
    }
    Ok((v, rows))
}

/// `indexes`: the secondary indexes, each once and in order; none for `none` or empty.
pub(super) fn indexes_of(s: &str) -> Result<Vec<IndexKind>, String> {
    let mut v = Vec::new();
    if s.is_empty() || s == "none" {
        return Ok(v);
    }
    for item in s.split(',').map(str::trim) {
        let k = match item {
            "pk" => IndexKind::Pk,
            "version" => IndexKind::Version,
            "content" => IndexKind::Content,
            "version_content" | "version,content" => IndexKind::VersionContent,
            other => {
                return Err(format!(
                    "unknown index '{other}': use pk, version, content, version_content or none"
                ));
            }
        };
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v.sort();
    Ok(v)
}

/// `design`: the storage designs, each once and in order.
pub(super) fn designs_of(s: &str) -> Result<Vec<Design>, String> {
    let mut v = Vec::new();
    for item in s.split(',').map(str::trim) {
        let d = match item {
            "snapshot" => Design::Snapshot,
            "ranges" => Design::Ranges,
            other => {
                return Err(format!(
                    "unknown design '{other}': use snapshot, ranges or both (snapshot,ranges)"
                ));
            }
        };
        if !v.contains(&d) {
            v.push(d);
        }
    }
    v.sort();
    Ok(v)
}

/// `churn`: a percentage, `1%` or `0.5`.
pub(super) fn churn_of(s: &str) -> Result<f64, String> {
    let n = s.trim_end_matches('%').trim();
    let v: f64 = n
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage: write e.g. 1% or 0.5"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err("churn must be 0..100%".into());
    }
    Ok(v)
}

/// `distribute`: the columns to shard by (None: not distributed), each once.
pub(super) fn distribute_of(s: &str) -> Result<Vec<Option<&'static str>>, String> {
    let mut v: Vec<Option<&'static str>> = Vec::new();
    for item in s.split(',').map(str::trim) {
        let d = match item {
            "none" | "" => None,
            "version" => Some("version"),
            "content" => Some("content"),
            other => {
                return Err(format!(
                    "unknown distribution '{other}': use none, version, content or a list of them"
                ));
            }
        };
        if !v.contains(&d) {
            v.push(d);
        }
    }
    Ok(v)
}

/// Each design at each distribution is a series of its own; a design without the column
/// asked for is an error on `distribute`.
pub(super) fn series_of(
    r: &mut FieldReader<'_>,
    designs: &[Design],
    distribute: &[Option<&'static str>],
) -> Vec<Design> {
    let mut series = Vec::new();
    for d in designs {
        for col in distribute {
            match d.distributed(*col) {
                Some(x) => series.push(x),
                None => r.errors.push((
                    "distribute".into(),
                    format!(
                        "the {} design has no {} column to shard by (a row spans the versions version_added..version_removed): distribute it as none, or leave ranges out of the design list",
                        d.as_str(),
                        col.unwrap_or("none")
                    ),
                )),
            }
        }
    }
    series.sort();
    series.dedup();
    series
}
