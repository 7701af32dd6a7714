//! The time budget. The clock counts everything from the moment the tune starts — reading
//! the server, preparing data, restarts, trials, the confirmation — and goes on from where a
//! resumed tune left off. The runner never starts a round it expects not to finish, and
//! cancels the running one at the deadline, so the budget is overrun by at most the cleanup
//! of one cancelled trial.

use std::time::{Duration, Instant};

/// The budget and the clock.
#[derive(Debug, Clone)]
pub struct Budget {
    pub total: Duration,
    /// Spent by earlier sessions of a resumed tune.
    pub spent_before: Duration,
    started: Instant,
}

impl Budget {
    pub fn new(total: Duration, spent_before: Duration) -> Budget {
        Budget::since(Instant::now(), total, spent_before)
    }

    /// A budget whose clock started at `started` (the command's start: reading the server
    /// and probing the disk count too).
    pub fn since(started: Instant, total: Duration, spent_before: Duration) -> Budget {
        Budget {
            total,
            spent_before,
            started,
        }
    }

    pub fn spent(&self) -> Duration {
        self.spent_before + self.started.elapsed()
    }

    pub fn remaining(&self) -> Duration {
        self.total.saturating_sub(self.spent())
    }

    /// When the budget runs out.
    pub fn deadline(&self) -> Instant {
        self.started + self.total.saturating_sub(self.spent_before)
    }

    pub fn is_out(&self) -> bool {
        self.remaining().is_zero()
    }

    /// The share of the budget spent, 0..=1 (for a bar).
    pub fn fraction(&self) -> f64 {
        if self.total.is_zero() {
            return 1.0;
        }
        (self.spent().as_secs_f64() / self.total.as_secs_f64()).min(1.0)
    }
}

/// How long a pass of the workload takes, from the rounds so far (wall time of a whole run,
/// restarts and preparation included, per configuration it ran).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pace {
    /// (wall seconds of a run, passes it ran).
    pub runs: Vec<(f64, usize)>,
}

impl Pace {
    pub fn record(&mut self, seconds: f64, passes: usize) {
        if passes > 0 {
            self.runs.push((seconds, passes));
        }
    }

    /// Seconds per pass: the largest seen over the last few runs (a cautious guess).
    pub fn per_pass(&self) -> Option<f64> {
        self.runs
            .iter()
            .rev()
            .take(5)
            .map(|(s, n)| s / *n as f64)
            .max_by(f64::total_cmp)
    }

    /// The expected wall time of a run of `passes` passes (None before the first run).
    pub fn estimate(&self, passes: usize) -> Option<Duration> {
        self.per_pass()
            .map(|p| Duration::from_secs_f64(p * passes as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_goes_on_from_an_earlier_session() {
        let b = Budget::new(Duration::from_secs(60), Duration::from_secs(50));
        assert!(b.remaining() <= Duration::from_secs(10));
        assert!(b.deadline() <= Instant::now() + Duration::from_secs(10));
        let out = Budget::new(Duration::from_secs(60), Duration::from_secs(61));
        assert!(out.is_out());
        assert_eq!(out.fraction(), 1.0);
    }

    #[test]
    fn the_pace_is_the_slowest_recent_pass() {
        let mut p = Pace::default();
        assert_eq!(p.estimate(3), None);
        p.record(6.0, 3);
        p.record(3.0, 2);
        p.record(1.0, 0);
        assert_eq!(p.per_pass(), Some(2.0));
        assert_eq!(p.estimate(4), Some(Duration::from_secs(8)));
    }
}
