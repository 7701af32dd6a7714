//! The confirmation round at the end: the whole tuned set against the starting
//! configuration, one pass each per round, the order alternating (AB, BA, AB, …), then one
//! verdict at the plain confidence (a single comparison decided in advance needs no
//! correction).

use serde::{Deserialize, Serialize};

use crate::measure::rules::Rules;
use crate::measure::verdict::{Better, Comparison, compare};

/// Rounds the confirmation wants: 5 against 5 reaches 95% with room to spare.
pub const ROUNDS: usize = 5;
/// Fewer than this and no verdict is possible at 95% (4 against 4 reaches 97%).
pub const MIN_ROUNDS: usize = 4;

/// The confirmation's trials and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirm {
    /// The tuned settings (only those that differ from the start).
    pub tuned: Vec<(String, String)>,
    pub start_trials: Vec<f64>,
    pub tuned_trials: Vec<f64>,
    pub rounds: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

/// Which side runs first in round `r`: the tuned set in even rounds.
pub fn tuned_first(round: usize) -> bool {
    round.is_multiple_of(2)
}

impl Confirm {
    pub fn new(tuned: Vec<(String, String)>) -> Confirm {
        Confirm {
            tuned,
            start_trials: Vec::new(),
            tuned_trials: Vec::new(),
            rounds: 0,
            comparison: None,
        }
    }

    pub fn add_round(&mut self, start: f64, tuned: f64) {
        self.start_trials.push(start);
        self.tuned_trials.push(tuned);
        self.rounds += 1;
    }

    /// The tuned set against the start, at the plain confidence.
    pub fn judge(&mut self, better: Better, rules: &Rules) {
        self.comparison = compare(&self.tuned_trials, &self.start_trials, better, rules);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::verdict::Verdict;

    #[test]
    fn order_alternates_and_the_verdict_is_for_the_tuned_set() {
        assert!(tuned_first(0) && !tuned_first(1) && tuned_first(2));
        let mut c = Confirm::new(vec![("max_wal_size".into(), "4GB".into())]);
        for i in 0..ROUNDS {
            let n = [1.0, 0.99, 1.01, 0.995, 1.005][i];
            c.add_round(1000.0 * n, 1300.0 * n);
        }
        c.judge(Better::Higher, &Rules::default());
        let cmp = c.comparison.unwrap();
        assert_eq!(cmp.verdict, Verdict::Faster);
        assert!(cmp.level >= 0.95);
    }
}
