//! A growth run's measured steps and the seconds of each write and read of one version (the
//! lab's `samples`).

use super::GrowthReport;
use crate::experiment::lab::samples::{READ_SECONDS, Sample, WRITE_SECONDS, shown, with_settings};

pub(super) fn samples(b: &GrowthReport) -> Vec<Sample> {
    let mut steps: Vec<_> = b.steps.iter().filter(|s| !s.projected).collect();
    steps.sort_by_key(|s| (s.design, s.versions, s.combo));
    let mut out = Vec::new();
    for s in steps {
        let set = shown(&s.settings);
        let at = with_settings(
            format!("{} · {} versions", s.design.as_str(), s.versions),
            &set,
        );
        let each = |all: &Vec<f64>, median: Option<f64>| -> Vec<f64> {
            if all.is_empty() {
                median.into_iter().collect()
            } else {
                all.clone()
            }
        };
        let writes = each(&s.write_repeats, s.write_seconds);
        let reads = each(&s.read_repeats, s.read_seconds);
        let key = if set.is_empty() {
            format!("{}|{}", s.design.as_str(), s.versions)
        } else {
            format!("{}|{}|{set}", s.design.as_str(), s.versions)
        };
        for (metric, values) in [(WRITE_SECONDS, writes), (READ_SECONDS, reads)] {
            if values.is_empty() {
                continue;
            }
            out.push(Sample {
                key: format!("{key}|{}", metric.name),
                label: format!("{at} · {}", metric.name.trim_end_matches(" seconds")),
                metric,
                values,
            });
        }
    }
    out
}
