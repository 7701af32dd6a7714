//! The `history list` table: one row a run (the headless list and the TUI's history overlay).

use super::Format;
use super::grid::Grid;
use crate::experiment::RunReport;
use crate::measure::units::format_seconds;

/// `history list` in any format: a table (the default), a Markdown table, or one record per
/// run with the same fields for scripts (JSON array, CSV with a header).
pub fn list(runs: &[&RunReport], format: Format) -> String {
    match format {
        Format::Table => list_table(runs),
        Format::Md => super::markdown::grid(&list_grid(runs, false)),
        Format::Json => {
            let rows: Vec<serde_json::Value> = runs
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "run_id": r.run_id,
                        "started_at": r.started_at.to_rfc3339(),
                        "experiment": r.kind().to_string(),
                        "preset": r.preset,
                        "outcome": r.outcome.as_str(),
                        "seconds": r.seconds(),
                        "result": super::headline(r),
                    })
                })
                .collect();
            serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
        }
        Format::Csv => {
            let g = list_grid(runs, false);
            let mut out = g.headers.join(",") + "\n";
            for row in &g.rows {
                let cells: Vec<String> = row.iter().map(|c| super::csv::cell(c)).collect();
                out.push_str(&cells.join(","));
                out.push('\n');
            }
            out
        }
    }
}

/// The `history list` table: one row a run, in the order given (the TUI shows it too).
pub fn list_table(runs: &[&RunReport]) -> String {
    super::table::grid(&list_grid(runs, true))
}

/// The rows of the list; `short` cuts long result lines for a terminal.
fn list_grid(runs: &[&RunReport], short: bool) -> Grid {
    let mut g = Grid::new(
        "",
        &[
            ("id", false),
            ("started (UTC)", false),
            ("experiment", false),
            ("preset", false),
            ("outcome", false),
            ("took", true),
            ("result", false),
        ],
    );
    for r in runs {
        let mut headline = super::headline(r);
        if short && headline.chars().count() > 90 {
            headline = headline.chars().take(89).collect::<String>() + "…";
        }
        g.rows.push(vec![
            r.run_id.clone(),
            r.started_at.format("%Y-%m-%d %H:%M").to_string(),
            r.kind().to_string(),
            r.preset.clone().unwrap_or_default(),
            r.outcome.as_str().to_string(),
            format_seconds(r.seconds()),
            headline,
        ]);
    }
    g
}
