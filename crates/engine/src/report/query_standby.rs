//! The table of a query run on a standby (`--on-standby`): per trial what the standby
//! cancelled and why, how fast the statements answered (with clients: their transactions/s
//! and statement p99 too), and what the primary paid.

use super::grid::Grid;
use crate::experiment::query::summary::format_tps;
use crate::experiment::query::{Latency, QueryReport, StandbyReadTrial};
use crate::measure::units::{format_bytes, format_seconds};

/// The columns, with the clients' where trials had clients.
fn headers(clients: bool) -> Vec<(&'static str, bool)> {
    let mut h = vec![
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
    ];
    if clients {
        h.insert(1, ("clients", true));
        h.insert(5, ("tps", true));
        h.insert(7, ("p99 ms", true));
    }
    h
}

/// One trial's row.
fn row(b: &QueryReport, t: &StandbyReadTrial, clients: bool) -> Vec<String> {
    let kinds: Vec<String> = t
        .conflicts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let grew = t.bytes_after - t.bytes_before;
    let ms = |f: fn(&Latency) -> f64| {
        t.latency_ms
            .as_ref()
            .map_or("–".into(), |l| format!("{:.2}", f(l)))
    };
    let mut r = vec![
        b.combo_label(t.combo),
        t.repeat.to_string(),
        t.cancelled.to_string(),
        if kinds.is_empty() {
            "–".into()
        } else {
            kinds.join(", ")
        },
        ms(|l| l.p50),
        t.churned_rows.to_string(),
        t.dead_after.to_string(),
        format!(
            "{}{}",
            if grew < 0 { "−" } else { "+" },
            format_bytes(grew.unsigned_abs())
        ),
        t.xmin_age_max.map_or("–".into(), |a| a.to_string()),
        format_seconds(t.caught_up_s),
    ];
    if clients {
        r.insert(1, t.clients.map_or("1".into(), |c| c.to_string()));
        r.insert(5, t.tps.map_or("–".into(), format_tps));
        r.insert(7, ms(|l| l.p99));
    }
    r
}

/// The trials on the standby (None for a run on the target).
pub(crate) fn grid(b: &QueryReport) -> Option<Grid> {
    if b.standby_reads.is_empty() {
        return None;
    }
    let clients = b.standby_reads.iter().any(|t| t.clients.is_some());
    let mut g = Grid::new("On the standby", &headers(clients));
    for t in &b.standby_reads {
        g.rows.push(row(b, t, clients));
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::query::test_spec;

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
        // With clients: their count, transactions/s and p99 beside the rest.
        r.standby_reads[0].clients = Some(2);
        r.standby_reads[0].tps = Some(812.0);
        r.standby_reads[0].latency_ms = Some(Latency {
            p50: 1.25,
            p95: 2.0,
            p99: 4.5,
        });
        let g = grid(&r).unwrap();
        let at = |h: &str| g.headers.iter().position(|x| x == h).unwrap();
        assert_eq!(g.rows[0][at("clients")], "2");
        assert_eq!(g.rows[0][at("tps")], format_tps(812.0));
        assert_eq!(g.rows[0][at("p50 ms")], "1.25");
        assert_eq!(g.rows[0][at("p99 ms")], "4.50");
        assert_eq!(g.rows[0][at("cancelled")], "3");
        assert_eq!(g.headers.len(), g.rows[0].len());
    }
}
