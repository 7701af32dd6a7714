//! A comparison of two runs as a text table, Markdown, CSV (a row per setting) or JSON (the
//! comparison as is, see `assets/schema/comparison.schema.json`): which runs and rules first,
//! then what differs around them, then each setting side by side, then the verdict line.

use super::Format;
use super::grid::Grid;
use crate::history::compare::{Comparison, Difference, Role, RunRef, SettingComparison, Side};
use crate::measure::interval::Estimate;
use crate::measure::units::{format_count, format_seconds};
use crate::measure::verdict::Verdict;

/// A measured value in the metric's own terms: `4.20 ms`, `812 ms`, `11.6 s`, `12.3k`.
fn value(v: f64, metric: &str) -> String {
    if metric.ends_with("seconds") {
        if v < 0.01 {
            format!("{:.2} ms", v * 1000.0)
        } else {
            format_seconds(v)
        }
    } else {
        format_count(v.round())
    }
}

/// `11.6 s ±1%`, `11.6 s ±11% (87.5%)` when the interval falls short of `confidence`, `–`
/// when not run.
fn estimate(e: Option<&Estimate>, metric: &str, confidence: f64) -> (String, String) {
    match e {
        Some(e) => {
            let pm = e.plus_minus();
            let text = if pm.is_empty() || e.n < 2 {
                value(e.median, metric)
            } else if e.reaches(confidence) {
                format!("{} {pm}", value(e.median, metric))
            } else {
                format!(
                    "{} {pm} ({})",
                    value(e.median, metric),
                    crate::measure::wording::format_level(e.level)
                )
            };
            (text, e.n.to_string())
        }
        None => ("–".into(), String::new()),
    }
}

fn verdict_cell(s: &SettingComparison) -> String {
    match (s.verdict, s.only_in) {
        (Some(Verdict::TooFewTrials), _) => match s.trials_needed {
            Some(n) => format!("too few trials (about {n} a side)"),
            None => Verdict::TooFewTrials.to_string(),
        },
        (Some(v), _) => v.to_string(),
        (None, Some(Side::Baseline)) => "baseline only".into(),
        (None, _) => "candidate only".into(),
    }
}

fn differences_grid(title: &str, d: &[&Difference], with_role: bool) -> Grid {
    let mut head = vec![("", false), ("baseline", false), ("candidate", false)];
    if with_role {
        head.push(("role", false));
    }
    let mut g = Grid::new(title, &head);
    for x in d {
        let mut row = vec![
            x.name.clone(),
            x.baseline.clone().unwrap_or_else(|| "–".into()),
            x.candidate.clone().unwrap_or_else(|| "–".into()),
        ];
        if with_role {
            row.push(
                match x.role {
                    Role::Setting => "compared",
                    Role::Other => "does not bear on the measure",
                    Role::Condition => "condition",
                }
                .into(),
            );
        }
        g.rows.push(row);
    }
    g
}

/// One grid per metric, the settings in order.
fn results_grids(c: &Comparison) -> Vec<Grid> {
    let mut metrics: Vec<&str> = Vec::new();
    for s in &c.settings {
        if !metrics.contains(&s.metric.as_str()) {
            metrics.push(&s.metric);
        }
    }
    let level = crate::experiment::lab::decision::format_percent(c.rules.confidence);
    metrics
        .into_iter()
        .map(|m| {
            let mut g = Grid::new(
                &format!(
                    "{m}: medians ± their interval, ratio = candidate / baseline with its interval; intervals at {level} unless marked with the level they reach"
                ),
                // The verdict next to the setting, so a narrow screen cuts the evidence, not
                // the conclusion.
                &[
                    ("setting", false),
                    ("verdict", false),
                    ("ratio", true),
                    ("interval", true),
                    ("baseline", true),
                    ("n", true),
                    ("candidate", true),
                    ("n", true),
                ],
            );
            for s in c.settings.iter().filter(|s| s.metric == m) {
                let (b, bn) = estimate(s.baseline.as_ref(), m, c.rules.confidence);
                let (k, kn) = estimate(s.candidate.as_ref(), m, c.rules.confidence);
                let ratio = s.ratio.map(|r| format!("{r:.2}×")).unwrap_or_default();
                // One trial on a side gives no interval worth printing.
                let spread = |e: Option<&Estimate>| e.is_some_and(|e| e.n > 1);
                let interval = match (s.ratio_low, s.ratio_high) {
                    (Some(lo), Some(hi))
                        if spread(s.baseline.as_ref()) && spread(s.candidate.as_ref()) =>
                    {
                        match s.level {
                            Some(l) if l + 1e-9 < c.rules.confidence => format!(
                                "{lo:.2}–{hi:.2} ({})",
                                crate::measure::wording::format_level(l)
                            ),
                            _ => format!("{lo:.2}–{hi:.2}"),
                        }
                    }
                    _ => String::new(),
                };
                g.rows.push(vec![
                    s.setting.clone(),
                    verdict_cell(s),
                    ratio,
                    interval,
                    b,
                    bn,
                    k,
                    kn,
                ]);
            }
            g
        })
        .collect()
}

