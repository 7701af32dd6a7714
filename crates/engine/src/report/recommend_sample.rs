//! A sampled index-build's recommendation is for the table, not the sample. The samples'
//! findings keep their sentences but lose their `SET` lines; the one `SET` line is the table's:
//! the largest sample's recommended setting, given only when that setting was projected to the
//! whole table (its samples sorted at `maintenance_work_mem` × their fraction, in the table's
//! regime), no confounder says the projection crosses a regime, and no other setting's
//! projected interval lies wholly below its own. Otherwise a sentence says why there is none,
//! so a `SET maintenance_work_mem = '1MB'` true of a sample never passes for the table's.

use crate::experiment::index_build::own_table::ProjectionLine;
use crate::experiment::index_build::{IndexBuildReport, SettingRef};
use crate::experiment::lab::decision::format_percent;
use crate::measure::units::format_seconds;

use super::recommend::Recommendation;

/// One order's recommendation as [`super::recommend`] made it: the order's name, the setting
/// it applies and its SQL.
pub(crate) type Applied = (String, Option<SettingRef>, Vec<String>);

/// "1.6 s [1.1 s, 2.1 s]".
fn projected(l: &ProjectionLine) -> String {
    let p = &l.projection;
    format!(
        "{} [{}, {}]",
        format_seconds(p.value),
        format_seconds(p.low),
        format_seconds(p.high)
    )
}

