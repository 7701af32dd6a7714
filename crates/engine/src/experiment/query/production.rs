//! A captured workload's replay beside production: each statement that carries production's
//! mean (`-- production: … mean 0.042 ms` from `pglab capture`) gets its replay median at the
//! server's own settings next to it. A statement much faster in the sandbox than on
//! production is flagged: the cache, the sample or the plan differs, and a tune on it would
//! tune for the wrong thing. Much slower is flagged too (cold cache, smaller memory, a
//! different plan) — but only by more than a round trip: production's mean is the server's
//! execution time (`pg_stat_statements`), a replay's trial is the wall time at the client,
//! one round trip included, so a 0.02 ms statement replays in about 0.1 ms on a socket
//! without being slower at all.

use super::QueryReport;
use crate::measure::stats::median;

/// Replay faster than production by more than this factor (or slower by it) is flagged.
pub(crate) const FLAG_RATIO: f64 = 3.0;
/// A replay is called slower only when it is also this much slower in absolute terms: more
/// than a round trip and the client's share of a trial.
pub(crate) const SLOWER_FLOOR_MS: f64 = 1.0;

/// One line per statement with a production mean, in statement order.
pub(crate) fn beside_production(r: &QueryReport) -> Vec<String> {
    if r.params.throughput() {
        return Vec::new();
    }
    // The server's own settings (and no candidate index), else the first combination.
    let combo = r.current_combo.unwrap_or(0);
    let mut out = Vec::new();
    for (i, s) in r.params.statements.iter().enumerate() {
        let Some(prod) = s
            .production_mean_ns
            .filter(|p| *p > 0)
            .map(|ns| ns as f64 / 1e6)
        else {
            continue;
        };
        let secs: Vec<f64> = r
            .trials
            .iter()
            .filter(|t| t.statement == i && t.combo == combo && !t.cold)
            .map(|t| t.seconds)
            .collect();
        let Some(replay) = median(&secs).map(|s| s * 1000.0) else {
            continue;
        };
        out.push(line(
            &s.name,
            replay,
            prod,
            secs.len(),
            &r.combo_label(combo),
        ));
    }
    out
}

fn line(name: &str, replay_ms: f64, prod_ms: f64, n: usize, at: &str) -> String {
    let ratio = replay_ms / prod_ms;
    let flag = if ratio <= 1.0 / FLAG_RATIO {
        format!(
            "; ×{:.0} faster here than on production: the cache, the data (a sample?) or the plan differs, so what is tuned here may not hold there — compare the plans (e)",
            1.0 / ratio
        )
    } else if ratio >= FLAG_RATIO && replay_ms - prod_ms > SLOWER_FLOOR_MS {
        format!(
            "; ×{ratio:.0} slower here than on production: a cold cache, less memory or another plan — compare the plans (e)"
        )
    } else {
        String::new()
    };
    format!(
        "{name}: replay median {} ({n} trials, {at}; wall time at the client) beside production's mean {} (server execution time) (×{ratio:.2}){flag}",
        ms(replay_ms),
        ms(prod_ms)
    )
}

fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.3} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_far_faster_than_production_is_flagged_and_a_close_one_is_not() {
        let close = line("by_customer", 12.0, 10.0, 5, "work_mem=4MB");
        assert_eq!(
            close,
            "by_customer: replay median 12.000 ms (5 trials, work_mem=4MB; wall time at the client) beside production's mean 10.000 ms (server execution time) (×1.20)"
        );
        // A round trip is not "slower": 0.15 ms against a 0.018 ms server time.
        let trip = line("point", 0.146, 0.018, 5, "x");
        assert!(!trip.contains("slower"), "{trip}");
        let fast = line("one", 0.01, 0.5, 5, "the server's settings");
        assert!(
            fast.contains("×50 faster here than on production"),
            "{fast}"
        );
        let slow = line("one", 400.0, 10.0, 5, "x");
        assert!(slow.contains("×40 slower here"), "{slow}");
    }
}
