//! The content of every version, generated deterministically from a seed so that both
//! designs (and every replay) hold exactly the same logical content.
//!
//! Version 1 holds units 0..U. Each later version removes `k` units chosen at random among
//! the current ones and adds `k` fresh units (ids never used before), so every version holds
//! exactly U units and ids grow by `k` per version.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What one version changed.
#[derive(Debug, Default, Clone)]
pub(crate) struct Delta {
    pub version: i64,
    pub added: Vec<i64>,
    pub removed: Vec<i64>,
}

pub(crate) struct Churn {
    units: u64,
    per_version: u64,
    rng: ChaCha8Rng,
    alive: Vec<i64>,
    next_id: i64,
    version: i64,
}

impl Churn {
    pub(crate) fn new(units: u64, per_version: u64, seed: u64) -> Churn {
        Churn {
            units,
            per_version: per_version.min(units),
            rng: ChaCha8Rng::seed_from_u64(seed),
            alive: Vec::new(),
            next_id: 0,
            version: 0,
        }
    }

    /// The last version generated (0 before the first).
    pub(crate) fn version(&self) -> i64 {
        self.version
    }

    /// Content ids used so far (all ids are below this).
    pub(crate) fn next_id(&self) -> i64 {
        self.next_id
    }

    /// The content of the current version, in no particular order.
    pub(crate) fn alive(&self) -> &[i64] {
        &self.alive
    }

    /// Generate the next version, recording what changed in `delta` (cleared first).
    pub(crate) fn advance(&mut self, delta: &mut Delta) {
        delta.added.clear();
        delta.removed.clear();
        self.version += 1;
        delta.version = self.version;
        if self.version == 1 {
            self.alive.extend(0..self.units as i64);
            delta.added.extend(0..self.units as i64);
            self.next_id = self.units as i64;
            return;
        }
        for _ in 0..self.per_version {
            let i = self.rng.random_range(0..self.alive.len());
            delta.removed.push(self.alive.swap_remove(i));
        }
        for _ in 0..self.per_version {
            self.alive.push(self.next_id);
            delta.added.push(self.next_id);
            self.next_id += 1;
        }
    }

    /// Advance to `version` without recording anything.
    pub(crate) fn skip_to(&mut self, version: i64) {
        let mut d = Delta::default();
        while self.version < version {
            self.advance(&mut d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_version_holds_u_units_and_replays_identically() {
        let mut a = Churn::new(100, 5, 7);
        let mut b = Churn::new(100, 5, 7);
        let mut d = Delta::default();
        let mut live: BTreeSet<i64> = BTreeSet::new();
        for v in 1..=50 {
            a.advance(&mut d);
            assert_eq!(d.version, v);
            for r in &d.removed {
                assert!(live.remove(r), "removed {r} was not present");
            }
            live.extend(&d.added);
            assert_eq!(live.len(), 100);
            let set: BTreeSet<i64> = a.alive().iter().copied().collect();
            assert_eq!(set, live);
        }
        assert_eq!(a.next_id(), 100 + 49 * 5);
        b.skip_to(50);
        assert_eq!(a.alive(), b.alive());
        let mut c = Churn::new(100, 0, 1);
        c.skip_to(10);
        assert_eq!(c.alive().len(), 100);
        assert_eq!(c.next_id(), 100);
    }
}
