//! What a growth run costs on disk before anything is measured (conservative per-row sizes),
//! and which steps therefore fit: only those are filled, the rest are projected.

use super::key::KeyShape;
use super::kinds::GrowMode;
use super::spec::GrowthSpec;
use crate::experiment::lab::field::Cost;

/// Conservative btree bytes per row before anything is measured (POSTGRES-NOTES: 31–37 B
/// for (int8, int8); single int8 columns are smaller, deduplicated ones much smaller). A
/// (uuid, uuid) entry is 16 bytes wider.
pub(crate) fn index_bytes_per_row(shape: KeyShape) -> u64 {
    match shape {
        KeyShape::Int => 36,
        KeyShape::Uuid => 52,
    }
}

impl GrowthSpec {
    /// Disk a run needs once every design holds `versions` versions, before anything is
    /// measured (conservative per-row sizes), with `from` versions already there.
    pub(crate) fn cost_at(&self, versions: u64, from: u64) -> Cost {
        let mut table = 0;
        let mut index = 0;
        let mut largest_index = 0;
        let mut written = 0;
        let per_row_index = index_bytes_per_row(self.key_shape);
        for &d in &self.designs {
            let rows = self.rows(d, versions);
            let new_rows = rows - self.rows(d, from.min(versions));
            let heap = rows * d.heap_bytes_per_row(self.key_shape);
            let per_index = rows * per_row_index;
            let n = self.index_names(d).len() as u64;
            table += heap;
            index += per_index * n;
            largest_index = largest_index.max(per_index * n.min(1));
            written += new_rows * (d.heap_bytes_per_row(self.key_shape) + per_row_index * n);
        }
        // The content table: one small row per unit ever seen.
        let content_units = self.units + self.churn_per_version() * versions;
        table += content_units * 48;
        let temp = match self.grow_mode {
            GrowMode::Rebuild => largest_index,
            GrowMode::Keep => 0,
        };
        Cost {
            trials: self.samples(),
            rows: self.pairs(versions),
            table_bytes: table,
            index_bytes: index,
            temp_bytes: temp,
            wal_bytes: wal_allowance(written, DEFAULT_MAX_WAL),
            // The runner's control session (advisory lock), the writer and the watcher.
            connections: 3,
            ..Cost::default()
        }
    }

    /// The steps that will be filled when `free` bytes are free (None: unknown, all of them
    /// up to the fill limit), by the conservative per-row sizes.
    pub fn planned_steps(&self, free: Option<u64>) -> Vec<u64> {
        let mut out = Vec::new();
        let mut prev = 0;
        for &s in &self.steps {
            if self.fill_limit.is_some_and(|l| s > l) {
                break;
            }
            if let Some(free) = free
                && self.cost_at(s, prev).disk_bytes() > free
            {
                break;
            }
            out.push(s);
            prev = s;
        }
        out
    }

    /// The cost of the largest step that will be filled given `free` bytes (the guard then
    /// checks it); steps beyond are projected, not run.
    pub(crate) fn estimate_with_free(&self, free: Option<u64>) -> Cost {
        let planned = self.planned_steps(free);
        let (at, from) = match planned.len() {
            0 => (self.steps.first().copied().unwrap_or(0), 0),
            n => (planned[n - 1], if n > 1 { planned[n - 2] } else { 0 }),
        };
        let mut c = self.cost_at(at, from);
        c.trials = self.samples();
        c
    }

    /// The estimate when every step fits (see `estimate_with_free`).
    pub(crate) fn estimate(&self) -> Cost {
        self.estimate_with_free(None)
    }
}

/// max_wal_size when the server's is unknown (PostgreSQL's default, 1GB).
pub(crate) const DEFAULT_MAX_WAL: u64 = 1024 * 1024 * 1024;

/// WAL kept on disk while `written` bytes are loaded: what was written, up to about three
/// times max_wal_size (checkpoints recycle the rest; the limit is soft under heavy writes).
pub(crate) fn wal_allowance(written: u64, max_wal: u64) -> u64 {
    written.min(max_wal.saturating_mul(3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::lab::spec::{ExperimentKind, ExperimentSpec};

    fn parse(pairs: &[(&str, &str)]) -> GrowthSpec {
        let p: crate::experiment::lab::field::ParamText = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match ExperimentKind::Growth.parse_spec(&p) {
            Ok(ExperimentSpec::Growth(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn estimate_covers_only_steps_that_fit() {
        let s = parse(&[]);
        let all = s.estimate_with_free(None);
        assert_eq!(all.rows, 1_000_000_000);
        // About 110-120 GB for a billion rows with four indexes (POSTGRES-NOTES).
        let gb = (all.table_bytes + all.index_bytes) as f64 / 1e9;
        assert!((100.0..250.0).contains(&gb), "{gb} GB");
        let free = 66 * 1024 * 1024 * 1024;
        let planned = s.planned_steps(Some(free));
        assert_eq!(planned, [0, 100, 1000, 10_000]);
        let c = s.estimate_with_free(Some(free));
        assert_eq!(c.rows, 100_000_000);
        assert!(c.disk_bytes() <= free);
        let limited = parse(&[("fill-limit", "1000")]);
        assert_eq!(limited.planned_steps(None), [0, 100, 1000]);
        assert_eq!(limited.estimate().rows, 10_000_000);
    }
}
