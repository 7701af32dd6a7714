//! A tune's Markdown report: what was searched, the search path (every configuration tried,
//! in order, against its measure with the interval) as an SVG chart drawn by the shared plot,
//! each race's decision, the confirmation, and the script.

use std::path::{Path, PathBuf};

use super::chart_plot::{Axis, Marker, PALETTE, Plot, RefLine, Scale, Series, draw};
use crate::measure::units::format_count;
use crate::tune::TuneState;
use crate::tune::confirm::Side;
use crate::tune::objective::Objective;
use crate::tune::output::{self, comparison_text};

/// The files [`write`] produced.
pub(crate) struct Written {
    pub svg: Option<PathBuf>,
}

fn fmt_seconds(v: f64) -> String {
    crate::measure::units::format_seconds(v)
}

/// The search path: one series per raced setting (the values tried, medians with their
/// intervals, x = the configuration's place in the search), dropped values as grey crosses,
/// the confirmation's two configurations last.
pub(crate) fn plot(st: &TuneState) -> Plot {
    let obj = Objective::of(&st.spec);
    let mut series: Vec<Series> = Vec::new();
    let grey = plotters::style::RGBColor(170, 170, 170);
    for (i, p) in st.path.iter().enumerate() {
        let x = (i + 1) as f64;
        let (name, color, marker) = if p.dropped {
            ("dropped (shown worse)".to_string(), grey, Marker::Cross)
        } else if p.setting == "confirmation" {
            ("confirmation".to_string(), PALETTE[1], Marker::Triangle)
        } else {
            let k = st
                .plan
                .iter()
                .position(|s| s.name == p.setting)
                .unwrap_or(0);
            (
                p.setting.clone(),
                PALETTE[(k + 2) % PALETTE.len()],
                Marker::Circle,
            )
        };
        let s = match series.iter_mut().position(|s| s.name == name) {
            Some(j) => &mut series[j],
            None => {
                series.push(Series {
                    name,
                    color,
                    dashed: false,
                    marker,
                    hollow: p.dropped,
                    points: Vec::new(),
                    whiskers: Vec::new(),
                    dots: Vec::new(),
                });
                series.last_mut().expect("pushed")
            }
        };
        s.points.push((x, p.median));
        s.whiskers.push((x, p.low, p.high));
    }
    let refs = st
        .path
        .first()
        .map(|p| RefLine {
            name: format!("first configuration ({})", p.label),
            y: p.median,
            color: PALETTE[0],
        })
        .into_iter()
        .collect();
    Plot {
        caption: format!("pglab tune · {} · search path", st.workload),
        x: Axis {
            title: "configuration tried (in search order)".into(),
            scale: Scale::Linear(""),
        },
        y: Axis {
            title: obj.what.to_string(),
            scale: if obj.unit == "s" {
                Scale::Linear("s")
            } else {
                Scale::Log10(format_count)
            },
        },
        series,
        refs,
    }
}

/// What the search cost against a full grid over the same values: every combination of the
/// candidates, each with the trials a race needs before its first verdict.
pub(crate) fn search_cost(st: &TuneState) -> String {
    let raced: usize = st.decisions.iter().map(|d| d.trials).sum();
    let confirm = st
        .confirmation()
        .map_or(0, |c| c.start_trials.len() + c.tuned_trials.len());
    let configs: usize = st.plan.iter().map(|p| p.candidates.len().max(1)).product();
    let grid = configs * crate::tune::looks::FIRST_LOOK;
    let screened = crate::tune::screen_report::passes(st);
    format!(
        "Search: {screened} passes in the screening, {raced} in the races and {confirm} in the confirmation ({} trials of the experiment in all); a full grid over the same values is {configs} configurations × {} passes = {grid} passes ({:.0}% of it spent in the screening and the races). Pace: {}.",
        st.experiment_trials,
        crate::tune::looks::FIRST_LOOK,
        100.0 * (screened + raced) as f64 / grid.max(1) as f64,
        st.pace.describe(fmt_seconds)
    )
}

/// The report's text; `svg` names the chart file beside it.
pub(crate) fn markdown(st: &TuneState, svg: Option<&str>) -> String {
    let obj = Objective::of(&st.spec);
    let mut s = String::new();
    let on = &st.measured_on;
    s.push_str(&format!("# pglab tune: {}\n\n", st.workload));
    s.push_str(&format!(
        "Measured on {}, {}; data: {}; workload: {}.\n\n",
        on.host, on.server, on.data, on.workload
    ));
    s.push_str(&format!(
        "Objective: {}. Budget {}, spent {}; {} passes of the workload in {} runs (each in the history).\n\n",
        obj.what,
        fmt_seconds(st.budget_s),
        fmt_seconds(st.spent_s),
        st.trials,
        st.runs.len()
    ));
    s.push_str(&format!("{}\n\n", search_cost(st)));
    s.push_str(&format!("Warm-ups: {}.\n\n", st.cache.sentence()));
    for n in &st.notes {
        s.push_str(&format!("Note: {n}.\n\n"));
    }
    if let Some(sampled) = crate::tune::sampled::sentence(st) {
        s.push_str(&format!("**{sampled}**\n\n"));
    }
    if let Some(f) = svg {
        s.push_str(&format!("![search path]({f})\n\n"));
    }
    s.push_str(&crate::tune::plan_report::markdown(st));
    s.push_str(&crate::tune::screen_report::markdown(st));
    push_search_path(&mut s, st, &obj);
    push_decisions(&mut s, st);
    push_confirmation(&mut s, st);
    s.push_str("\n## Script\n\n```sql\n");
    s.push_str(&output::script(st, on));
    s.push_str("```\n");
    s
}

