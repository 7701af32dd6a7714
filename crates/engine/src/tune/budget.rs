//! The time budget. The clock counts everything from the moment the tune starts — reading
//! the server, preparing data, restarts, trials, the confirmation — and goes on from where a
//! resumed tune left off. The runner never starts a round it expects not to finish, and
//! cancels the running one at the deadline, so the budget is overrun by at most the cleanup
//! of one cancelled trial.

use std::time::{Duration, Instant};

/// The budget and the clock.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    pub total: Duration,
    /// Spent by earlier sessions of a resumed tune.
    pub spent_before: Duration,
    started: Instant,
}

impl Budget {
    #[cfg(test)]
    pub(crate) fn new(total: Duration, spent_before: Duration) -> Budget {
        Budget::since(Instant::now(), total, spent_before)
    }

    /// A budget whose clock started at `started` (the command's start: reading the server
    /// and probing the disk count too).
    pub(crate) fn since(started: Instant, total: Duration, spent_before: Duration) -> Budget {
        Budget {
            total,
            spent_before,
            started,
        }
    }

    pub(crate) fn spent(&self) -> Duration {
        self.spent_before + self.started.elapsed()
    }

    pub(crate) fn remaining(&self) -> Duration {
        self.total.saturating_sub(self.spent())
    }

    /// When the budget runs out.
    pub(crate) fn deadline(&self) -> Instant {
        self.started + self.total.saturating_sub(self.spent_before)
    }

    pub(crate) fn is_out(&self) -> bool {
        self.remaining().is_zero()
    }

    #[cfg(test)]
    /// The share of the budget spent, 0..=1 (for a bar).
    pub(crate) fn fraction(&self) -> f64 {
        if self.total.is_zero() {
            return 1.0;
        }
        (self.spent().as_secs_f64() / self.total.as_secs_f64()).min(1.0)
    }
}

/// How long a run of the workload takes, learnt from the runs so far and re-estimated after
/// each. A run's wall time is split into its passes' own timed work (the trials) and the rest
/// (connecting, applying settings, restarts, warm-up): the work is counted per pass, the rest
/// per configuration the run applied. The first run also prepares the data (a setup of 30 s
/// for a workload whose pass takes 15 s); that one-off is kept apart and never charged to a
/// pass, so the budget is spent on the workload.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pace {
    /// Every run so far, in order.
    pub runs: Vec<PaceRun>,
}

/// One run's clock.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PaceRun {
    /// Wall seconds of the whole run.
    pub wall_s: f64,
    /// Passes of the workload it measured (one per configuration).
    pub passes: usize,
    /// Seconds of those passes' own trials.
    pub work_s: f64,
}

/// Runs the pace looks back over: recent enough to follow a workload that speeds up or slows
/// down with the values raced, enough to not follow one noisy run.
const RECENT: usize = 5;

impl Pace {
    pub(crate) fn record(&mut self, wall_s: f64, passes: usize, work_s: f64) {
        if passes > 0 {
            self.runs.push(PaceRun {
                wall_s,
                passes,
                work_s: work_s.clamp(0.0, wall_s),
            });
        }
    }

    /// Seconds of timed work per pass: the largest of the recent runs (a cautious guess, since
    /// the values still raced include the slow ones).
    pub(crate) fn per_pass(&self) -> Option<f64> {
        self.recent()
            .map(|r| r.work_s / r.passes as f64)
            .max_by(f64::total_cmp)
    }

    /// Seconds per configuration besides the work (settings, restarts, warm-up): the median of
    /// the recent runs, the first run's (which prepared the data) left out once another exists.
    pub(crate) fn overhead(&self) -> Option<f64> {
        let mut v: Vec<f64> = self
            .recent()
            .map(|r| (r.wall_s - r.work_s).max(0.0) / r.passes as f64)
            .collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    }

    /// The first run's one-off preparation (its overhead beyond what later runs needed), once a
    /// later run shows what a run costs without it.
    pub(crate) fn setup_s(&self) -> Option<f64> {
        let first = self.runs.first()?;
        let usual = self.overhead()?;
        (self.runs.len() > 1)
            .then(|| ((first.wall_s - first.work_s) - usual * first.passes as f64).max(0.0))
    }

    fn recent(&self) -> impl Iterator<Item = &PaceRun> {
        let skip_first = usize::from(self.runs.len() > 1);
        let start = self.runs.len().saturating_sub(RECENT).max(skip_first);
        self.runs[start..].iter()
    }

    /// The expected wall time of a run of `passes` passes (None before the first run).
    pub(crate) fn estimate(&self, passes: usize) -> Option<Duration> {
        let (work, rest) = (self.per_pass()?, self.overhead()?);
        Some(Duration::from_secs_f64((work + rest) * passes as f64))
    }

    /// The pace in words, for the report.
    pub(crate) fn describe(&self, fmt: impl Fn(f64) -> String) -> String {
        let (Some(work), Some(rest)) = (self.per_pass(), self.overhead()) else {
            return "unknown (no run finished)".into();
        };
        let mut s = format!(
            "{} of timed work per pass (wall clock of its trials, the slowest of the last {} runs) + {} per configuration for settings, restarts and warm-up",
            fmt(work),
            self.recent().count(),
            fmt(rest)
        );
        if let Some(setup) = self.setup_s().filter(|s| *s >= 0.5) {
            s.push_str(&format!(
                "; the first run's preparation ({}) is counted apart",
                fmt(setup)
            ));
        }
        s
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
    fn the_pace_counts_work_per_pass_and_keeps_the_first_runs_setup_apart() {
        let mut p = Pace::default();
        assert_eq!(p.estimate(3), None);
        // The first run: 30 s of setup, then one pass of 15 s of trials and 1 s of settings.
        p.record(46.0, 1, 15.0);
        // Alone, it is all there is to go on: its whole overhead counts.
        assert_eq!(p.estimate(1), Some(Duration::from_secs(46)));
        assert_eq!(p.setup_s(), None);
        // Then two runs of three passes each: 15 s and 16 s of work a pass, 1 s of settings.
        p.record(48.0, 3, 45.0);
        p.record(51.0, 3, 48.0);
        p.record(1.0, 0, 0.0);
        assert_eq!(p.per_pass(), Some(16.0));
        assert_eq!(p.overhead(), Some(1.0));
        // A run of three passes is three passes of 17 s, not one pass of 51 s nor 46 s each.
        assert_eq!(p.estimate(3), Some(Duration::from_secs(51)));
        assert_eq!(p.setup_s(), Some(30.0));
        let text = p.describe(|s| format!("{s:.0} s"));
        assert!(text.contains("16 s of timed work per pass"), "{text}");
        assert!(text.contains("preparation (30 s)"), "{text}");
    }
}
