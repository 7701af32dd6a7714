//! A tune's rounds keep the cache warm between them. A `SET` between two configurations does
//! not empty shared_buffers nor the OS page cache (only a restart empties shared_buffers), so a
//! tune's round need not warm each configuration up again: that warm-up is one whole untimed
//! execution of every statement, and on a workload whose pass takes 25 s it doubled the cost of
//! every configuration. With [`KeptWarm`] in the spec, a configuration entered while the cache
//! is warm skips the warm-up (and takes a plain `EXPLAIN`, nothing run, instead of
//! `EXPLAIN ANALYZE`) of the statements known to be slow; fast ones still run their short
//! warm-up, which also sizes their batches. A restart makes the cache cold again: the next
//! configuration warms up in full. The run counts both, for the tune's report.

use serde::{Deserialize, Serialize};

/// A statement at least this slow per execution runs one execution per trial whatever the
/// configuration (its batch cannot be sized bigger), so its warm-up only warms the cache.
pub(crate) const SLOW_S: f64 = 0.5;

/// How a tune's round keeps the cache warm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeptWarm {
    /// The cache is warm when the run starts: an earlier round read the data and nothing
    /// restarted the server since.
    pub warm_at_start: bool,
    /// The statements an earlier round measured at [`SLOW_S`] or more per execution under
    /// every configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slow: Vec<String>,
}

impl KeptWarm {
    /// Whether statement `name`'s warm-up (and analyzed plan) is skipped while the cache is
    /// `warm`.
    pub(crate) fn skips(&self, warm: bool, name: &str) -> bool {
        warm && self.slow.iter().any(|s| s == name)
    }
}

/// How a run's configurations were warmed, recorded with the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmCount {
    /// Configurations entered with a warm-up of every statement (the first, and each after a
    /// restart).
    pub warmups: u32,
    /// Configurations entered on a warm cache whose slow statements skipped their warm-up.
    pub skipped: u32,
}

impl WarmCount {
    pub(crate) fn is_empty(&self) -> bool {
        *self == WarmCount::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_slow_statements_on_a_warm_cache_skip_their_warm_up() {
        let k = KeptWarm {
            warm_at_start: true,
            slow: vec!["report".into()],
        };
        assert!(k.skips(true, "report"));
        assert!(!k.skips(false, "report"), "a cold cache warms up");
        assert!(!k.skips(true, "lookup"), "a fast statement sizes its batch");
    }
}