fn grids(c: &Comparison) -> Vec<Grid> {
    let mut out = Vec::new();
    let conditions: Vec<&Difference> = c
        .differences
        .iter()
        .filter(|d| d.role == Role::Condition)
        .collect();
    if !conditions.is_empty() {
        out.push(differences_grid(
            "Not comparable: conditions that differ between the runs",
            &conditions,
            false,
        ));
    }
    let others: Vec<&Difference> = c
        .differences
        .iter()
        .filter(|d| d.role != Role::Condition)
        .collect();
    if !others.is_empty() {
        out.push(differences_grid("Also different", &others, true));
    }
    out.extend(results_grids(c));
    out
}

fn run_line(label: &str, r: &RunRef) -> String {
    format!(
        "{label} {} ({}, {}{}) on {}",
        r.run_id,
        r.outcome.as_str(),
        r.started_at.format("%Y-%m-%d %H:%M UTC"),
        r.preset
            .as_ref()
            .map(|p| format!(", preset {p}"))
            .unwrap_or_default(),
        r.target
    )
}

fn rules_line(c: &Comparison) -> String {
    format!(
        "rules: {} confidence, {} smallest effect (from {})",
        crate::experiment::lab::decision::format_percent(c.rules.confidence),
        crate::experiment::lab::decision::format_percent(c.rules.min_effect),
        c.rules_from
    )
}

/// RFC 4180 quoting.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "baseline_run,candidate_run,setting,metric,better,\
         baseline_n,baseline_median,baseline_ci_low,baseline_ci_high,\
         candidate_n,candidate_median,candidate_ci_low,candidate_ci_high,\
         ratio,ratio_low,ratio_high,verdict,not_comparable\n",
    );
    let num = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let side = |e: Option<&Estimate>| {
        [
            e.map(|e| e.n.to_string()).unwrap_or_default(),
            num(e.map(|e| e.median)),
            num(e.map(|e| e.ci_low)),
            num(e.map(|e| e.ci_high)),
        ]
    };
    let why = c.not_comparable.join("; ");
    for s in &c.settings {
        let mut row = vec![
            c.baseline.run_id.clone(),
            c.candidate.run_id.clone(),
            s.setting.clone(),
            s.metric.clone(),
            serde_json::to_value(s.better)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        ];
        row.extend(side(s.baseline.as_ref()));
        row.extend(side(s.candidate.as_ref()));
        row.extend([num(s.ratio), num(s.ratio_low), num(s.ratio_high)]);
        row.push(s.verdict.map(|v| v.to_string()).unwrap_or_default());
        row.push(if s.verdict == Some(Verdict::NotComparable) {
            why.clone()
        } else {
            String::new()
        });
        let cells: Vec<String> = row.iter().map(|x| cell(x)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(c).unwrap_or_default() + "\n",
        Format::Csv => csv(c),
        Format::Md => {
            let mut out = format!("# {} comparison\n\n", c.experiment);
            out.push_str(&format!(
                "- {}\n- {}\n- {}\n\n**Verdict:** {}\n",
                run_line("baseline", &c.baseline),
                run_line("candidate", &c.candidate),
                rules_line(c),
                c.verdict
            ));
            if c.differences.is_empty() {
                out.push_str("\nSame parameters, server settings and host.\n");
            }
            for g in grids(c) {
                out.push_str(&format!(
                    "\n## {}\n\n{}",
                    g.title,
                    super::markdown::grid(&g)
                ));
            }
            if !c.notes.is_empty() {
                out.push_str("\n## Notes\n\n");
                for n in &c.notes {
                    out.push_str(&format!("- {n}\n"));
                }
            }
            out
        }
        Format::Table => {
            let mut out = format!(
                "{} comparison\n  {}\n  {}\n  {}\n",
                c.experiment,
                run_line("baseline ", &c.baseline),
                run_line("candidate", &c.candidate),
                rules_line(c)
            );
            if c.differences.is_empty() {
                out.push_str("  same parameters, server settings and host\n");
            }
            for g in grids(c) {
                out.push_str(&format!("\n{}\n{}", g.title, super::table::grid(&g)));
            }
            for n in &c.notes {
                out.push_str(&format!("\nnote: {n}"));
            }
            if !c.notes.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("\nverdict: {}\n", c.verdict));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three trials: a median's own interval reaches only 75% (not 95%) and says the level it
    /// reaches, the header says intervals are at the stated level unless marked, and with
    /// several settings the verdict says what chance alone gives. (The ratio's interval, Welch's
    /// t on the logarithms, is at the stated level at any count.)
    #[test]
    fn short_intervals_are_marked_with_their_level_and_chance_is_said() {
        let a = crate::report::example::cybertec_10m("a");
        let b = crate::report::example::cybertec_10m("b");
        let c = crate::history::compare::compare(&a, &b).expect("comparable");
        let text = render(&c, Format::Table);
        assert!(
            text.contains("intervals at 95% unless marked with the level they reach"),
            "{text}"
        );
        assert!(text.contains("(75%)"), "an n=3 interval is marked: {text}");
        assert!(text.contains("chance alone"), "{text}");
    }
}
