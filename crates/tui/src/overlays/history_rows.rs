//! The rows of the history list: the runs the filters keep, newest first, with a tune's
//! rounds grouped under one line for the tune (opened with Enter, its rounds shown under it).
//! The filters: an experiment (`f` cycles) and a text (`/`), matched case-blind against the
//! run's id, experiment, preset, outcome, result line and tune.

use crate::experiment::{ExperimentKind, RunReport};

/// One line of the list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Row<'a> {
    /// A run; `in_tune` when it is a round of an opened tune (drawn indented under it).
    Run { run: &'a RunReport, in_tune: bool },
    /// A tune's rounds as one line.
    Tune {
        id: &'a str,
        workload: &'a str,
        /// Its rounds the filters keep, newest first.
        runs: Vec<&'a RunReport>,
        open: bool,
    },
}

impl<'a> Row<'a> {
    pub(crate) fn run(&self) -> Option<&'a RunReport> {
        match self {
            Row::Run { run, .. } => Some(run),
            Row::Tune { .. } => None,
        }
    }
}

/// True when `r` passes both filters.
pub(crate) fn keeps(r: &RunReport, kind: Option<ExperimentKind>, text: &str) -> bool {
    if kind.is_some_and(|k| r.kind() != k) {
        return false;
    }
    let text = text.trim().to_lowercase();
    if text.is_empty() {
        return true;
    }
    let tune = r
        .tune
        .as_ref()
        .map(|t| format!("tune {} {}", t.id, t.workload))
        .unwrap_or_default();
    let hay = [
        r.run_id.as_str(),
        r.kind().as_str(),
        r.preset.as_deref().unwrap_or(""),
        r.outcome.as_str(),
        &crate::report::headline(r),
        &tune,
    ]
    .join(" ")
    .to_lowercase();
    text.split_whitespace().all(|w| hay.contains(w))
}

/// The rows for `runs` (newest first): every kept run, a tune's rounds folded into one line
/// placed where its newest round is, and unfolded under it when its id is in `open`.
pub(crate) fn rows<'a>(
    runs: &'a [RunReport],
    kind: Option<ExperimentKind>,
    text: &str,
    open: &[String],
) -> Vec<Row<'a>> {
    let mut out: Vec<Row<'a>> = Vec::new();
    for r in runs.iter().filter(|r| keeps(r, kind, text)) {
        let Some(t) = &r.tune else {
            out.push(Row::Run {
                run: r,
                in_tune: false,
            });
            continue;
        };
        let group = out.iter_mut().find_map(|row| match row {
            Row::Tune { id, runs, .. } if *id == t.id => Some(runs),
            _ => None,
        });
        match group {
            Some(runs) => runs.push(r),
            None => out.push(Row::Tune {
                id: &t.id,
                workload: &t.workload,
                runs: vec![r],
                open: open.contains(&t.id),
            }),
        }
    }
    let mut rows = Vec::with_capacity(out.len());
    for row in out {
        let children: Vec<&RunReport> = match &row {
            Row::Tune {
                runs, open: true, ..
            } => runs.clone(),
            _ => Vec::new(),
        };
        rows.push(row);
        rows.extend(
            children
                .into_iter()
                .map(|run| Row::Run { run, in_tune: true }),
        );
    }
    rows
}

/// A tune's line: "▸ tune work-mem-spill · 12 runs · 2026-12-04 18:30–18:52 · 11 finished".
pub(crate) fn tune_line(workload: &str, runs: &[&RunReport], open: bool) -> String {
    let first = runs.iter().map(|r| r.started_at).min();
    let last = runs.iter().map(|r| r.finished_at).max();
    let when = match (first, last) {
        (Some(a), Some(b)) if a.date_naive() == b.date_naive() => {
            format!("{}–{}", a.format("%Y-%m-%d %H:%M"), b.format("%H:%M"))
        }
        (Some(a), Some(b)) => format!(
            "{} – {}",
            a.format("%Y-%m-%d %H:%M"),
            b.format("%Y-%m-%d %H:%M")
        ),
        _ => String::new(),
    };
    let finished = runs
        .iter()
        .filter(|r| r.outcome == crate::experiment::lab::record::Outcome::Finished)
        .count();
    format!(
        "{} tune {workload} · {} run{} · {when} · {finished} finished · Enter {}",
        if open { "▾" } else { "▸" },
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        if open { "folds" } else { "opens" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::record::TuneRef;
    use crate::report::example::cybertec_10m;

    fn history() -> Vec<RunReport> {
        // Newest first: a plain run, three rounds of one tune, another plain run.
        let mut v = vec![cybertec_10m("plain-new")];
        for i in 0..3 {
            let mut r = cybertec_10m(&format!("round-{i}"));
            r.tune = Some(TuneRef {
                id: "tune-1".into(),
                workload: "work-mem-spill".into(),
            });
            v.push(r);
        }
        let mut old = cybertec_10m("plain-old");
        old.preset = Some("mine".into());
        v.push(old);
        v
    }

    fn ids(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| match r {
                Row::Run { run, in_tune } => {
                    format!("{}{}", if *in_tune { "  " } else { "" }, run.run_id)
                }
                Row::Tune { id, runs, .. } => format!("{id} ({})", runs.len()),
            })
            .collect()
    }

    #[test]
    fn a_tunes_rounds_fold_into_one_line_that_opens() {
        let h = history();
        assert_eq!(
            ids(&rows(&h, None, "", &[])),
            ["plain-new", "tune-1 (3)", "plain-old"]
        );
        assert_eq!(
            ids(&rows(&h, None, "", &["tune-1".into()])),
            [
                "plain-new",
                "tune-1 (3)",
                "  round-0",
                "  round-1",
                "  round-2",
                "plain-old"
            ]
        );
        let line = tune_line("work-mem-spill", &[&h[1], &h[2]], false);
        assert!(
            line.starts_with("▸ tune work-mem-spill · 2 runs · "),
            "{line}"
        );
        assert!(line.ends_with("2 finished · Enter opens"), "{line}");
    }

    #[test]
    fn the_text_filter_matches_ids_presets_and_tunes() {
        let h = history();
        assert_eq!(ids(&rows(&h, None, "MINE", &[])), ["plain-old"]);
        assert_eq!(ids(&rows(&h, None, "round-1", &[])), ["tune-1 (1)"]);
        assert_eq!(ids(&rows(&h, None, "spill", &[])), ["tune-1 (3)"]);
        assert_eq!(
            ids(&rows(&h, None, "index-build plain", &[])),
            ["plain-new", "plain-old"]
        );
        assert!(rows(&h, None, "nothing like it", &[]).is_empty());
        assert!(rows(&h, Some(ExperimentKind::Ingest), "", &[]).is_empty());
        assert_eq!(rows(&h, Some(ExperimentKind::IndexBuild), "", &[]).len(), 3);
    }
}
