//! A tune on sampled data says which of its results may not carry to the full tables. The
//! workload's runs name the imported tables their plans read (`data: … 10% sample …`, see
//! [`crate::experiment::query`]); memory settings are the ones a sample misleads: a sort or
//! hash that fits in `work_mem` on a tenth of the rows spills on all of them, and a
//! sample's working set fits a cache the whole table does not.

use super::decide::Decision;
use super::state::TuneState;

/// The settings whose best value depends on how much data there is.
pub(crate) const MEMORY: [&str; 5] = [
    "work_mem",
    "maintenance_work_mem",
    "shared_buffers",
    "effective_cache_size",
    "hash_mem_multiplier",
];

/// Keep the sampled tables a run's notes name (once each) in `sampled`.
pub(crate) fn record(sampled: &mut Vec<String>, notes: &[String]) {
    for n in notes {
        let Some(data) = n.strip_prefix("data: ") else {
            continue;
        };
        if data.contains("% sample") && !sampled.iter().any(|s| s == data) {
            sampled.push(data.to_string());
        }
    }
}

/// The sentence for `tune.sql` and `tune.md`; None when no sampled table was read.
pub(crate) fn sentence(st: &TuneState) -> Option<String> {
    sentence_of(&st.sampled, &st.decisions)
}

fn sentence_of(sampled: &[String], decisions: &[Decision]) -> Option<String> {
    if sampled.is_empty() {
        return None;
    }
    let searched: Vec<String> = decisions
        .iter()
        .filter(|d| MEMORY.contains(&d.setting.as_str()))
        .map(|d| {
            if d.value == d.start {
                format!("{} (stays {})", d.setting, d.start)
            } else {
                format!("{} ({} → {})", d.setting, d.start, d.value)
            }
        })
        .collect();
    let which = if searched.is_empty() {
        "no memory setting was searched here, but pgtune's memory values measured beside it carry the same caveat".to_string()
    } else {
        format!(
            "the memory settings' results ({}) may not carry to the full tables",
            searched.join(", ")
        )
    };
    Some(format!(
        "sampled data: the workload read {}; {which}: a sort or hash that fits in work_mem on a sample can spill on the whole table, and a sample's working set fits a cache the whole table does not; measure them again on the full tables before relying on them",
        sampled.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::decide::Why;

    #[test]
    fn a_sample_is_named_with_the_memory_settings_it_may_mislead() {
        let mut sampled = Vec::new();
        assert_eq!(sentence_of(&sampled, &[]), None);
        record(
            &mut sampled,
            &[
                "data: public.orders imported from x (PostgreSQL 15), snapshot 2026-01-01 00:00:00 UTC: 1000 rows, 10% sample (bernoulli, seed 42)".into(),
                "data: public.customers imported from x (PostgreSQL 15), snapshot 2026-01-01 00:00:00 UTC: 10 rows, all rows".into(),
                "a note".into(),
            ],
        );
        assert_eq!(sampled.len(), 1);
        let decisions = vec![
            Decision {
                setting: "work_mem".into(),
                start: "4MB".into(),
                value: "32MB".into(),
                why: Why::Better,
                comparison: None,
                confidence: 0.95,
                rounds: 5,
                trials: 10,
            },
            Decision {
                setting: "jit".into(),
                start: "on".into(),
                value: "on".into(),
                why: Why::NotShown,
                comparison: None,
                confidence: 0.95,
                rounds: 5,
                trials: 10,
            },
        ];
        let s = sentence_of(&sampled, &decisions).unwrap();
        assert!(
            s.contains("public.orders") && s.contains("10% sample"),
            "{s}"
        );
        assert!(
            s.contains("work_mem (4MB → 32MB)") && !s.contains("jit"),
            "{s}"
        );
        assert!(!s.contains("customers"), "{s}");
    }
}
