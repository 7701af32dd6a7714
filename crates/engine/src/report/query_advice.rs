//! The query run's recommendation, rendered thinly from the statistics core's finding: for
//! each statement (or client count), the combination the core recommends as the SQL that
//! applies it — `SET` for a session setting, `ALTER SYSTEM SET` for a reload or restart one,
//! the candidate's `CREATE INDEX` — only for what differs from the server's own settings; or
//! "keep the current settings". No line the core did not decide.

use super::recommend::Recommendation;
use crate::experiment::RunReport;
use crate::experiment::lab::whatif::Apply;
use crate::experiment::query::summary::{format_time, format_tps};
use crate::experiment::query::{QueryReport, UnitSummary};
use crate::measure::verdict::{Better, Verdict};
use crate::sql::settings::{alter_system_line, set_line};

/// The SQL that turns the server's own settings into combination `c`'s, for the dimensions
/// the core showed to matter (`matters`: positions in the sweep's coords — each swept setting
/// in `set` order, then the candidate index).
fn lines_for(report: &RunReport, b: &QueryReport, c: usize, matters: &[usize]) -> Vec<String> {
    let mut sql = Vec::new();
    let Some(info) = b.combos.get(c) else {
        return sql;
    };
    let names = b.params.set.names();
    let matters_name = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .is_none_or(|d| matters.contains(&d))
    };
    // The values as SHOW gave them in the combination's trials, against the run's start.
    let shown = b
        .trials
        .iter()
        .find(|t| t.combo == c)
        .map(|t| t.settings.clone())
        .unwrap_or_default();
    for (name, value) in &info.settings {
        if !matters_name(name) {
            continue;
        }
        let now = b.current_settings.get(name);
        if now.is_some() && shown.get(name) == now {
            continue;
        }
        let apply = report
            .whatif
            .as_ref()
            .and_then(|w| w.settings.iter().find(|s| &s.name == name))
            .map_or(Apply::Session, |s| s.apply);
        match apply {
            Apply::Session => sql.push(set_line(name, value)),
            Apply::Reload | Apply::Standby => {
                sql.push(alter_system_line(name, value));
                sql.push("SELECT pg_reload_conf();".into());
            }
            Apply::Restart => {
                sql.push(alter_system_line(name, value));
                sql.push("-- then restart the server".into());
            }
        }
    }
    if info.index_value > 0
        && matters.contains(&names.len())
        && let Some(ix) = b.indexes.get(info.index_value - 1)
    {
        sql.push(format!("{};", ix.sql.trim_end_matches(';')));
    }
    sql
}

/// The SQL of the core's pick (the cheapest setting that may be best, when others were shown
/// worse): in the dimensions where it differs from a setting shown worse — with candidate
/// indexes, the candidate's `CREATE INDEX` when "no index" was shown slower than the best.
fn pick_lines(report: &RunReport, b: &QueryReport, u: &UnitSummary) -> Vec<String> {
    let f = &u.finding;
    let (Some(pick), Some(c)) = (
        f.pick.as_ref().and_then(|p| f.setting(p)),
        f.pick.as_ref().and_then(|p| u.combo_of(p)),
    ) else {
        return Vec::new();
    };
    let matters: Vec<usize> = (0..pick.coords.len())
        .filter(|&d| {
            f.shown_worse.iter().any(|w| {
                f.setting(w)
                    .is_some_and(|s| s.coords.get(d) != pick.coords.get(d))
            })
        })
        .collect();
    lines_for(report, b, c, &matters)
}

/// A unit with nothing measured to compare but a hypothetical candidate's plan: the advice of
/// the planner's estimate, labelled as one (the candidate's SQL only when it advises building).
fn from_estimate(b: &QueryReport, u: &UnitSummary) -> Option<Recommendation> {
    let s = b.plans.iter().find(|p| p.name == u.name)?.statement;
    let estimates = crate::experiment::query::estimate::of_statement(b, s);
    let best = estimates
        .iter()
        .filter(|e| e.advises())
        .min_by(|x, y| x.cost.total_cmp(&y.cost))
        .or(estimates.first())?;
    Some(Recommendation {
        text: best.advice(),
        sql: if best.advises() {
            vec![
                "-- the planner's estimate (HypoPG), not a measurement".into(),
                format!("{};", best.sql.trim_end_matches(';')),
            ]
        } else {
            vec![]
        },
    })
}

