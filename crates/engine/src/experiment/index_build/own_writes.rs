//! What an index-build on an existing table writes on the server, said before it runs and
//! measured from the table (its row estimate, its columns' `pg_stats` widths, its heap):
//! the copies it makes, the index it builds on them, the WAL of both (every `CREATE INDEX`
//! writes its whole index to WAL at `wal_level` replica or logical), and the disk all that
//! needs at its peak. On a server pglab did not start the run writes only when asked
//! (`--writes lab`), and never below the free space it needs.

use tokio_postgres::Client;

use super::own_table::OwnTableInfo;
use super::spec::{IndexBuildSpec, Order};
use super::table_spec::OwnTable;
use crate::measure::units::format_bytes;
use crate::server::error::describe_query_error;

/// Heap bytes a row of `width` data bytes takes: the 24-byte tuple header, the data
/// aligned to 8, and its 4-byte line pointer.
fn heap_row(width: u64) -> u64 {
    (24 + width).div_ceil(8) * 8 + 4
}

/// Btree leaf bytes a key of `width` data bytes takes at the default fill factor (90%).
fn index_row(width: u64) -> u64 {
    ((8 + width).div_ceil(8) * 8 + 4) * 10 / 9
}

/// The writes of one run, in bytes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WritePlan {
    /// All the copies together (none: the run builds on the table itself).
    pub copies: u64,
    /// One index on the largest dataset.
    pub index: u64,
    /// Builds of that index (trials and warm-ups).
    pub builds: usize,
    pub wal: u64,
    /// Disk at the peak: copies, one index and its sort, and the WAL the server keeps
    /// (at most `max_wal_size`).
    pub need: u64,
    /// How the copies' size was found.
    pub basis: &'static str,
}

impl WritePlan {
    /// "writes a copy of about 17 MB (from …), an index of about 2 MB built 12 times and
    /// about 41 MB of WAL; it needs about 22 MB free".
    pub(crate) fn sentence(&self) -> String {
        let copies = if self.copies == 0 {
            "no copy (it builds on the table itself)".to_string()
        } else {
            format!(
                "copies of about {} ({})",
                format_bytes(self.copies),
                self.basis
            )
        };
        format!(
            "{copies}, an index of about {} built {} time{}, about {} of WAL; it needs about {} of free disk",
            format_bytes(self.index),
            self.builds,
            if self.builds == 1 { "" } else { "s" },
            format_bytes(self.wal),
            format_bytes(self.need)
        )
    }

    /// On a server pglab did not start without `--writes lab`: the sentence that refuses.
    pub(crate) fn refusal(&self, table: &crate::sql::names::TableName) -> String {
        format!(
            "index-build on {table} writes on this server, which pglab did not start: {}; pass --writes lab to let it (all of it in the lab schema, dropped at the end), or import the table into the sandbox (pglab sandbox import --from … --table {table}) and build there",
            self.sentence()
        )
    }

    /// Refuse when the server's filesystem has less free than the run needs.
    pub(crate) fn check_free(&self, free: Option<u64>) -> Result<(), String> {
        match free {
            Some(free) if self.need > free => Err(format!(
                "not enough disk: the run needs about {} ({}) but only {} is free on the server's filesystem: use a smaller sample (--sample PCT)",
                format_bytes(self.need),
                self.sentence(),
                format_bytes(free)
            )),
            _ => Ok(()),
        }
    }
}

/// What the run of `spec` on `info` writes; on a server pglab did not start without
/// `--writes lab`, the sentence that refuses it.
pub(crate) async fn plan(
    c: &Client,
    spec: &IndexBuildSpec,
    own: &OwnTable,
    info: &OwnTableInfo,
) -> Result<WritePlan, String> {
    let builds = spec.trials() + if spec.warmup { spec.datasets() } else { 0 };
    let w = estimate(c, info, own, builds).await?;
    if !info.on_sandbox && !own.writes {
        return Err(w.refusal(&info.table));
    }
    Ok(w)
}