/// The search path's table: every configuration tried, in order, with what it carried.
fn push_search_path(s: &mut String, st: &TuneState, obj: &Objective) {
    s.push_str("## Search path\n\n| # | configuration | median | interval | level | trials | |\n|---|---|---|---|---|---|---|\n");
    for (i, p) in st.path.iter().enumerate() {
        let carried = if p.carried.is_empty() {
            String::new()
        } else {
            format!(
                " (with {})",
                p.carried
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        s.push_str(&format!(
            "| {} | {}{carried} | {} | {} … {} | {:.0}% | {} | {} |\n",
            i + 1,
            p.label,
            obj.format(p.median),
            obj.format(p.low),
            obj.format(p.high),
            p.level * 100.0,
            p.trials,
            if p.dropped { "dropped" } else { "" }
        ));
    }
}

/// Each race's decision, one line a setting.
fn push_decisions(s: &mut String, st: &TuneState) {
    s.push_str("\n## Decisions\n\n");
    for d in &st.decisions {
        let cmp = d
            .comparison
            .as_ref()
            .map(|c| {
                format!(
                    "; {} against {} at the corrected level",
                    comparison_text(c),
                    d.start
                )
            })
            .unwrap_or_default();
        let change = if d.value == d.start {
            format!("stays {}", d.start)
        } else {
            format!("{} → {}", d.start, d.value)
        };
        if d.rounds == 0 {
            s.push_str(&format!(
                "- {}: {}\n",
                d.setting,
                crate::tune::screen_report::not_raced(st, d)
            ));
        } else {
            s.push_str(&format!(
                "- {}: {change} ({}; {}{cmp})\n",
                d.setting,
                d.why.as_str(),
                crate::tune::pair::evidence(d)
            ));
        }
    }
}

/// The confirmation's verdict and its statements' and pgtune's sentences, when it ran.
fn push_confirmation(s: &mut String, st: &TuneState) {
    let Some(c) = st.confirmation() else {
        return;
    };
    s.push_str("\n## Confirmation\n\n");
    if !c.tuned.is_empty() {
        s.push_str(&format!(
            "The tuned set against the starting configuration, {} rounds, interleaved: {}.\n",
            c.rounds,
            c.comparison
                .as_ref()
                .map(comparison_text)
                .unwrap_or_else(|| "no verdict".into())
        ));
    }
    if let Some(w) = crate::tune::statements::sentence(&c.statements, Side::Tuned) {
        s.push_str(&format!("\nThe tuned set, {w}.\n"));
    }
    if let Some(f) = crate::tune::formula::sentence(st) {
        s.push_str(&format!("\n{f}.\n"));
    }
    if let Some(w) = crate::tune::statements::sentence(&c.statements, Side::Formula) {
        s.push_str(&format!("\npgtune's set, {w}.\n"));
    }
}

/// Write the script to `out`, the report to `md` and its chart beside it, each atomically;
/// the sentence saying what was written.
pub(crate) fn write_all(st: &TuneState, out: &Path, md: &Path) -> Result<String, String> {
    let text = output::script(st, &st.measured_on);
    crate::paths::write_atomic(out, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let written = write(st, md).map_err(|e| format!("cannot write {}: {e}", md.display()))?;
    let recs = crate::tune::formula::preferred(st)
        .map_or_else(|| output::recommended(st).len(), |(set, _)| set.len());
    Ok(format!(
        "wrote {} ({}) and {}{}",
        out.display(),
        if recs == 0 {
            "no change recommended".to_string()
        } else {
            format!(
                "{recs} setting{} recommended",
                if recs == 1 { "" } else { "s" }
            )
        },
        md.display(),
        written
            .svg
            .map(|p| format!(" with {}", p.display()))
            .unwrap_or_default()
    ))
}

/// Write the report to `md` and the chart beside it (`.svg`), each atomically.
pub(crate) fn write(st: &TuneState, md: &Path) -> std::io::Result<Written> {
    let svg = draw(&plot(st)).ok().flatten();
    let svg_path = svg.as_ref().map(|_| md.with_extension("svg"));
    if let (Some(text), Some(p)) = (&svg, &svg_path) {
        crate::paths::write_atomic(p, text.as_bytes())?;
    }
    let name = svg_path
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    crate::paths::write_atomic(md, markdown(st, name.as_deref()).as_bytes())?;
    Ok(Written { svg: svg_path })
}