/// The SQL that applies unit `u`'s recommended combination (empty: none, or nothing to change).
pub(crate) fn unit_sql(report: &RunReport, b: &QueryReport, u: &UnitSummary) -> Vec<String> {
    let f = &u.finding;
    match f.recommendation.as_deref().and_then(|l| u.combo_of(l)) {
        Some(c) => lines_for(report, b, c, &f.matters),
        None => Vec::new(),
    }
}

fn for_unit(report: &RunReport, b: &QueryReport, u: &UnitSummary) -> Recommendation {
    let f = &u.finding;
    let fmt = if b.better() == Better::Higher {
        format_tps
    } else {
        format_time
    };
    let words = |text: String| Recommendation { text, sql: vec![] };
    match (f.verdict, &f.recommendation) {
        (None, _) if let Some(r) = from_estimate(b, u) => r,
        (None, _) => words(format!(
            "{}: one combination ran, nothing to compare: no recommendation.",
            u.name
        )),
        (Some(Verdict::TooFewTrials), _) if f.pick.is_some() => Recommendation {
            text: format!(
                "{}: {}.{}",
                u.name,
                f.sentence_with(&fmt),
                match f.more_repeats_needed {
                    Some(n) => format!(
                        " Run again with repeat {n} or more (an estimate), or repeat auto, to narrow the set."
                    ),
                    None => String::new(),
                }
            ),
            sql: pick_lines(report, b, u),
        },
        (Some(Verdict::TooFewTrials), _) => words(format!(
            "{}: {}. No recommendation{}",
            u.name,
            f.sentence_with(&fmt),
            match f.more_repeats_needed {
                Some(n) =>
                    format!("; run again with repeat {n} or more (an estimate), or repeat auto."),
                None => ".".to_string(),
            }
        )),
        (Some(_), None) => words(format!(
            "{}: {}: keep the current settings.",
            u.name,
            f.sentence_with(&fmt)
        )),
        (Some(v), Some(label)) => {
            let Some(c) = u.combo_of(label) else {
                return words(format!("{}: {}.", u.name, f.sentence_with(&fmt)));
            };
            let sql = lines_for(report, b, c, &f.matters);
            let why = if v == Verdict::Faster {
                "faster than every other combination"
            } else {
                "the cheapest combination shown as good as the best"
            };
            let median = f
                .settings
                .iter()
                .find(|s| &s.label == label)
                .and_then(|s| s.estimate)
                .map(|e| {
                    format!(
                        " ({} [{}, {}] at {:.0}%, median of {})",
                        fmt(e.median),
                        fmt(e.ci_low),
                        fmt(e.ci_high),
                        e.level * 100.0,
                        e.n
                    )
                })
                .unwrap_or_default();
            if sql.is_empty() {
                words(format!(
                    "{}: {label}{median} is {why}, and it is what the server runs now: keep the current settings.",
                    u.name
                ))
            } else {
                Recommendation {
                    text: format!("{}: {label}{median} is {why}.", u.name),
                    sql,
                }
            }
        }
    }
}