/// For a sampled run: strip the samples' SQL from `out` and return the table's answer (None:
/// not a sampled run).
pub(crate) fn for_the_table(
    b: &IndexBuildReport,
    out: &mut [Recommendation],
    applied: &[Applied],
) -> Option<Recommendation> {
    let own = b.own.as_ref()?;
    let pct = b.params.table.as_ref()?.sample?;
    for r in out.iter_mut().filter(|r| !r.sql.is_empty()) {
        r.sql.clear();
        r.text
            .push_str(" That is a sample's answer; the table's is given on its own.");
    }
    let largest = b.summary.orders.iter().zip(applied).max_by(|x, y| {
        let f = |o: &crate::experiment::index_build::OrderSummary| o.order.fraction();
        f(x.0)
            .partial_cmp(&f(y.0))
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    let sample = largest.0.order.name();
    let head = format!(
        "For the whole of {} (projected from the {} sample)",
        own.table,
        format_percent(pct / 100.0)
    );
    Some(match answer(b, largest.1) {
        Ok((label, line)) => Recommendation {
            text: format!(
                "{head}: {label}, projected {} ({} prediction interval with the model's error); {sample} recommends it, built at {label} × its fraction as the table sorts at {label}. Build on the whole table before changing a server default.",
                projected(line),
                format_percent(line.projection.confidence),
            ),
            sql: largest.1.2.clone(),
        },
        Err(why) => Recommendation {
            text: format!("{head}: no SET line: {why}."),
            sql: Vec::new(),
        },
    })
}

/// The setting the table may take, with its projection; or why none.
fn answer<'a>(
    b: &'a IndexBuildReport,
    applied: &Applied,
) -> Result<(String, &'a ProjectionLine), String> {
    let (sample, set, sql) = applied;
    let Some(r) = set.as_ref().filter(|_| !sql.is_empty()) else {
        return Err(format!(
            "the largest sample ({sample}) recommends no setting"
        ));
    };
    let lines = b
        .own
        .as_ref()
        .map(|o| o.projections.as_slice())
        .unwrap_or(&[]);
    let label = crate::experiment::index_build::summary::setting_label(
        &b.params,
        r.combo,
        r.workers,
        &r.maintenance_work_mem,
    );
    let Some(line) = lines.iter().find(|l| {
        l.combo == r.combo
            && l.workers == r.workers
            && l.maintenance_work_mem_bytes == r.maintenance_work_mem_bytes
    }) else {
        return Err(format!(
            "{sample} recommends {label}, which has no projection to the whole table (the findings say why)"
        ));
    };
    let prefix = format!("{label}: ");
    if let Some(c) =
        b.summary.confounders.iter().find(|c| {
            c.starts_with(&prefix) && (c.contains("regime") || c.contains("sort on disk"))
        })
    {
        return Err(format!(
            "{sample} recommends {label}, but {}",
            c.trim_start_matches(&prefix)
        ));
    }
    if let Some(o) = lines
        .iter()
        .find(|o| o.projection.high < line.projection.low)
    {
        return Err(format!(
            "{sample} recommends {label} (projected {}), but {} is projected faster ({}): the sample's finding and the projection disagree; build on the whole table to decide",
            projected(line),
            o.setting,
            projected(o)
        ));
    }
    Ok((label, line))
}

#[cfg(test)]
mod tests {
    use crate::experiment::ReportBody;
    use crate::experiment::index_build::projection_example::sampled_run;
    use crate::report::recommend::index_build_recommendations;

    /// The recommendations of a sampled run of `mwm` (memory scaled or not), as the report
    /// gives them: every SQL line, and the table's sentence.
    fn advice(mwm: &str, scaled: bool) -> (Vec<String>, String) {
        let b = sampled_run(mwm, scaled);
        let mut r = crate::report::example::index_build("t", 1_000_000, &[]);
        r.body = ReportBody::IndexBuild(Box::new(b.clone()));
        let recs = index_build_recommendations(&r, &b);
        let sql = recs.iter().flat_map(|r| r.sql.clone()).collect();
        let table = recs
            .iter()
            .find(|r| r.text.starts_with("For the whole of s.t"))
            .unwrap_or_else(|| panic!("{recs:#?}"))
            .text
            .clone();
        (sql, table)
    }

    /// 256MB sorts the table in memory, 32MB does not; both scale down to the samples (32MB
    /// from the 5% one up): the table's answer is 256MB, its one SET line.
    #[test]
    fn the_set_line_is_the_tables_projected_answer() {
        let (sql, table) = advice("32MB,256MB", true);
        assert_eq!(sql, ["SET maintenance_work_mem = '256MB';"], "{table}");
        assert!(table.contains(": 256MB, projected "), "{table}");
    }

    /// Samples built at the table's memory (the records before scaling): 64MB sorts them in
    /// memory but the table would spill. The sample's winner gets no SET line, and the
    /// sentence says why.
    #[test]
    fn a_sample_answer_from_another_regime_gets_no_set_line() {
        let (sql, table) = advice("1MB,64MB", false);
        assert!(sql.is_empty(), "{sql:?}");
        assert!(
            table.contains(
                "no SET line: copy:10% recommends 64MB, but the largest sample sorted in memory"
            ),
            "{table}"
        );
    }

    /// 1MB cannot be scaled down for any sample: where the samples find 1MB fastest (64MB made
    /// 30% slower here), the sample's answer keeps its sentence but no
    /// `SET maintenance_work_mem = '1MB'` is printed, and the table's says why.
    #[test]
    fn one_mb_learned_on_a_sample_is_never_set() {
        let mut b = sampled_run("1MB,64MB", true);
        for t in b
            .trials
            .iter_mut()
            .filter(|t| t.maintenance_work_mem == "64MB")
        {
            t.seconds *= 1.3;
        }
        b.summarize(&[]);
        let mut r = crate::report::example::index_build("t", 1_000_000, &[]);
        r.body = ReportBody::IndexBuild(Box::new(b.clone()));
        let recs = index_build_recommendations(&r, &b);
        assert!(
            recs.iter()
                .any(|r| r.text.contains("1MB built the copy:10% index faster")),
            "{recs:#?}"
        );
        assert!(recs.iter().all(|r| r.sql.is_empty()), "{recs:#?}");
        assert!(
            recs.iter().any(|r| r.text.contains(
                "no SET line: copy:10% recommends 1MB, which has no projection to the whole table"
            )),
            "{recs:#?}"
        );
    }
}
