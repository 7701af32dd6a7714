//! What reads on a standby found, in the verdicts' words: per combination the statements the
//! standby cancelled for recovery conflicts (median per trial with its interval), and what the
//! primary paid — growth of the churned tables, dead tuples its VACUUM had to keep, how far
//! the standby held its xmin back; then, for each pair of combinations that differ in one
//! setting only, the two side by side: "hot_standby_feedback=on vs off: 0 [0–0] vs 37 [30–41]
//! statements cancelled per trial; the primary's tables grew +12 MB more (dead tuples kept
//! ×4.1)".

use super::trial::StandbyReadTrial;
use crate::experiment::query::{ComboInfo, clients_name};
use crate::measure::interval::{Estimate, estimate};
use crate::measure::units::{format_bytes, format_count, format_seconds};

/// One combination's trials, summed up.
struct Side<'a> {
    info: &'a ComboInfo,
    n: usize,
    cancelled: Estimate,
    growth: Estimate,
    dead: Estimate,
    xmin: Option<i64>,
    kinds: Vec<(String, i64)>,
    p50_ms: Option<Estimate>,
    /// The clients' transactions/s (None: one session read).
    tps: Option<Estimate>,
    caught_up: Estimate,
}

fn side<'a>(info: &'a ComboInfo, trials: &[StandbyReadTrial], confidence: f64) -> Option<Side<'a>> {
    let mine: Vec<&StandbyReadTrial> = trials.iter().filter(|t| t.combo == info.combo).collect();
    let of = |f: &dyn Fn(&StandbyReadTrial) -> f64| {
        estimate(&mine.iter().map(|t| f(t)).collect::<Vec<_>>(), confidence)
    };
    let mut kinds: Vec<(String, i64)> = Vec::new();
    for t in &mine {
        for (k, v) in &t.conflicts {
            match kinds.iter_mut().find(|(n, _)| n == k) {
                Some((_, sum)) => *sum += v,
                None => kinds.push((k.clone(), *v)),
            }
        }
    }
    let p50: Vec<f64> = mine
        .iter()
        .filter_map(|t| t.latency_ms.map(|l| l.p50))
        .collect();
    Some(Side {
        info,
        n: mine.len(),
        cancelled: of(&|t| t.cancelled as f64)?,
        growth: of(&|t| (t.bytes_after - t.bytes_before) as f64)?,
        dead: of(&|t| t.dead_after as f64)?,
        xmin: mine.iter().filter_map(|t| t.xmin_age_max).max(),
        kinds,
        p50_ms: estimate(&p50, confidence),
        tps: estimate(
            &mine.iter().filter_map(|t| t.tps).collect::<Vec<_>>(),
            confidence,
        ),
        caught_up: of(&|t| t.caught_up_s)?,
    })
}

/// A count's median (whole: a median of two may fall between) with its interval.
fn count(e: &Estimate) -> String {
    if e.n > 1 {
        format!(
            "{} [{}–{}]",
            format_count(e.median.round()),
            format_count(e.ci_low),
            format_count(e.ci_high)
        )
    } else {
        format_count(e.median.round())
    }
}

fn signed_bytes(b: f64) -> String {
    format!(
        "{}{}",
        if b < 0.0 { "−" } else { "+" },
        format_bytes(b.abs() as u64)
    )
}

fn line(s: &Side, standby: &str) -> String {
    let kinds = if s.kinds.is_empty() {
        String::new()
    } else {
        let k: Vec<String> = s.kinds.iter().map(|(k, v)| format!("{k} {v}")).collect();
        format!(
            "; pg_stat_database_conflicts over the trials: {}",
            k.join(", ")
        )
    };
    let mut latency = s.p50_ms.map_or(String::new(), |e| {
        format!(", statements' p50 {:.2} ms", e.median)
    });
    if let Some(e) = s.tps {
        latency.push_str(&format!(
            ", {}",
            crate::experiment::query::summary::format_tps(e.median)
        ));
    }
    let replay = format!(
        ", replay caught up {} after the trial",
        format_seconds(s.caught_up.median)
    );
    format!(
        "{} on {standby}: {} statements cancelled by recovery conflicts per trial ({} trial{}){kinds}{latency}{replay}; on the primary the churned tables grew {} per trial, {} dead tuples left after VACUUM, xmin {}",
        s.info.label,
        count(&s.cancelled),
        s.n,
        if s.n == 1 { "" } else { "s" },
        signed_bytes(s.growth.median),
        count(&s.dead),
        s.xmin
            .map_or("not held back (no feedback)".into(), |a| format!(
                "held back up to {} transactions by the standby's feedback",
                format_count(a as f64)
            ))
    )
}

