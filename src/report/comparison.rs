//! A comparison of two runs as text or Markdown: what differed around them first, then the
//! results side by side, then the verdict.

use super::Format;
use super::grid::Grid;
use crate::history::compare::{Comparison, Difference, Judgement};
use crate::measure::units::format_seconds;

fn value(v: f64, unit: &str) -> String {
    if unit == "s" {
        format_seconds(v)
    } else {
        format!("{v:.3} {unit}")
    }
}

fn differences_grid(title: &str, d: &[Difference]) -> Grid {
    let mut g = Grid::new(
        title,
        &[("", false), ("baseline", false), ("candidate", false)],
    );
    for x in d {
        g.rows.push(vec![
            x.name.clone(),
            x.baseline.clone().unwrap_or_else(|| "–".into()),
            x.candidate.clone().unwrap_or_else(|| "–".into()),
        ]);
    }
    g
}

fn judgement(j: Judgement, lower: bool) -> &'static str {
    match (j, lower) {
        (Judgement::Better, true) => "faster",
        (Judgement::Worse, true) => "slower",
        (Judgement::Better, false) => "better",
        (Judgement::Worse, false) => "worse",
        (Judgement::Same, _) => "same (within noise)",
        (Judgement::OnlyBaseline, _) => "baseline only",
        (Judgement::OnlyCandidate, _) => "candidate only",
    }
}

fn results_grid(c: &Comparison) -> Grid {
    let mut g = Grid::new(
        &format!("{} — candidate vs baseline", c.metric),
        &[
            ("setting", false),
            ("baseline", true),
            ("spread", true),
            ("candidate", true),
            ("spread", true),
            ("ratio", true),
            ("verdict", false),
        ],
    );
    let stat = |s: Option<crate::history::compare::Stat>| match s {
        Some(s) => (
            value(s.median, &c.unit),
            if s.n > 1 {
                value(s.max - s.min, &c.unit)
            } else {
                "n=1".into()
            },
        ),
        None => ("–".into(), String::new()),
    };
    for p in &c.points {
        let (b, bs) = stat(p.baseline);
        let (k, ks) = stat(p.candidate);
        g.rows.push(vec![
            p.key.clone(),
            b,
            bs,
            k,
            ks,
            p.ratio.map(|r| format!("{r:.2}×")).unwrap_or_default(),
            judgement(p.judgement, c.lower_is_better).to_string(),
        ]);
    }
    g
}

fn grids(c: &Comparison) -> Vec<Grid> {
    let mut out = Vec::new();
    if !c.parameter_differences.is_empty() {
        out.push(differences_grid(
            "Parameters that differ",
            &c.parameter_differences,
        ));
    }
    if !c.server_differences.is_empty() {
        out.push(differences_grid(
            "Server differences",
            &c.server_differences,
        ));
    }
    if !c.host_differences.is_empty() {
        out.push(differences_grid("Host differences", &c.host_differences));
    }
    out.push(results_grid(c));
    out
}

fn run_line(label: &str, r: &crate::history::compare::RunRef) -> String {
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

pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Json | Format::Csv => serde_json::to_string_pretty(c).unwrap_or_default() + "\n",
        Format::Md => {
            let mut out = format!("# {} comparison\n\n", c.experiment);
            out.push_str(&format!(
                "- {}\n- {}\n\n**Verdict:** {}\n",
                run_line("baseline", &c.baseline),
                run_line("candidate", &c.candidate),
                c.verdict
            ));
            if c.server_differences.is_empty() && c.host_differences.is_empty() {
                out.push_str("\nSame server settings and host.\n");
            }
            for g in grids(c) {
                out.push_str(&format!(
                    "\n## {}\n\n{}",
                    g.title,
                    super::markdown::grid(&g)
                ));
            }
            out
        }
        Format::Table => {
            let mut out = format!(
                "{} comparison\n  {}\n  {}\n",
                c.experiment,
                run_line("baseline ", &c.baseline),
                run_line("candidate", &c.candidate)
            );
            if c.server_differences.is_empty() && c.host_differences.is_empty() {
                out.push_str("  same server settings and host\n");
            }
            for g in grids(c) {
                out.push_str(&format!("\n{}\n{}", g.title, super::table::grid(&g)));
            }
            out.push_str(&format!("\nverdict: {}\n", c.verdict));
            out
        }
    }
}
