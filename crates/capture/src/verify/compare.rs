//! Two windows compared, statement by statement: the decision object every format reads.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::capture::file_window::{Carried, WindowStatement};
use crate::capture::window::Load;
use crate::measure::verdict::Verdict;
use crate::measure::welch_means::{self, Between, LogShift, MeansRatio, Summary};

/// How the windows are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The family-wise confidence across every statement compared (and the total).
    pub confidence: f64,
    /// The smallest effect worth naming (0.10: 10 %).
    pub min_effect: f64,
    /// Fewer calls than this in either window: listed apart, not compared.
    pub min_calls: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            confidence: 0.95,
            // Production's windows move together with the load by a few percent (see
            // docs/verify.md, the simulation): a smaller effect would name that shift.
            min_effect: 0.10,
            min_calls: 30.0,
        }
    }
}

/// Why two files cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error(
        "{0} holds each statement's totals since the last reset (--since-reset or --sample 0), not a window: capture a window with --sample 60s"
    )]
    NotAWindow(&'static str),
    #[error("the two windows are of different databases ({0} and {1}): not comparable")]
    Databases(String, String),
}

/// A figure per call in each window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerCall {
    pub before: f64,
    pub after: f64,
}

/// One statement compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    pub query: String,
    pub calls_before: f64,
    pub calls_after: f64,
    /// Its share of the compared statements' time in the first window.
    pub share: f64,
    pub mean_ms: PerCall,
    /// Time per call after over before, with its interval at `level`.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub verdict: String,
    pub rows: PerCall,
    pub shared_read: PerCall,
    pub temp: PerCall,
    /// What else moved with this statement; a flagged statement is not in the headline.
    pub flags: Vec<String>,
    /// The lab's predicted ratio (`--expect tune.sql`), where it records one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lab: Option<f64>,
}

/// A statement in one window only, or with too few calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Apart {
    pub name: String,
    pub query: String,
    pub calls_before: f64,
    pub calls_after: f64,
}

/// A setting whose value differs between the windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingChange {
    pub name: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub pending_restart: bool,
}

/// One window's facts, as the files carry them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowFacts {
    pub start: String,
    pub end: String,
    pub seconds: f64,
    pub load: Load,
    pub role: String,
    pub hidden: usize,
    pub hidden_share: f64,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    pub database: String,
    pub before: WindowFacts,
    pub after: WindowFacts,
    pub settings: Vec<SettingChange>,
    /// What moved between the windows besides the change (load, cache, hidden statements).
    pub notes: Vec<String>,
    /// The level each interval is held to (family-wise across `compared` + the total).
    pub level: f64,
    pub confidence: f64,
    pub min_effect: f64,
    pub rows: Vec<Row>,
    pub too_few: Vec<Apart>,
    pub new: Vec<Apart>,
    pub gone: Vec<Apart>,
    /// The time-weighted total over the statements counted (not flagged).
    pub total: Option<Total>,
    pub headline: String,
}

/// The total, weighted by each statement's time in the first window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Total {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub verdict: String,
    pub statements: usize,
}

/// The words for a verdict here: an undecided interval is "not shown different".
pub fn words(v: Verdict) -> &'static str {
    match v {
        Verdict::TooFewTrials => "not shown different",
        v => v.as_str(),
    }
}

fn facts(c: &Carried) -> WindowFacts {
    WindowFacts {
        start: c.window.start.clone(),
        end: c.window.end.clone(),
        seconds: c.window.seconds,
        load: c.window.load.clone(),
        role: c.role.clone(),
        hidden: c.hidden,
        hidden_share: c.hidden_share,
    }
}

/// Settings differing between the windows, by name.
fn setting_changes(a: &Carried, b: &Carried) -> Vec<SettingChange> {
    let by = |c: &Carried| -> BTreeMap<String, (String, bool)> {
        c.window
            .settings
            .iter()
            .map(|s| (s.name.clone(), (s.value.clone(), s.pending_restart)))
            .collect()
    };
    let (x, y) = (by(a), by(b));
    let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| x.get(*n) != y.get(*n))
        .map(|n| SettingChange {
            name: n.clone(),
            before: x.get(n).map(|v| v.0.clone()),
            after: y.get(n).map(|v| v.0.clone()),
            pending_restart: y.get(n).is_some_and(|v| v.1),
        })
        .collect()
}

fn ratio_of(after: f64, before: f64) -> Option<f64> {
    (before > 0.0 && after > 0.0).then(|| after / before)
}