/// The one setting two combinations differ in (None: none, or more than one).
fn differ_in(a: &ComboInfo, b: &ComboInfo) -> Option<(String, String, String)> {
    if a.index_value != b.index_value || a.settings.len() != b.settings.len() {
        return None;
    }
    let diffs: Vec<(String, String, String)> = a
        .settings
        .iter()
        .zip(&b.settings)
        .filter(|((na, va), (nb, vb))| na == nb && va != vb)
        .map(|((n, va), (_, vb))| (n.clone(), va.clone(), vb.clone()))
        .collect();
    let same_names = a
        .settings
        .iter()
        .zip(&b.settings)
        .all(|((na, _), (nb, _))| na == nb);
    (same_names && diffs.len() == 1).then(|| diffs[0].clone())
}

fn dead_ratio(a: &Estimate, b: &Estimate) -> String {
    if b.median > 0.0 {
        format!("×{:.1}", a.median / b.median)
    } else {
        format!("{} vs {}", format_count(a.median), format_count(b.median))
    }
}

fn pair(a: &Side, b: &Side, name: &str, va: &str, vb: &str) -> String {
    let rest: Vec<String> = a
        .info
        .settings
        .iter()
        .filter(|(n, _)| n != name)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let at = if rest.is_empty() {
        String::new()
    } else {
        format!(" ({})", rest.join(", "))
    };
    let more = a.growth.median - b.growth.median;
    format!(
        "{name}={va} vs {vb}{at}: {} vs {} statements cancelled per trial; the primary's churned tables grew {} {} (dead tuples kept {})",
        count(&a.cancelled),
        count(&b.cancelled),
        signed_bytes(more).trim_start_matches('+'),
        if more >= 0.0 { "more" } else { "less" },
        dead_ratio(&a.dead, &b.dead)
    )
}

