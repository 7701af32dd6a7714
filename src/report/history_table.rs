//! The `history list` table: one row a run (the headless list and the TUI's history overlay).

use super::grid::Grid;
use crate::experiment::RunReport;
use crate::measure::units::format_seconds;

/// The `history list` table: one row a run, in the order given (the TUI shows it too).
pub fn list_table(runs: &[&RunReport]) -> String {
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
        if headline.chars().count() > 90 {
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
    super::table::grid(&g)
}
