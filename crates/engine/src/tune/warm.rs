//! Warm once per cache. A tune's rounds are runs of the workload one after the other on the
//! same server: a `SET` between two configurations leaves the cache as it was, so only a
//! restart (or the very first run) needs a warm-up. The tune tells each query round whether
//! the cache is warm when it starts and which statements are slow (their warm-up is a whole
//! untimed execution; [`crate::experiment::query::kept_warm`]), and counts the warm-ups and
//! restarts the rounds paid, for the report. Other kinds of workload keep their own warm-up
//! rules (an ingest or an index build warms up only after a restart already).

use serde::{Deserialize, Serialize};

use crate::experiment::query::kept_warm::{KeptWarm, SLOW_S};
use crate::experiment::{ExperimentSpec, ReportBody, RunReport};

/// What the tune knows of the cache between rounds, and what warming it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// The last round read the data and nothing restarted the server after it.
    pub warm: bool,
    /// Statements measured at [`SLOW_S`] or more per execution under every configuration.
    #[serde(default)]
    pub slow: Vec<String>,
    /// Configurations entered with a warm-up of every statement.
    #[serde(default)]
    pub warmups: u32,
    /// Configurations entered on a warm cache, the slow statements' warm-up skipped.
    #[serde(default)]
    pub skipped: u32,
    /// Restarts of the sandbox the rounds made (a setting that needs one, and putting the
    /// server's own value back).
    #[serde(default)]
    pub restarts: u32,
}

/// What a finished round says about the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundWarmth {
    pub warmups: u32,
    pub skipped: u32,
    pub restarts: u32,
}

impl RoundWarmth {
    pub(crate) fn of(report: &RunReport) -> RoundWarmth {
        let restarts = report
            .whatif
            .as_ref()
            .map_or(0, |w| w.restarts.len() as u32);
        let (warmups, skipped) = match &report.body {
            ReportBody::Query(q) => (q.warm.warmups, q.warm.skipped),
            _ => (0, 0),
        };
        RoundWarmth {
            warmups,
            skipped,
            restarts,
        }
    }
}

impl Cache {
    /// A query round's spec with the cache as it stands (other kinds as they are).
    pub(crate) fn keep(&self, spec: &mut ExperimentSpec) {
        if let ExperimentSpec::Query(q) = spec
            && !q.throughput()
        {
            q.kept_warm = Some(KeptWarm {
                warm_at_start: self.warm,
                slow: self.slow.clone(),
            });
        }
    }

    /// After a round: its warm-ups and restarts counted; the cache warm unless a restart
    /// emptied it (a restart at the run's end puts the server's own value back); the slow
    /// statements those slow under every configuration measured.
    pub(crate) fn after(&mut self, w: RoundWarmth, statements: &[Vec<(String, f64)>]) {
        self.warmups += w.warmups;
        self.skipped += w.skipped;
        self.restarts += w.restarts;
        self.warm = w.restarts == 0;
        let mut slow: Vec<String> = Vec::new();
        for (i, combo) in statements.iter().enumerate() {
            let here: Vec<String> = combo
                .iter()
                .filter(|(_, s)| *s >= SLOW_S)
                .map(|(n, _)| n.clone())
                .collect();
            slow = if i == 0 {
                here
            } else {
                slow.into_iter().filter(|n| here.contains(n)).collect()
            };
        }
        if !statements.is_empty() {
            self.slow = slow;
        }
    }

    /// "3 warm-ups (the first, and after each restart), 14 configurations on a warm cache
    /// without one, 2 restarts".
    pub(crate) fn sentence(&self) -> String {
        format!(
            "{} warm-up{} of every statement (the first round's, and after each restart), {} configuration{} entered on a warm cache without one, {} restart{}",
            self.warmups,
            plural(self.warmups),
            self.skipped,
            plural(self.skipped),
            self.restarts,
            plural(self.restarts)
        )
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn a_restart_makes_the_cache_cold_and_slow_statements_are_slow_everywhere() {
        let mut c = Cache::default();
        let one = RoundWarmth {
            warmups: 1,
            skipped: 3,
            restarts: 0,
        };
        c.after(
            one,
            &[
                secs(&[("report", 9.0), ("lookup", 0.01)]),
                secs(&[("report", 0.7), ("lookup", 0.02)]),
            ],
        );
        assert!(c.warm);
        assert_eq!(c.slow, vec!["report".to_string()]);
        c.after(
            RoundWarmth {
                warmups: 2,
                skipped: 0,
                restarts: 2,
            },
            &[secs(&[("report", 0.2), ("lookup", 0.01)])],
        );
        assert!(!c.warm, "a restart empties shared_buffers");
        assert!(c.slow.is_empty(), "fast under one configuration: warmed");
        assert_eq!((c.warmups, c.skipped, c.restarts), (3, 3, 2));
        assert!(c.sentence().starts_with("3 warm-ups"), "{}", c.sentence());
    }
}