/// Measure what the run on `info` will write with `builds` index builds.
pub(crate) async fn estimate(
    c: &Client,
    info: &OwnTableInfo,
    own: &OwnTable,
    builds: usize,
) -> Result<WritePlan, String> {
    let q = |e: tokio_postgres::Error| describe_query_error(&e);
    let t = &info.table;
    let r = c
        .query_one(
            "SELECT (SELECT sum(avg_width)::int8 FROM pg_stats
                      WHERE schemaname = $1 AND tablename = $2 AND attname = ANY($3)),
                    (SELECT count(*) FROM pg_stats
                      WHERE schemaname = $1 AND tablename = $2 AND attname = ANY($3)),
                    current_setting('wal_level'), pg_size_bytes(current_setting('max_wal_size'))",
            &[&t.schema, &t.name, &info.columns],
        )
        .await
        .map_err(q)?;
    let (width, known): (Option<i64>, i64) = (r.get(0), r.get(1));
    let (wal_level, max_wal): (String, i64) = (r.get(2), r.get(3));
    let width = width.filter(|_| known as usize == info.columns.len());
    let heap = info.heap_bytes.max(0) as u64;
    let orders = own.orders(info.on_sandbox);
    let shares: Vec<f64> = orders
        .iter()
        .filter_map(|o| match o {
            Order::Copy(ppm) => Some(*ppm as f64 / 1e6),
            _ => None,
        })
        .collect();
    let largest = own.sample.map(|p| p / 100.0).unwrap_or(1.0);
    let copied: f64 = shares.iter().sum();
    // Whole rows on the sandbox (the heap's size); the indexed columns elsewhere.
    let (per_copy, basis) = match (info.on_sandbox, info.rows, width) {
        (true, ..) => (heap, "whole rows: the heap's size"),
        (false, Some(rows), Some(w)) => (
            rows * heap_row(w as u64),
            "the indexed columns: rows × their pg_stats width",
        ),
        _ => (
            heap,
            "no statistics on the columns, so the heap's size, an upper bound: ANALYZE the table for a closer figure",
        ),
    };
    let rows = info
        .rows
        .unwrap_or_else(|| heap / heap_row(width.unwrap_or(8) as u64).max(1));
    let index = (rows as f64 * largest) as u64 * index_row(width.unwrap_or(8) as u64);
    let copies = (per_copy as f64 * copied) as u64;
    let wal = if wal_level == "minimal" {
        0
    } else {
        copies + index * builds as u64
    };
    Ok(WritePlan {
        copies,
        index,
        builds,
        wal,
        need: copies + 2 * index + wal.min(max_wal.max(0) as u64),
        basis,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_take_header_alignment_and_pointer() {
        assert_eq!(heap_row(4), 36);
        assert_eq!(heap_row(8), 36);
        assert_eq!(heap_row(9), 44);
        assert_eq!(index_row(4), 22);
    }

    #[test]
    fn a_plan_refuses_below_its_need_and_says_its_writes() {
        let p = WritePlan {
            copies: 17 << 20,
            index: 2 << 20,
            builds: 12,
            wal: 41 << 20,
            need: 62 << 20,
            basis: "b",
        };
        let s = p.sentence();
        assert!(s.contains("copies of about 17 MB (b)"), "{s}");
        assert!(s.contains("built 12 times"), "{s}");
        assert!(p.check_free(Some(63 << 20)).is_ok());
        assert!(p.check_free(None).is_ok());
        let e = p.check_free(Some(10 << 20)).unwrap_err();
        assert!(
            e.starts_with("not enough disk: the run needs about 62 MB"),
            "{e}"
        );
        let r = p.refusal(&crate::sql::names::TableName::new("public", "customers"));
        assert!(r.contains("pass --writes lab"), "{r}");
    }
}
