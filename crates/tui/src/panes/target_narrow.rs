//! The Target pane when it is narrower than two readings a row (80 columns): the settings the
//! experiments turn packed tightly enough to all show (`work_mem`, `fsync`,
//! `synchronous_commit`, `wal_level` besides the buffers), the role beside the database, and
//! the slower-moving readings (temp, cache hit) on one line without their sparklines.

use crate::server::ServerSnapshot;
use crate::tui::text::width;

/// The settings a narrow pane always tries to show, in the order of need.
pub(crate) const NEEDED: [&str; 6] = [
    "work_mem",
    "fsync",
    "synchronous_commit",
    "wal_level",
    "shared_buffers",
    "maintenance_work_mem",
];

/// The role, as the state line names it: "role dba", "role postgres (superuser)".
pub(crate) fn role(s: &ServerSnapshot) -> String {
    if s.superuser {
        format!("role {} (superuser)", s.user)
    } else {
        format!("role {}", s.user)
    }
}

/// `items` (the needed ones first) in at most `rows` rows of `cols`, each going into the first
/// row with room (the longest first, so that short ones fill the gaps); within a row they keep
/// their order. What fits nowhere is left out, the needed ones last.
pub(crate) fn fit_rows(items: &[String], cols: usize, rows: usize, sep: &str) -> Vec<String> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    // Needed ones are the first NEEDED.len() items: placed first, longest first.
    let needed = NEEDED.len().min(items.len());
    order[..needed].sort_by_key(|&i| std::cmp::Reverse(width(&items[i])));
    let mut placed: Vec<Vec<usize>> = vec![Vec::new(); rows];
    let row_w = |r: &[usize]| -> usize {
        r.iter().map(|&i| width(&items[i])).sum::<usize>() + width(sep) * r.len().saturating_sub(1)
    };
    for i in order {
        let add = width(&items[i]);
        if let Some(r) = placed.iter_mut().find(|r| {
            let w = row_w(r);
            if r.is_empty() {
                add <= cols
            } else {
                w + width(sep) + add <= cols
            }
        }) {
            r.push(i);
        }
    }
    placed
        .into_iter()
        .filter(|r| !r.is_empty())
        .map(|mut r| {
            r.sort_unstable();
            r.iter()
                .map(|&i| items[i].as_str())
                .collect::<Vec<_>>()
                .join(sep)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_needed_setting_fits_in_three_rows_of_39() {
        let items: Vec<String> = [
            "work_mem 4MB",
            "fsync on",
            "synchronous_commit on",
            "wal_level replica",
            "shared_buffers 128MB",
            "maintenance_work_mem 64MB",
            "max_parallel_maint 2",
        ]
        .map(String::from)
        .to_vec();
        let rows = fit_rows(&items, 39, 3, "  ");
        assert_eq!(rows.len(), 3, "{rows:?}");
        let all = rows.join(" | ");
        for n in NEEDED {
            assert!(all.contains(n), "{n} missing: {rows:?}");
        }
        assert!(rows.iter().all(|r| width(r) <= 39), "{rows:?}");
    }
}