pub(crate) fn recommendations(report: &RunReport, b: &QueryReport) -> Vec<Recommendation> {
    let mut out: Vec<Recommendation> = b
        .summary
        .units
        .iter()
        .map(|u| for_unit(report, b, u))
        .collect();
    if out.is_empty() {
        return out;
    }
    let mut caveat = format!(
        "Measured on {} of data, the statements run {}; a plan and its time move with the data's size and the server's memory, so measure at your data's size before changing a server default. `SET` lasts for the session: use it just before the statement, or `ALTER ROLE … SET` for a role.",
        crate::measure::units::format_bytes(b.data_bytes.max(0) as u64),
        b.transactions
    );
    if b.indexes.iter().any(|c| c.hypothetical()) {
        caveat.push_str(" A hypothetical index is the planner's estimate, not a measurement: build it on a copy (pglab sandbox import) to measure it.");
    }
    caveat.insert_str(0, &super::recommend::partial_run(report));
    out.push(Recommendation {
        text: caveat,
        sql: Vec::new(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::{QueryTrial, combos, test_spec};

    /// A query run over work_mem × jit where only work_mem makes the difference: `times`
    /// gives each combination's seconds (work_mem outermost).
    fn run(times: [f64; 4]) -> (RunReport, QueryReport) {
        let spec = test_spec(&[
            ("sql", "SELECT 1"),
            ("set", "work_mem=1MB,64MB; jit=on,off"),
            ("repeat", "6"),
        ]);
        let mut q = QueryReport::new(&spec);
        q.combos = combos(&spec);
        // The server runs jit=off: a SET jit line would appear were the dimension not
        // filtered by what mattered.
        q.current_settings = [("work_mem", "4MB"), ("jit", "off")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let noise = [1.0, 1.002, 0.998, 1.001, 0.999, 1.0005];
        for (c, base) in times.iter().enumerate() {
            for (i, n) in noise.iter().enumerate() {
                let mut t = QueryTrial::test(c, base * n, i as u32 + 1);
                t.settings = q.combos[c].settings.iter().cloned().collect();
                q.trials.push(t);
            }
        }
        q.summarize(&[]);
        let report = crate::report::example::with_body(crate::experiment::ReportBody::Query(
            Box::new(q.clone()),
        ));
        (report, q)
    }

    /// The SET lines name what the core showed to matter and nothing else: work_mem, not
    /// jit, whose values were shown equivalent.
    #[test]
    fn only_the_settings_that_made_the_difference_get_a_set_line() {
        let (report, q) = run([2.0, 2.0, 1.0, 1.0]);
        let recs = recommendations(&report, &q);
        let sql: Vec<&String> = recs.iter().flat_map(|r| &r.sql).collect();
        assert_eq!(sql, ["SET work_mem = '64MB';"], "{recs:#?}");
        assert!(
            recs[0].text.contains("shown as good as the best"),
            "{}",
            recs[0].text
        );
    }

    /// Every combination shown equivalent: keep the current settings, no SQL.
    #[test]
    fn all_equivalent_keeps_the_current_settings() {
        let (report, q) = run([1.0, 1.0, 1.0, 1.0]);
        let recs = recommendations(&report, &q);
        assert!(recs.iter().all(|r| r.sql.is_empty()), "{recs:#?}");
        assert!(
            recs[0].text.contains("keep the current settings"),
            "{}",
            recs[0].text
        );
    }

    /// The 450× case as numbers: no index far slower, two candidates whose rounds
    /// drift together too much to rank them. The core picks the cheaper candidate (none is
    /// shown better), and the advice is its CREATE INDEX.
    #[test]
    fn the_cheapest_candidate_that_may_be_best_gets_its_create_index() {
        let spec = test_spec(&[
            ("sql", "SELECT * FROM orders WHERE customer_id = 7"),
            (
                "index",
                "CREATE INDEX ON orders (customer_id); CREATE INDEX ON orders (customer_id, note)",
            ),
            ("repeat", "5"),
        ]);
        let mut q = QueryReport::new(&spec);
        q.combos = combos(&spec);
        for (v, sql) in spec.index.iter().enumerate() {
            q.indexes.push(crate::experiment::query::IndexCandidate {
                value: v + 1,
                sql: sql.clone(),
                table: "lab.orders".into(),
                how: "built".into(),
                name: format!("pglab_q_x_{}", v + 1),
                build_seconds: Some(0.1),
                index_bytes: Some(1 << 20),
                dropped: true,
            });
        }
        let drift = [1.0, 1.3, 0.7, 1.2, 0.8];
        for (c, base) in [25e-3, 5.5e-5, 5.7e-5].iter().enumerate() {
            for (i, d) in drift.iter().enumerate() {
                q.trials.push(QueryTrial::test(c, base * d, i as u32 + 1));
            }
        }
        q.summarize(&[]);
        let report = crate::report::example::with_body(crate::experiment::ReportBody::Query(
            Box::new(q.clone()),
        ));
        let recs = recommendations(&report, &q);
        assert_eq!(q.summary.units[0].finding.pick.as_deref(), Some("index 1"));
        assert_eq!(
            recs[0].sql,
            ["CREATE INDEX ON orders (customer_id);"],
            "{recs:#?}"
        );
        assert!(recs[0].text.contains("use index 1"), "{}", recs[0].text);
    }
}
