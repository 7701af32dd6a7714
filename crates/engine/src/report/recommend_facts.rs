//! Why a setting of an index-build order was slower than the best, told from what its trials
//! recorded — the sort's method and bytes, the parallel workers launched, the host's load
//! beside the build — never from the direction of the effect. Where no recorded fact differs
//! in the direction of the effect, the sentence says the effect is unexplained.

use crate::experiment::index_build::{IndexBuildReport, IndexTrial, OrderSummary, SortMethod};
use crate::measure::units::format_bytes;

/// How the builds of one setting sorted.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sorted {
    /// Every build in memory: the median kB used.
    InMemory(u64),
    /// Every build spilled: the median kB written to disk.
    Spilled(u64),
    /// Some of each.
    Mixed,
    /// No build recorded its sort.
    Unknown,
}

/// What the builds of one setting recorded.
#[derive(Debug, Clone)]
struct Facts {
    label: String,
    sorted: Sorted,
    /// Fewest and most parallel workers launched.
    launched: (u32, u32),
    /// Builds marked as beside a busy neighbour, of all builds.
    busy: (usize, usize),
}

fn median_u64(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn facts(b: &IndexBuildReport, o: &OrderSummary, label: &str) -> Option<Facts> {
    let r = o.setting(label)?;
    let trials: Vec<&IndexTrial> = b
        .trials
        .iter()
        .filter(|t| {
            !t.warmup
                && t.order == o.order
                && t.combo == r.combo
                && t.workers_requested == r.workers
                && t.maintenance_work_mem_bytes == r.maintenance_work_mem_bytes
        })
        .collect();
    if trials.is_empty() {
        return None;
    }
    let sorts: Vec<Option<SortMethod>> = trials.iter().map(|t| t.sort_fact()).collect();
    let mem: Vec<u64> = sorts
        .iter()
        .filter_map(|s| match s {
            Some(SortMethod::InMemory { kb }) => Some(*kb),
            _ => None,
        })
        .collect();
    let disk: Vec<u64> = sorts
        .iter()
        .filter_map(|s| match s {
            Some(SortMethod::External { disk_kb }) => Some(*disk_kb),
            _ => None,
        })
        .collect();
    let sorted = if mem.len() == trials.len() {
        Sorted::InMemory(median_u64(mem))
    } else if disk.len() == trials.len() {
        Sorted::Spilled(median_u64(disk))
    } else if !mem.is_empty() && !disk.is_empty() {
        Sorted::Mixed
    } else {
        Sorted::Unknown
    };
    let launched = trials.iter().map(|t| t.workers_launched);
    Some(Facts {
        label: label.to_string(),
        sorted,
        launched: (
            launched.clone().min().unwrap_or(0),
            launched.max().unwrap_or(0),
        ),
        busy: (
            trials.iter().filter(|t| t.beside_busy_neighbour()).count(),
            trials.len(),
        ),
    })
}

/// "A", "A and B", "A, B and C" (never a range: every label is named).
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn kb(k: u64) -> String {
    format_bytes(k * 1024)
}

/// "1MB, 4MB and 16MB spilled to disk (median 9.57 MB written); 64MB sorted in memory (31.1
/// MB)": the recorded sorts of every setting of the order.
fn sorts_sentence(all: &[Facts]) -> String {
    let mut parts = Vec::new();
    let of = |pick: &dyn Fn(&Sorted) -> Option<u64>| -> (Vec<String>, Vec<u64>) {
        all.iter()
            .filter_map(|f| pick(&f.sorted).map(|k| (f.label.clone(), k)))
            .unzip()
    };
    let (spilled, disk) = of(&|s| match s {
        Sorted::Spilled(k) => Some(*k),
        _ => None,
    });
    let (memory, used) = of(&|s| match s {
        Sorted::InMemory(k) => Some(*k),
        _ => None,
    });
    let range = |v: &[u64]| {
        let (lo, hi) = (v.iter().min(), v.iter().max());
        match (lo, hi) {
            (Some(l), Some(h)) if l == h => kb(*l),
            (Some(l), Some(h)) => format!("{} to {}", kb(*l), kb(*h)),
            _ => String::new(),
        }
    };
    if !spilled.is_empty() {
        parts.push(format!(
            "{} spilled to disk ({} written, median)",
            list(&spilled),
            range(&disk)
        ));
    }
    if !memory.is_empty() {
        parts.push(format!(
            "{} sorted in memory ({} used, median)",
            list(&memory),
            range(&used)
        ));
    }
    let mixed: Vec<String> = all
        .iter()
        .filter(|f| f.sorted == Sorted::Mixed)
        .map(|f| f.label.clone())
        .collect();
    if !mixed.is_empty() {
        parts.push(format!("{} spilled in some builds only", list(&mixed)));
    }
    let unknown: Vec<String> = all
        .iter()
        .filter(|f| f.sorted == Sorted::Unknown)
        .map(|f| f.label.clone())
        .collect();
    if !unknown.is_empty() {
        parts.push(format!("{} recorded no sort method", list(&unknown)));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(" The builds' sorts: {}.", parts.join("; "))
}

/// Why `w` was slower than `best`, from the facts that differ in the effect's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    FewerWorkers,
    Spilled,
    BusyHost,
    /// It sorted in memory where the best spilled: the sort method would favour it.
    InMemoryYetSlower,
    Unexplained,
}

fn why(w: &Facts, best: &Facts) -> Why {
    let busy_share = |f: &Facts| f.busy.0 as f64 / f.busy.1.max(1) as f64;
    if w.launched.1 < best.launched.0 {
        Why::FewerWorkers
    } else if matches!(w.sorted, Sorted::Spilled(_) | Sorted::Mixed)
        && matches!(best.sorted, Sorted::InMemory(_))
    {
        Why::Spilled
    } else if busy_share(w) > busy_share(best) {
        Why::BusyHost
    } else if matches!(w.sorted, Sorted::InMemory(_)) && matches!(best.sorted, Sorted::Spilled(_)) {
        Why::InMemoryYetSlower
    } else {
        Why::Unexplained
    }
}

/// The sentences after an order's finding: the recorded sorts, then, for the settings shown
/// slower than the best, what recorded fact explains it or that none does. Empty when nothing
/// was shown slower.
pub(crate) fn explain(b: &IndexBuildReport, o: &OrderSummary) -> String {
    let f = &o.finding;
    let Some(best) = f.best.as_deref().and_then(|l| facts(b, o, l)) else {
        return String::new();
    };
    if f.shown_worse.is_empty() {
        return String::new();
    }
    let all: Vec<Facts> = f
        .settings
        .iter()
        .filter_map(|s| facts(b, o, &s.label))
        .collect();
    let mut out = sorts_sentence(&all);
    let mut by_why: std::collections::BTreeMap<Why, Vec<&Facts>> = Default::default();
    for w in f
        .shown_worse
        .iter()
        .filter_map(|l| all.iter().find(|x| &x.label == l))
    {
        by_why.entry(why(w, &best)).or_default().push(w);
    }
    let b_label = &best.label;
    for (why, ws) in by_why {
        let names = list(&ws.iter().map(|w| w.label.clone()).collect::<Vec<_>>());
        let verb = if ws.len() == 1 { "was" } else { "were" };
        out.push_str(&match why {
            Why::FewerWorkers => format!(
                " {names} launched fewer parallel workers than the best ({b_label}, {} launched): fewer workers explain why {names} {verb} slower.",
                best.launched.0
            ),
            Why::Spilled => format!(
                " Spilling to disk explains why {names} {verb} slower than the best ({b_label}), whose builds kept their sort in memory."
            ),
            Why::BusyHost => format!(
                " More of {names}'s builds ran beside a busy neighbour than the best's ({b_label}): host load, not the setting, may explain why {names} {verb} slower."
            ),
            Why::InMemoryYetSlower => format!(
                " {names} {verb} slower than the best ({b_label}) although the best wrote its sort to disk and {names} kept {} in memory: no recorded fact explains it (the sort method would favour {names}; the workers launched and the host load do not differ).",
                if ws.len() == 1 { "its" } else { "theirs" }
            ),
            Why::Unexplained => format!(
                " No recorded fact explains why {names} {verb} slower than the best ({b_label}): the sort method, the workers launched and the host load do not differ in that direction."
            ),
        });
    }
    out
}
