//! The table of a query run on a standby (`--on-standby`): per trial what the standby
//! cancelled and why, how fast the statements answered, and what the primary paid.

use super::grid::Grid;
use crate::experiment::query::QueryReport;
use crate::measure::units::{format_bytes, format_seconds};

/// The trials on the standby (None for a run on the target).
pub fn grid(b: &QueryReport) -> Option<Grid> {
    if b.standby_reads.is_empty() {
        return None;
    }
    let mut g = Grid::new(
        "On the standby",
        &[
            ("combination", false),
            ("rep", true),
            ("cancelled", true),
            ("conflicts", false),
            ("p50 ms", true),
            ("churned rows", true),
            ("dead kept", true),
            ("grew", true),
            ("xmin age", true),
            ("caught up", true),
        ],
    );
    for t in &b.standby_reads {
        let kinds: Vec<String> = t
            .conflicts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let grew = t.bytes_after - t.bytes_before;
        g.rows.push(vec![
            b.combo_label(t.combo),
            t.repeat.to_string(),
            t.cancelled.to_string(),
            if kinds.is_empty() {
                "–".into()
            } else {
                kinds.join(", ")
            },
            t.latency_ms.map_or("–".into(), |l| format!("{:.2}", l.p50)),
            t.churned_rows.to_string(),
            t.dead_after.to_string(),
            format!(
                "{}{}",
                if grew < 0 { "−" } else { "+" },
                format_bytes(grew.unsigned_abs())
            ),
            t.xmin_age_max.map_or("–".into(), |a| a.to_string()),
            format_seconds(t.caught_up_s),
        ]);
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::{StandbyReadTrial, test_spec};

    #[test]
    fn one_row_a_trial() {
        let mut r = QueryReport::new(&test_spec(&[("sql", "SELECT 1"), ("on-standby", "1")]));
        assert!(grid(&r).is_none());
        r.standby_reads.push(StandbyReadTrial {
            repeat: 1,
            cancelled: 3,
            conflicts: [("snapshot".to_string(), 3)].into(),
            bytes_before: 8192,
            bytes_after: 16384,
            dead_after: 40,
            ..StandbyReadTrial::default()
        });
        let g = grid(&r).unwrap();
        assert_eq!(g.rows.len(), 1);
        assert_eq!(
            g.rows[0][1..9],
            ["1", "3", "snapshot 3", "–", "0", "40", "+8192 B", "–"]
        );
    }
}
