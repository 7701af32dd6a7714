//! How often pglab's verdict rules are wrong, measured on real trials.
//!
//! Input: index-build reports (`pglab run index-build … --format json`) of A/A sweeps — two
//! settings that cannot differ (e.g. maintenance_work_mem 64MB and 65MB on a table whose
//! sort fits in both), each run with a fixed number of repeats. `benches/verdicts.sh`
//! produces them on the sandbox and passes the files here. For every run:
//!
//! - **A/A**: the first `N` trials of each setting compared as they are: a verdict of
//!   faster/slower is a false winner (goal ≤ 5% of pairs).
//! - **A/B**: the same trials with one side scaled by 1.2, a known true difference of 20%:
//!   how often it is found (goal ≥ 80%).
//! - **auto vs fixed**: replaying each run's trials in their real order, `--repeat auto`
//!   (start at 3 per setting, add one to each undecided setting, stop when decided or at the
//!   cap) against the fixed count: trials spent and whether the decisions agree.
//!
//! Run through `bash benches/verdicts.sh`; with no files it says how and exits (so that
//! `cargo test --all-targets` can build and run it).

use std::collections::BTreeMap;

use pglab::measure::finding::{SettingTrials, decide, needs_more};
use pglab::measure::rules::Rules;
use pglab::measure::verdict::{Better, Verdict, compare};

/// Trials per setting, in the order they ran.
struct Run {
    name: String,
    settings: Vec<(String, Vec<f64>)>,
}

fn load(path: &str) -> Result<Run, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
    let trials = v["trials"]
        .as_array()
        .ok_or_else(|| format!("{path}: no trials (is it an index-build report?)"))?;
    let mut by: BTreeMap<u64, (String, Vec<f64>)> = BTreeMap::new();
    for t in trials {
        if t["warmup"].as_bool() == Some(true) {
            continue;
        }
        let bytes = t["maintenance_work_mem_bytes"].as_u64().unwrap_or(0);
        let label = t["maintenance_work_mem"]
            .as_str()
            .unwrap_or("?")
            .to_string();
        let secs = t["seconds"]
            .as_f64()
            .ok_or(format!("{path}: a trial without seconds"))?;
        by.entry(bytes)
            .or_insert_with(|| (label, vec![]))
            .1
            .push(secs);
    }
    if by.len() != 2 {
        return Err(format!(
            "{path}: {} settings; an A/A run has exactly two",
            by.len()
        ));
    }
    Ok(Run {
        name: path.to_string(),
        settings: by.into_values().collect(),
    })
}

fn is_winner(v: Verdict) -> bool {
    matches!(v, Verdict::Faster | Verdict::Slower)
}

/// `--repeat auto` replayed on the recorded trials: (trials spent, the finding's verdict).
fn auto_replay(a: &[f64], b: &[f64], cap: usize, rules: &Rules) -> (usize, Option<Verdict>) {
    let mut n = [3usize.min(a.len()), 3usize.min(b.len())];
    loop {
        let st = [
            SettingTrials {
                label: "a".into(),
                cost_rank: 0,
                values: a[..n[0]].to_vec(),
            },
            SettingTrials {
                label: "b".into(),
                cost_rank: 1,
                values: b[..n[1]].to_vec(),
            },
        ];
        let more: Vec<usize> = needs_more(&st, Better::Lower, rules)
            .into_iter()
            .filter(|&i| n[i] < cap.min(if i == 0 { a.len() } else { b.len() }))
            .collect();
        if more.is_empty() {
            return (n[0] + n[1], decide(&st, Better::Lower, rules).verdict);
        }
        for i in more {
            n[i] += 1;
        }
    }
}

fn main() {
    let files: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if files.is_empty() {
        println!("verdicts: no reports given; run `bash benches/verdicts.sh`");
        return;
    }
    let per_side: usize = std::env::var("PER_SIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let rules = Rules::default();
    let mut runs = Vec::new();
    for f in &files {
        match load(f) {
            Ok(r) => runs.push(r),
            Err(e) => eprintln!("skipped {e}"),
        }
    }
    let (mut aa_false, mut ab_found, mut pairs) = (0, 0, 0);
    // [A/A, A/B]: trials auto spent, trials the fixed count spent, same verdict as fixed.
    let mut auto = [(0usize, 0usize, 0usize); 2];
    println!(
        "{:<28} {:>9} {:>9} {:>26} {:>26} {:>12}",
        "run", "A median", "B median", "A/A verdict", "A/B ×1.2 verdict", "auto trials"
    );
    for r in &runs {
        let (a, b) = (&r.settings[0].1, &r.settings[1].1);
        if a.len() < per_side || b.len() < per_side {
            eprintln!("skipped {}: fewer than {per_side} trials a side", r.name);
            continue;
        }
        pairs += 1;
        let (a5, b5) = (&a[..per_side], &b[..per_side]);
        let aa = compare(a5, b5, Better::Lower, &rules).expect("trials");
        let scaled: Vec<f64> = b5.iter().map(|x| x * 1.2).collect();
        let ab = compare(a5, &scaled, Better::Lower, &rules).expect("trials");
        aa_false += usize::from(is_winner(aa.verdict));
        ab_found += usize::from(ab.verdict == Verdict::Faster);
        let cap = a.len().min(b.len());
        let b_scaled: Vec<f64> = b.iter().map(|x| x * 1.2).collect();
        let mut spent_aa = 0;
        for (k, bb) in [b.as_slice(), b_scaled.as_slice()].into_iter().enumerate() {
            let full = decide(
                &[
                    SettingTrials {
                        label: "a".into(),
                        cost_rank: 0,
                        values: a[..cap].to_vec(),
                    },
                    SettingTrials {
                        label: "b".into(),
                        cost_rank: 1,
                        values: bb[..cap].to_vec(),
                    },
                ],
                Better::Lower,
                &rules,
            );
            let (spent, verdict) = auto_replay(a, bb, cap, &rules);
            auto[k].0 += spent;
            auto[k].1 += 2 * cap;
            auto[k].2 += usize::from(verdict == full.verdict);
            if k == 0 {
                spent_aa = spent;
            }
        }
        let name = std::path::Path::new(&r.name)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!(
            "{:<28} {:>9.4} {:>9.4} {:>26} {:>26} {:>12}",
            name,
            aa.a.median,
            aa.b.median,
            format!("{} ({:.3}×)", aa.verdict, aa.ratio),
            format!("{} ({:.3}×)", ab.verdict, ab.ratio),
            format!("{spent_aa} of {}", 2 * cap)
        );
    }
    if pairs == 0 {
        println!("no usable runs");
        return;
    }
    let pct = |k: usize, n: usize| 100.0 * k as f64 / n as f64;
    println!();
    println!(
        "A/A, {per_side} trials a side: false winners {aa_false} of {pairs} ({:.1}%; goal ≤ 5%)",
        pct(aa_false, pairs)
    );
    println!(
        "A/B ×1.2, {per_side} trials a side: found {ab_found} of {pairs} ({:.1}%; goal ≥ 80%)",
        pct(ab_found, pairs)
    );
    for (k, what) in ["A/A", "A/B ×1.2"].into_iter().enumerate() {
        let (spent, fixed, same) = auto[k];
        println!(
            "repeat auto vs a fixed count, {what}: {spent} trials against {fixed} ({:.0}%), the same verdict in {same} of {pairs} runs",
            pct(spent, fixed)
        );
    }
}
