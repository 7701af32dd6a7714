//! How many executions a statement-mode trial is. A 0.03 ms lookup timed once is all noise
//! (a scheduler tick, a page of the client's output, a cache line): as hyperfine and pgbench
//! do, a trial of a fast statement is a batch of executions long enough to measure, and what
//! is compared is the time per execution (the batch's timed total ÷ its executions).
//!
//! The batch is calibrated on the untimed warm-up: every combination of the sweep runs the
//! statement until [`TARGET`] of work (or [`CAP`] executions) before any trial, and the
//! statement's batch is then fixed for the whole run — the same under every combination, so
//! that like is compared with like. It is sized for the fastest combination, `TARGET` ÷ its
//! time per execution (50 ms: thousands of executions of a sub-millisecond statement, far
//! past a 4 ms scheduler tick), held so that the slowest combination's trial stays within
//! [`SLOWEST`] (a 450× slower combination does not need thousands of executions to be
//! measured, and must not cost minutes a trial), between 1 and [`CAP`], and rounded down to
//! 1, 2, 5, 10, 20, 50, … so that the same command on the same data picks the same batch.
//!
//! One execution per trial where a batch would change what is measured: cold-cache trials
//! (each starts after a restart), and statements that write (as written each execution
//! changes what the next one sees; rolled back, each leaves dead row versions behind).

use serde::{Deserialize, Serialize};

/// Work the warm-up runs (and the fastest combination's trial is sized to), in seconds.
pub(crate) const TARGET: f64 = 0.050;
/// The slowest combination's trial is not made longer than this by batching, in seconds.
pub(crate) const SLOWEST: f64 = 2.0;
/// Executions per trial, and per warm-up, at the most.
pub(crate) const CAP: u32 = 10_000;

/// A statement's trial sizing, as the report records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// The statement's index.
    pub statement: usize,
    pub name: String,
    /// Executions per trial, the same under every combination.
    pub executions: u32,
    /// The warm-up's time per execution at the fastest and the slowest combination (None:
    /// not calibrated, one execution by rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_s: Option<f64>,
    /// Why one execution per trial, where that is a rule rather than the calibration.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why_one: String,
}

/// The largest of 1, 2, 5, 10, 20, 50, … not above `n` (1 for anything below 2).
fn round_down_125(n: f64) -> u32 {
    if n.is_nan() || n < 2.0 {
        return 1;
    }
    let mut best = 1u32;
    let mut decade = 1u32;
    while decade <= CAP {
        for m in [1, 2, 5] {
            let v = decade.saturating_mul(m);
            if (v as f64) <= n && v <= CAP {
                best = best.max(v);
            }
        }
        decade = decade.saturating_mul(10);
    }
    best
}

/// Executions per trial for a statement whose warm-up took `fastest` and `slowest` seconds
/// per execution at its fastest and slowest combination.
pub(crate) fn executions(fastest: f64, slowest: f64) -> u32 {
    if !(fastest > 0.0 && fastest.is_finite()) {
        return 1;
    }
    let want = TARGET / fastest;
    let room = if slowest > 0.0 && slowest.is_finite() {
        SLOWEST / slowest
    } else {
        want
    };
    round_down_125(want.min(room).min(CAP as f64))
}

/// Whether the warm-up has run enough: `n` executions taking `total` seconds.
pub(crate) fn warmed(n: u32, total: f64) -> bool {
    n >= CAP || total >= TARGET
}

impl Sizing {
    /// `q: a trial is 500 executions (~21 ms at the fastest combination, ~1.0 s at the
    /// slowest)`, or the rule that makes it one.
    pub(crate) fn sentence(&self) -> String {
        let fmt = super::summary::format_time;
        if !self.why_one.is_empty() {
            return format!("{}: a trial is 1 execution ({})", self.name, self.why_one);
        }
        let n = self.executions;
        let times = match (self.fastest_s, self.slowest_s) {
            (Some(f), Some(s)) if (s / f) > 1.5 => format!(
                "~{} at the fastest combination, ~{} at the slowest",
                fmt(f * n as f64),
                fmt(s * n as f64)
            ),
            (Some(f), _) => format!("~{}", fmt(f * n as f64)),
            _ => String::new(),
        };
        format!(
            "{}: a trial is {n} execution{} ({times}), the same under every combination, sized on the warm-up; its time is the time per execution",
            self.name,
            if n == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_statement_gets_a_batch_and_a_slow_one_a_single_execution() {
        // 0.04 ms: 50 ms is 1250 executions, rounded down to 1000.
        assert_eq!(executions(0.000_04, 0.000_05), 1000);
        // Past the cap.
        assert_eq!(executions(0.000_001, 0.000_001), CAP);
        // 80 ms: one execution is the trial.
        assert_eq!(executions(0.080, 0.084), 1);
        // 450× apart: held by the slowest (2 s / 25 ms = 80, rounded to 50).
        assert_eq!(executions(0.000_055, 0.025), 50);
        // A slowest beyond SLOWEST alone: one execution.
        assert_eq!(executions(0.000_05, 5.0), 1);
        assert_eq!(executions(0.0, 1.0), 1);
        assert_eq!(executions(f64::NAN, 1.0), 1);
    }

    #[test]
    fn batches_are_round_so_noise_in_the_warm_up_rarely_moves_them() {
        for (n, want) in [
            (1.9, 1),
            (2.0, 2),
            (4.99, 2),
            (5.0, 5),
            (99.0, 50),
            (1250.0, 1000),
        ] {
            assert_eq!(round_down_125(n), want, "{n}");
        }
        // ±20% around 0.04 ms lands on the same batch.
        assert_eq!(
            executions(0.000_036, 0.000_04),
            executions(0.000_044, 0.000_04)
        );
    }

    #[test]
    fn the_warm_up_stops_at_the_target_or_the_cap() {
        assert!(!warmed(1, 0.001));
        assert!(warmed(3, TARGET));
        assert!(warmed(CAP, 0.001));
    }

    #[test]
    fn the_sentence_says_the_batch_and_its_length() {
        let s = Sizing {
            statement: 0,
            name: "q".into(),
            executions: 50,
            fastest_s: Some(0.000_05),
            slowest_s: Some(0.025),
            why_one: String::new(),
        };
        assert_eq!(
            s.sentence(),
            "q: a trial is 50 executions (~2.50 ms at the fastest combination, ~1.2 s at the slowest), the same under every combination, sized on the warm-up; its time is the time per execution"
        );
        let cold = Sizing {
            why_one: "cache=cold: each trial starts after a restart".into(),
            executions: 1,
            fastest_s: None,
            slowest_s: None,
            ..s
        };
        assert_eq!(
            cold.sentence(),
            "q: a trial is 1 execution (cache=cold: each trial starts after a restart)"
        );
    }
}