/// What moved in the whole server between the windows.
fn notes(a: &WindowFacts, b: &WindowFacts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) =
        ratio_of(b.load.calls_per_s, a.load.calls_per_s).filter(|r| !(0.8..=1.25).contains(r))
    {
        out.push(format!(
            "calls per second ×{r:.2} ({:.1} → {:.1}): the load moved between the windows",
            a.load.calls_per_s, b.load.calls_per_s
        ));
    }
    if let (Some(x), Some(y)) = (a.load.cache_hit, b.load.cache_hit)
        && (x - y).abs() >= 0.01
    {
        out.push(format!(
            "cache hit {:.1} % → {:.1} %: the cache moved between the windows",
            x * 100.0,
            y * 100.0
        ));
    }
    for (w, f) in [("first", a), ("second", b)] {
        if f.hidden > 0 {
            out.push(format!(
                "the {w} window hides {} statements of other roles from role {} ({:.1} % of its time): not compared; GRANT pg_read_all_stats TO {} shows them",
                f.hidden,
                f.role,
                f.hidden_share * 100.0,
                crate::capture::file_window::role_name(&f.role)
            ));
        }
    }
    out
}

pub(super) fn summary(s: &WindowStatement) -> Summary {
    Summary {
        n: s.figures.calls,
        mean: s.figures.mean_ms,
        sd: s.figures.stddev_ms,
    }
}

fn per(v: f64, calls: f64) -> f64 {
    if calls > 0.0 { v / calls } else { 0.0 }
}

/// What else moved with a statement.
fn flags(a: &WindowStatement, b: &WindowStatement) -> Vec<String> {
    let mut out = Vec::new();
    let (ra, rb) = (
        per(a.figures.rows, a.figures.calls),
        per(b.figures.rows, b.figures.calls),
    );
    let moved = match ratio_of(rb, ra) {
        Some(r) => !(1.0 / 3.0..=3.0).contains(&r),
        None => (ra > 0.0) != (rb > 0.0),
    };
    if moved {
        out.push(format!(
            "rows per call {ra:.2} → {rb:.2}: the data or the values moved, not only the change"
        ));
    }
    if a.figures.query_id != b.figures.query_id {
        out.push(
            "its query id changed (the objects it names were made again, or search_path moved)"
                .into(),
        );
    }
    out
}

fn apart(a: Option<&WindowStatement>, b: Option<&WindowStatement>) -> Apart {
    let s = a.or(b).expect("one side");
    Apart {
        name: s.name.clone(),
        query: s.figures.query.clone(),
        calls_before: a.map_or(0.0, |x| x.figures.calls),
        calls_after: b.map_or(0.0, |x| x.figures.calls),
    }
}

fn by_name(c: &Carried) -> BTreeMap<String, WindowStatement> {
    c.statements
        .iter()
        .map(|s| (s.name.clone(), s.clone()))
        .collect()
}

/// The statements of two windows, matched by name.
struct Matched<'a> {
    pairs: Vec<(&'a WindowStatement, &'a WindowStatement)>,
    too_few: Vec<Apart>,
    new: Vec<Apart>,
    gone: Vec<Apart>,
}

fn matched<'a>(
    x: &'a BTreeMap<String, WindowStatement>,
    y: &'a BTreeMap<String, WindowStatement>,
    min_calls: f64,
) -> Matched<'a> {
    let mut m = Matched {
        pairs: Vec::new(),
        too_few: Vec::new(),
        new: Vec::new(),
        gone: Vec::new(),
    };
    for (name, a) in x {
        match y.get(name) {
            None => m.gone.push(apart(Some(a), None)),
            Some(b) if a.figures.calls < min_calls || b.figures.calls < min_calls => {
                m.too_few.push(apart(Some(a), Some(b)))
            }
            Some(b) => m.pairs.push((a, b)),
        }
    }
    for (name, b) in y {
        if !x.contains_key(name) {
            m.new.push(apart(None, Some(b)));
        }
    }
    m
}