/// The findings of a run's trials on `standby`: per client count (with `--clients`; one
/// session otherwise) each combination, then each pair that differs in one setting.
pub(crate) fn findings(
    combos: &[ComboInfo],
    trials: &[StandbyReadTrial],
    standby: &str,
    confidence: f64,
) -> Vec<String> {
    let mut counts: Vec<Option<u32>> = Vec::new();
    for t in trials {
        if !counts.contains(&t.clients) {
            counts.push(t.clients);
        }
    }
    let mut out = Vec::new();
    for n in counts {
        let mine: Vec<StandbyReadTrial> =
            trials.iter().filter(|t| t.clients == n).cloned().collect();
        let who = n.map_or(String::new(), |n| format!("{}: ", clients_name(n)));
        let sides: Vec<Side> = combos
            .iter()
            .filter_map(|c| side(c, &mine, confidence))
            .collect();
        out.extend(sides.iter().map(|s| format!("{who}{}", line(s, standby))));
        for (i, a) in sides.iter().enumerate() {
            for b in &sides[i + 1..] {
                let Some((name, va, vb)) = differ_in(a.info, b.info) else {
                    continue;
                };
                // `on` first, so the feedback's cost reads as what it adds.
                out.push(format!(
                    "{who}{}",
                    if vb == "on" {
                        pair(b, a, &name, &vb, &va)
                    } else {
                        pair(a, b, &name, &va, &vb)
                    }
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn combo(c: usize, feedback: &str) -> ComboInfo {
        ComboInfo {
            combo: c,
            label: format!("hot_standby_feedback={feedback}"),
            index_value: 0,
            settings: vec![
                ("hot_standby_feedback".into(), feedback.into()),
                ("max_standby_streaming_delay".into(), "10ms".into()),
            ],
        }
    }

    fn trial(
        combo: usize,
        cancelled: u64,
        dead: i64,
        grew: i64,
        xmin: Option<i64>,
    ) -> StandbyReadTrial {
        StandbyReadTrial {
            combo,
            cancelled,
            dead_after: dead,
            bytes_before: 1 << 20,
            bytes_after: (1 << 20) + grew,
            xmin_age_max: xmin,
            conflicts: if cancelled > 0 {
                BTreeMap::from([("snapshot".to_string(), cancelled as i64)])
            } else {
                BTreeMap::new()
            },
            ..StandbyReadTrial::default()
        }
    }

    #[test]
    fn feedback_on_against_off_in_words() {
        let combos = [combo(0, "off"), combo(1, "on")];
        let trials = [
            trial(0, 37, 100, 0, None),
            trial(1, 0, 410, 12 << 20, Some(900)),
            trial(0, 30, 100, 0, None),
            trial(1, 0, 410, 12 << 20, Some(1000)),
            trial(0, 41, 100, 0, None),
            trial(1, 0, 410, 12 << 20, Some(800)),
        ];
        let f = findings(&combos, &trials, "pglab_standby_1", 0.95);
        assert_eq!(f.len(), 3, "{f:#?}");
        assert!(
            f[0].starts_with("hot_standby_feedback=off on pglab_standby_1: 37 [30–41] statements cancelled by recovery conflicts per trial (3 trials); pg_stat_database_conflicts over the trials: snapshot 108"),
            "{}",
            f[0]
        );
        assert!(
            f[0].contains("xmin not held back (no feedback)"),
            "{}",
            f[0]
        );
        assert!(
            f[1].contains("xmin held back up to 1000 transactions"),
            "{}",
            f[1]
        );
        assert_eq!(
            f[2],
            "hot_standby_feedback=on vs off (max_standby_streaming_delay=10ms): 0 [0–0] vs 37 [30–41] statements cancelled per trial; the primary's churned tables grew 12 MB more (dead tuples kept ×4.1)"
        );
    }

    #[test]
    fn combinations_differing_in_two_settings_are_not_paired() {
        let mut b = combo(1, "on");
        b.settings[1].1 = "30s".into();
        let f = findings(
            &[combo(0, "off"), b],
            &[trial(0, 1, 0, 0, None), trial(1, 0, 5, 0, Some(3))],
            "s",
            0.95,
        );
        assert_eq!(f.len(), 2, "{f:#?}");
        // One trial: no interval to give; no dead tuples on one side: both counts said.
        assert!(f[0].contains(": 1 statements cancelled"), "{}", f[0]);
        assert_eq!(
            dead_ratio(
                &estimate(&[5.0], 0.95).unwrap(),
                &estimate(&[0.0], 0.95).unwrap()
            ),
            "5 vs 0"
        );
    }

    #[test]
    fn each_client_count_is_said_apart() {
        let combos = [combo(0, "off"), combo(1, "on")];
        let with = |t: StandbyReadTrial, n: u32, tps: f64| StandbyReadTrial {
            clients: Some(n),
            tps: Some(tps),
            ..t
        };
        let trials = [
            with(trial(0, 4, 0, 0, None), 1, 0.5),
            with(trial(1, 0, 300, 0, Some(20)), 1, 2.0),
            with(trial(0, 16, 0, 0, None), 4, 0.0),
            with(trial(1, 0, 310, 0, Some(30)), 4, 8.0),
        ];
        let f = findings(&combos, &trials, "pglab_standby_1", 0.95);
        assert_eq!(f.len(), 6, "{f:#?}");
        // The counts of 1 and of 4 clients are not pooled.
        assert!(
            f[0].starts_with("1 client: hot_standby_feedback=off"),
            "{}",
            f[0]
        );
        assert!(f[0].contains(": 4 statements cancelled"), "{}", f[0]);
        assert!(f[1].contains("2.0 tps"), "{}", f[1]);
        assert!(
            f[2].starts_with("1 client: hot_standby_feedback=on vs off"),
            "{}",
            f[2]
        );
        assert!(
            f[3].starts_with("4 clients: hot_standby_feedback=off"),
            "{}",
            f[3]
        );
        assert!(f[3].contains(": 16 statements cancelled"), "{}", f[3]);
        assert!(f[5].contains("0 vs 16 statements cancelled"), "{}", f[5]);
    }
}
