//! What makes a run "big" enough to ask before it starts, besides the disk it needs (see
//! [`super::preflight::CONFIRM_ABOVE`]): the time the history expects, the rows one trial
//! works on when there is no history to time it, and a memory setting larger than the
//! machine's memory. Each reason is a sentence; none is a refusal (the DBA may mean it).

use super::experiment::{Experiment, each_kind};
use super::spec::ExperimentSpec;
use crate::measure::units::{format_bytes, format_count, format_seconds, parse_size};

/// A run expected to take longer than this (the upper end of the history's estimate) asks.
pub(crate) const BIG_SECONDS: f64 = 5.0 * 60.0;

/// Without a history to time it, a trial on more rows than this asks.
pub(crate) const BIG_TRIAL_ROWS: u64 = 10_000_000;

/// The settings whose value is memory a server process may allocate.
pub(crate) const MEMORY_SETTINGS: [&str; 7] = [
    "maintenance_work_mem",
    "work_mem",
    "shared_buffers",
    "temp_buffers",
    "wal_buffers",
    "autovacuum_work_mem",
    "logical_decoding_work_mem",
];

/// Why `spec` is big, one sentence each; empty when it is not. `eta_high_s` is the upper end
/// of the history's estimate (None: no history), `ram` the memory of the server's machine
/// (None: not known here, e.g. a remote target).
pub fn reasons(spec: &ExperimentSpec, eta_high_s: Option<f64>, ram: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    match eta_high_s {
        Some(s) if s > BIG_SECONDS => out.push(format!(
            "it may take up to {}, more than {} minutes",
            format_seconds(s),
            BIG_SECONDS / 60.0
        )),
        Some(_) => {}
        None => {
            let rows = spec.estimate().trial_rows;
            if rows > BIG_TRIAL_ROWS {
                out.push(format!(
                    "one trial works on {} rows (more than {}) and no past run says how long that takes",
                    format_count(rows as f64),
                    format_count(BIG_TRIAL_ROWS as f64)
                ));
            }
        }
    }
    if let Some(ram) = ram {
        for (name, bytes, text) in memory_values(spec) {
            if bytes > ram {
                out.push(format!(
                    "{name} {text} is more than this machine's {} of memory: the server may fail to allocate it, or swap",
                    format_bytes(ram)
                ));
            }
        }
    }
    out
}

/// Every memory setting value the run will apply: (name, bytes, as written).
fn memory_values(spec: &ExperimentSpec) -> Vec<(String, u64, String)> {
    let mut out: Vec<(String, u64, String)> = each_kind!(spec, s => s.memory_values());
    for item in &spec.settings().items {
        if !MEMORY_SETTINGS.contains(&item.name.as_str()) {
            continue;
        }
        for v in &item.values {
            // A value without a unit is in the setting's own unit (kB or 8 kB blocks): the
            // server checks it; only a value with a unit is compared here.
            if let Ok(size) = parse_size(v) {
                out.push((item.name.clone(), size.bytes, v.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentKind;
    use crate::experiment::lab::spec::spec_of;

    const GB: u64 = 1 << 30;

    #[test]
    fn a_terabyte_of_maintenance_work_mem_on_a_small_host_is_named() {
        let spec = spec_of(
            ExperimentKind::IndexBuild,
            &[("rows", "10k"), ("mwm", "64MB,1TB")],
        );
        let r = reasons(&spec, Some(10.0), Some(23 * GB));
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(
            r[0].starts_with("maintenance_work_mem 1TB is more than"),
            "{r:?}"
        );
        assert!(reasons(&spec, Some(10.0), None).is_empty());
    }

    #[test]
    fn a_long_estimate_or_many_rows_without_one_is_big() {
        let small = spec_of(ExperimentKind::IndexBuild, &[("rows", "10k")]);
        assert!(reasons(&small, None, Some(23 * GB)).is_empty());
        assert_eq!(reasons(&small, Some(BIG_SECONDS + 1.0), None).len(), 1);
        let big = spec_of(ExperimentKind::IndexBuild, &[("rows", "50M")]);
        let r = reasons(&big, None, None);
        assert!(r[0].contains("50M rows"), "{r:?}");
        assert!(reasons(&big, Some(60.0), None).is_empty());
    }

    #[test]
    fn swept_memory_settings_are_compared_with_a_unit_only() {
        let spec = spec_of(
            ExperimentKind::IndexBuild,
            &[
                ("rows", "10k"),
                ("set", "shared_buffers=64GB,4096 fsync=on"),
            ],
        );
        let r = reasons(&spec, None, Some(23 * GB));
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].starts_with("shared_buffers 64GB"), "{r:?}");
    }
}