/// Compare the second window with the first.
pub fn verify(
    before: &Carried,
    after: &Carried,
    opts: Options,
    lab: &BTreeMap<String, f64>,
) -> Result<Verification, VerifyError> {
    if !before.window.differenced {
        return Err(VerifyError::NotAWindow("the first file"));
    }
    if !after.window.differenced {
        return Err(VerifyError::NotAWindow("the second file"));
    }
    if before.database != after.database {
        return Err(VerifyError::Databases(
            before.database.clone(),
            after.database.clone(),
        ));
    }
    let (x, y) = (by_name(before), by_name(after));
    let Matched {
        pairs,
        too_few,
        new,
        gone,
    } = matched(&x, &y, opts.min_calls);
    let family = pairs.len() + 1;
    let level = 1.0 - (1.0 - opts.confidence) / family as f64;
    let compared_ms: f64 = pairs.iter().map(|(a, _)| a.figures.total_ms).sum();
    let extra = super::between::between_windows(&pairs);
    let mut rows: Vec<Row> = pairs
        .iter()
        .zip(&extra)
        .filter_map(|((a, b), e)| row(a, b, *e, level, opts, compared_ms, lab))
        .collect();
    rows.sort_by(|p, q| q.share.total_cmp(&p.share).then(p.name.cmp(&q.name)));
    let counted: Vec<&(&WindowStatement, &WindowStatement)> = pairs
        .iter()
        .filter(|(a, b)| flags(a, b).is_empty())
        .collect();
    // The total's: the mean of the statements' (each learned from all but one).
    let shift = if extra.is_empty() {
        Between::NONE
    } else {
        Between {
            var: extra.iter().map(|e| e.var).sum::<f64>() / extra.len() as f64,
            df: extra.iter().map(|e| e.df).fold(f64::INFINITY, f64::min),
        }
    };
    let total = weighted_total(&counted, shift, level, opts.min_effect);
    let (bf, af) = (facts(before), facts(after));
    let mut v = Verification {
        database: before.database.clone(),
        notes: notes(&bf, &af),
        before: bf,
        after: af,
        settings: setting_changes(before, after),
        level,
        confidence: opts.confidence,
        min_effect: opts.min_effect,
        rows,
        too_few,
        new,
        gone,
        total,
        headline: String::new(),
    };
    v.headline = super::render::headline(&v);
    Ok(v)
}

fn row(
    a: &WindowStatement,
    b: &WindowStatement,
    extra: Between,
    level: f64,
    opts: Options,
    compared_ms: f64,
    lab: &BTreeMap<String, f64>,
) -> Option<Row> {
    let r: MeansRatio =
        welch_means::compare_widened(summary(b), summary(a), extra, level, opts.min_effect)?;
    let (fa, fb) = (&a.figures, &b.figures);
    let pc = |x: f64, y: f64| PerCall {
        before: per(x, fa.calls),
        after: per(y, fb.calls),
    };
    Some(Row {
        name: a.name.clone(),
        query: fb.query.clone(),
        calls_before: fa.calls,
        calls_after: fb.calls,
        share: if compared_ms > 0.0 {
            fa.total_ms / compared_ms
        } else {
            0.0
        },
        mean_ms: PerCall {
            before: fa.mean_ms,
            after: fb.mean_ms,
        },
        ratio: r.ratio,
        low: r.low,
        high: r.high,
        verdict: words(r.verdict).into(),
        rows: pc(fa.rows, fb.rows),
        shared_read: pc(fa.shared_read, fb.shared_read),
        temp: pc(fa.temp, fb.temp),
        flags: flags(a, b),
        lab: lab.get(&a.name).copied(),
    })
}

/// The first window's mix at the second window's times over its own:
/// `Σ calls_b·mean_a / Σ calls_b·mean_b`, its interval by the delta method, widened by how
/// far the statements moved between the windows (`extra`, see
/// [`super::between::between_windows`]).
fn weighted_total(
    counted: &[&(&WindowStatement, &WindowStatement)],
    extra: Between,
    level: f64,
    min_effect: f64,
) -> Option<Total> {
    let (mut num, mut den, mut vnum, mut vden, mut n_min) = (0.0, 0.0, 0.0, 0.0, f64::INFINITY);
    for (a, b) in counted {
        let (fa, fb) = (&a.figures, &b.figures);
        let w = fa.calls;
        num += w * fb.mean_ms;
        den += w * fa.mean_ms;
        vnum += w * w * fb.stddev_ms.powi(2) / fb.calls;
        vden += w * w * fa.stddev_ms.powi(2) / fa.calls;
        n_min = n_min.min(fa.calls.min(fb.calls));
    }
    if counted.is_empty() || num <= 0.0 || den <= 0.0 {
        return None;
    }
    let r = welch_means::from_log_shift(
        LogShift {
            point: num.ln() - den.ln(),
            se2: vnum / (num * num) + vden / (den * den) + extra.var.max(0.0),
            // At most the statements' degrees of freedom, as each statement's (see
            // `welch_means::compare_widened`).
            df: (n_min - 1.0).min(extra.df).max(1.0),
            n: n_min,
            m: n_min,
        },
        level,
        min_effect,
    );
    Some(Total {
        ratio: r.ratio,
        low: r.low,
        high: r.high,
        verdict: words(r.verdict).into(),
        statements: counted.len(),
    })
}
